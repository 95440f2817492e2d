/* A task's cgroup usage (CPU, memory, pids) as status replies give it,
 * with a cache so that a status of many tasks reads no cgroup file.
 *
 * Reading one task's usage opens and reads up to four files (cpu.stat,
 * memory.current, memory.peak, pids.current), and cpu.stat makes the
 * kernel gather per-CPU counters: 2-8 ms for 1000 tasks, which was two
 * thirds of a status reply (docs/benchmarks.md). A reply about one task
 * reads it fresh; a reply about many serves each task's last reading with
 * its age, and the readings older than TASK_USAGE_REFRESH_MS are read
 * again once the reply is out (nothing polls: an idle corral reads
 * nothing). A reading older than TASK_USAGE_MAX_AGE_MS, or none since the
 * task's run began or ended, is read during the reply, as before the
 * cache, so a status run now and then never shows old figures. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "isolation/cgroup_task.h"

#define TASK_USAGE_REFRESH_MS 1000
#define TASK_USAGE_MAX_AGE_MS 5000

struct task;
struct group;

struct task_usage {
	struct task_cgroup_stats stats;
	uint64_t read_at_ms; /* loop_now_ms() of the reading */
	bool valid;
};

/* The reading no longer says what the task does (its run began or ended,
 * its cgroup went): the next reply reads it. */
void task_usage_forget(struct task_usage *usage);

/* Reads the task's usage now and keeps it. */
const struct task_cgroup_stats *task_usage_read(struct task *task, uint64_t now_ms);

/* For a reply about many tasks: the kept reading and its age (*age_ms), or
 * one read now (age 0) when there is none or it is older than
 * TASK_USAGE_MAX_AGE_MS. *stale is set when it is older than
 * TASK_USAGE_REFRESH_MS: the caller then refreshes once the reply is out. */
const struct task_cgroup_stats *task_usage_cached(struct task *task, uint64_t now_ms,
						  uint64_t *age_ms, bool *stale);

/* Reads again every reading of these groups' tasks older than
 * TASK_USAGE_REFRESH_MS. */
void task_usage_refresh_stale(struct group **groups, size_t group_count, uint64_t now_ms);
