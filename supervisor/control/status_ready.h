/* `corral status --ready`: is every task that should be up running and
 * ready? One pure judgement of a task's facts, which the CLI reads from a
 * status reply (status_ready_check) and corral's GET /readyz from the
 * running tasks (status_reply_ready_facts, the very values the status
 * reply is written from): both say the same of the same tasks. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* What the judgement reads of one task: fields of the status reply
 * (docs/control-protocol.md#status). */
struct status_ready_facts {
	const char *task;  /* "web/app" */
	const char *stage; /* "main", "prestart-sidecar", ... */
	const char *state; /* as status shows it: "running", "dead", "waiting"... */
	bool ready;
	bool ready_lost; /* readiness.continuous: was ready in this run, not now */
	bool failed;     /* failed for good */
	bool last_exit_failed;
	bool last_exit_requested; /* corral stopped it (`corral stop`, ...) */
	bool restart_due;         /* a crash waiting out its restart delay */
};

/* Main tasks and sidecars must be running and ready; ephemeral and
 * poststop tasks are not asked, nor are tasks at rest: dead without having
 * failed and not waiting for a restart (a completed one-shot, a scheduled
 * task between runs, a task never started). A task stopped on request is
 * not at rest. true when the task holds readiness back, with why in `why`
 * as the CLI says it in parentheses: "running, has not said it is ready",
 * "pending". */
bool status_ready_holds_back(const struct status_ready_facts *facts, char *why, size_t why_size);

/* Over a status reply: one line per task that is not ready ("web/app: not
 * ready (running, has not said it is ready)"), or "ready" when all are.
 * Returns 0 when ready, 1 when not, -1 for a reply without groups. */
int status_ready_check(FILE *out, const json_t *reply);
