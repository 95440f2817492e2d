/* A task's life-long counts (GET /metrics' counters), in memory that
 * outlives corral's process: the first piece of the one state of
 * docs/decisions.md, "corral outlives its own death".
 *
 * Records live in chunks, each a memfd mapped MAP_SHARED, and are
 * written in place by the plain stores that count (no syscall per
 * change, nothing written by polling). `corral upgrade` hands the
 * chunks' fds over and the new corral maps them again and finds each
 * task's record by its name; a restore after an unplanned death will
 * read the same memory from the fds the keeper holds.
 *
 * A record is taken at a task's first count (most tasks never count
 * anything: no room kept for them) and given back when the task goes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervisor/lifecycle/exit_tally.h"

/* What GET /metrics counts of a task over its whole life, where the part
 * that sees it does not keep it that long: a reload that rebuilds the
 * task (task_take_next_config) makes its pipes, probes and log file anew,
 * and a new cgroup's OOM counter starts at 0. Kept across that rebuild,
 * and across `corral upgrade`. */
struct task_counts {
	uint64_t oom_kills; /* processes of the task the OOM killer killed */
	uint64_t readiness_probe_failures, health_probe_failures;
	/* Lines dropped (log.mode: non-blocking) or lost (log.dir) by the
	 * pipes and log files the task had before its current ones. */
	uint64_t earlier_dropped_lines, earlier_lost_log_lines;
};

/* A full task name longer than this has its record on the heap: counted
 * all the same, but not handed over (config names are far shorter). */
#define TASK_RECORD_NAME_SIZE 256

enum task_record_state { TASK_RECORD_FREE = 0, TASK_RECORD_USED = 1 };

struct task_record {
	uint32_t state; /* enum task_record_state */
	uint32_t reserved;
	char name[TASK_RECORD_NAME_SIZE]; /* the task's full name, NUL-ended */
	struct task_counts counts;
	struct exit_tally exits; /* the runner's (runner.h) */
};

struct task_record_chunk;

struct task_records {
	struct task_record_chunk *chunks;
	size_t chunk_count;
};

void task_records_init(struct task_records *records);
/* Unmaps and closes every chunk. */
void task_records_free(struct task_records *records);

/* A zeroed record named `name`, never NULL: from a chunk, or from the
 * heap when no chunk can be made, the name is too long or `records` is
 * NULL (then it is not handed over). */
struct task_record *task_records_take(struct task_records *records, const char *name);
/* `record` is not counted in any more. */
void task_records_give_back(struct task_records *records, struct task_record *record);

/* The memfd of chunk `index` (< chunk_count), for the hand-over; -1 for
 * one in anonymous memory, which cannot go over. */
int task_records_chunk_fd(const struct task_records *records, size_t index);

/* Maps the chunks a previous corral handed over (`fds`, each a memfd):
 * their records become this corral's. 0, or -errno with `error` (nothing
 * kept, nothing changed in them). */
int task_records_adopt(struct task_records *records, const int *fds, size_t count, char *error,
		       size_t error_size);
/* Calls `visit` with every record in use (after task_records_adopt:
 * those handed over); a record no task claims is given back by the
 * caller. */
void task_records_visit(struct task_records *records,
			void (*visit)(void *context, struct task_record *record), void *context);
