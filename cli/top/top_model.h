/* corral top's model: the groups and tasks of one status reply
 * (docs/control-protocol.md, "status"), each cell of the view already
 * decided, and each task's CPU % from the difference with the reading of
 * the reply before. Built from a json_view, like the status table: a
 * reply of 1000 tasks comes every second. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/json_view.h"

/* "-": no such figure (no process, no cgroup); "?": a field missing. */
#define TOP_NONE -1

struct top_task {
	char *target;     /* "group/task" or "group/task@N": what requests name */
	const char *name; /* within its group: points into target */
	size_t group;     /* index in top_model.groups */
	size_t order;     /* position in the reply: the config's order */
	char stage[24];
	char state[12];
	char ready[4];   /* "yes", "no", "-" */
	char health[48]; /* "ok", "fail 2/3", "starting", "-" */
	char last_exit[48];
	int64_t pid, restarts, uptime_ms;
	/* next_restart_in_ms while a restart delay runs, else next_run_in_ms
	 * of a scheduled task between runs; next_is_run says which. */
	int64_t next_ms;
	bool next_is_run;
	int64_t memory_bytes, memory_limit_bytes;
	/* The cgroup's CPU time, and when corral read it (the reply's time
	 * less the reading's age_ms, in the caller's monotonic ms). */
	int64_t cpu_usec;
	int64_t read_at_ms;
	/* Share of one CPU over the two latest readings, in percent;
	 * TOP_NONE before there are two of the same run. */
	double cpu_percent;
};

struct top_group {
	char *name;
	char state[16];
	bool stopping, finished;
	size_t first_task, task_count; /* its tasks, in top_model.tasks */
};

struct top_model {
	struct top_group *groups;
	size_t group_count;
	struct top_task *tasks;
	size_t task_count;
	/* "corral 0.1.0 pid 4200 up 1h2m", or "" from a corral that does
	 * not say. */
	char corral[96];
	size_t running, dead; /* tasks in those states */
};

/* Builds `model` from the status reply `reply`, read at `now_ms`
 * (monotonic). `previous` (NULL: none) is the model of the reply before:
 * its readings give the CPU % of tasks whose reading is newer. 0, or -1
 * when the reply has no "groups" list (model left empty). */
int top_model_build(struct top_model *model, const struct jv *reply, int64_t now_ms,
		    const struct top_model *previous);
void top_model_free(struct top_model *model);

/* The task `target` names in `model`, or NULL. `hint`: where to look
 * first (the same index in the reply before, which is nearly always it). */
const struct top_task *top_model_find(const struct top_model *model, const char *target,
				      size_t hint);
