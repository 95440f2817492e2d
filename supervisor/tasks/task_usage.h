/* A task's cgroup usage (CPU, memory, pids) as status replies give it,
 * with a cache so that a status of many tasks reads no cgroup file.
 *
 * Reading one task's usage opens and reads up to four files (cpu.stat,
 * memory.current, memory.peak, pids.current), and cpu.stat makes the
 * kernel gather per-CPU counters: 2-10 ms for 1000 tasks, which was two
 * thirds of a status reply (docs/benchmarks-history.md). A reply about one task
 * reads it unless the last reading is younger than TASK_USAGE_FRESH_MS
 * (then served with its age). A reply about many reads nothing: it
 * serves each task's last reading with its age, or no figures when there
 * is none since the task's run began or ended; the readings it found
 * missing or older than TASK_USAGE_REFRESH_MS are read again shortly
 * after the reply is out (30 ms later: the client is still reading and
 * printing it, control_commands.c), a batch of TASK_USAGE_REFRESH_BATCH
 * tasks per idle turn of the loop, so that a status after a long quiet
 * spell neither waits for 1000 reads nor holds up the requests behind
 * it. Nothing polls: an idle corral reads nothing. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isolation/cgroup_task.h"

#define TASK_USAGE_REFRESH_MS 1000
/* A reply about one task serves a reading younger than this, with its
 * age, instead of reading the files again: a client asking about one task
 * thousands of times a second (a monitor, a script in a loop) then costs
 * at most four readings a second, not the file reads on every request
 * (~7 us of the ~15-21 us of corral CPU a request took,
 * docs/benchmarks-history.md). 250 ms: a person running `corral status g/t` sees
 * figures no older than a blink, a poller every 0.5 s or slower still
 * gets a new reading each time, and `age_ms` tells a client computing a
 * rate from two readings how far apart they are. */
#define TASK_USAGE_FRESH_MS 250
/* A reply about many tasks reads, at most this many, the tasks that have
 * no reading at all (the first status after corral or their run started),
 * so that a person sees figures rather than `-` and "run it again": 64
 * reads are about 0.5 ms (8 us each), bounded however many tasks just
 * started; the rest wait for the refresh after the reply. Every later
 * reply serves them from the cache. */
#define TASK_USAGE_FIRST_READS_MAX 64
/* A status of many tasks that found readings stale has them read again
 * this long after its reply (control_commands.c says why). */
#define TASK_USAGE_REFRESH_DELAY_MS 30
/* About 0.13 ms of reads (open, read, close of a cgroup file: ~8 us a
 * task here). Small, because a batch runs whenever the loop finds nothing
 * ready, which includes a reply of 550 KB waiting for its client to make
 * room in the socket: each chunk of it may wait for one batch (64 tasks
 * a batch made a reply after a quiet spell 2-6 ms slower). */
#define TASK_USAGE_REFRESH_BATCH 16

struct task;
struct group;

struct task_usage {
	struct task_cgroup_stats stats;
	uint64_t read_at_ms; /* loop_now_ms() of the reading */
	bool valid;
};

/* The reading no longer says what the task does (its run began or ended,
 * its cgroup went): replies about many tasks show no figures until the
 * next reading. */
void task_usage_forget(struct task_usage *usage);

/* Reads the task's usage now and keeps it. */
const struct task_cgroup_stats *task_usage_read(struct task *task, uint64_t now_ms);

/* For a reply about one task: the kept reading when it is at most
 * TASK_USAGE_FRESH_MS old, with its age in *age_ms; else a reading made
 * now (*age_ms 0), kept for the next. */
const struct task_cgroup_stats *task_usage_recent(struct task *task, uint64_t now_ms,
						  uint64_t *age_ms);

/* For a reply about many tasks, which reads no file: the kept reading and
 * its age (*age_ms), or NULL when there is none. *stale is set when there
 * is none or it is older than TASK_USAGE_REFRESH_MS: the caller then has
 * it read once the reply is out (task_usage_refresh_some). */
const struct task_cgroup_stats *task_usage_cached(const struct task *task, uint64_t now_ms,
						  uint64_t *age_ms, bool *stale);

/* For a reply about many tasks: task_usage_cached's, or, for a task with
 * no reading at all, one made now while *first_reads_left lasts (the
 * reply sets it to TASK_USAGE_FIRST_READS_MAX at its start; a reading
 * made now is neither old nor stale). */
const struct task_cgroup_stats *task_usage_for_list(struct task *task, uint64_t now_ms,
						    size_t *first_reads_left, uint64_t *age_ms,
						    bool *stale);

/* Where a refresh pass over the groups' tasks has got to. */
struct task_usage_cursor {
	size_t group, task;
};

/* Reads again, from *cursor on, the readings of these groups' tasks that
 * are missing or older than TASK_USAGE_REFRESH_MS (tasks with a cgroup
 * only), at most `max_reads` of them, and moves *cursor past the tasks it
 * looked at. Returns true when the pass reached the last task (the cursor
 * is then back at the first). The groups may change between two calls (a
 * reload): the cursor is bounds-checked, and a pass that skips or repeats
 * a few tasks then is harmless. */
bool task_usage_refresh_some(struct group *const *groups, size_t group_count,
			     struct task_usage_cursor *cursor, uint64_t now_ms, size_t max_reads);
