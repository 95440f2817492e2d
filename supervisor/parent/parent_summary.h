/* The one line corral's parent shows for it (sd_notify's STATUS=, in
 * `systemctl status`): "12 tasks: 11 ready, 1 starting (web/app)", and
 * whether every task its READY=1 waits for is ready. Pure: the tasks come
 * in as the facts supervisor/lifecycle/ready_rule.h judges. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "supervisor/lifecycle/ready_rule.h"

/* What the line says of a task, in the order it says them. */
enum parent_task_kind {
	PARENT_TASK_READY,
	PARENT_TASK_STARTING,   /* pending, starting, or running and not ready yet */
	PARENT_TASK_NOT_READY,  /* was ready in this run; its readiness check fails now */
	PARENT_TASK_RESTARTING, /* waits out a restart delay */
	PARENT_TASK_STOPPING,
	PARENT_TASK_FAILED,
	PARENT_TASK_STOPPED, /* stopped on request, or by a shutdown */
	PARENT_TASK_AT_REST, /* a one-shot done, autostart: false, between scheduled runs */
	PARENT_TASK_ROLLING, /* replaced by a rolling restart while its set serves */
};
#define PARENT_TASK_KIND_COUNT 9

/* The tasks of a kind the line names, at most; the others are counted
 * ("and 2 more"). */
#define PARENT_SUMMARY_NAMES 3

struct parent_summary {
	unsigned total;
	unsigned count[PARENT_TASK_KIND_COUNT];
	const char *names[PARENT_TASK_KIND_COUNT][PARENT_SUMMARY_NAMES]; /* borrowed */
	/* Tasks READY=1 waits for that are neither ready nor at rest. */
	unsigned holding_ready;
};

/* The kind of a task the rule asks about; -1 for one it does not
 * (ephemeral and poststop tasks). */
int parent_task_kind(const struct ready_rule_facts *facts);

/* Counts a task (`name`, borrowed until the line is made). `awaited`:
 * READY=1 waits for it (notify.ready names its group, or is `all`). */
void parent_summary_add(struct parent_summary *summary, const struct ready_rule_facts *facts,
			const char *name, bool awaited);

/* Every awaited task is ready or at rest. */
bool parent_summary_ready(const struct parent_summary *summary);

/* The line, after `prefix` ("shutting down; ") when not NULL, cut to
 * `size`: "3 tasks: 1 ready, 2 starting (web/app, web/proxy)"; "0 tasks"
 * for a config whose tasks are all ephemeral or poststop. */
void parent_summary_format(const struct parent_summary *summary, const char *prefix, char *buffer,
			   size_t size);
