/* `corral status --ready`: is every task that should be up running and
 * ready? Pure, over a status reply, so that it is tested on canned ones.
 * The rule is supervisor/lifecycle/ready_rule.h's, which GET /readyz
 * applies to the running tasks (supervisor/http/http_readyz.c) with the
 * same words. */
#pragma once

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "supervisor/lifecycle/ready_rule.h"

/* Main tasks and sidecars must be running and ready; ephemeral and
 * poststop tasks are not asked, nor are tasks at rest: dead without having
 * failed and not waiting for a restart (a completed one-shot, a scheduled
 * task between runs, a task never started; supervisor/lifecycle/ready_rule.h
 * says which). Writes one line per task that is not
 * ("web/app: not ready (running, has not said it is ready)"), or "ready"
 * when all are. Returns 0 when ready, 1 when not, -1 for a reply without
 * groups. */
int status_ready_check(FILE *out, const json_t *reply);

/* Why a task the rule finds not ready is not, as the CLI says it between
 * its parentheses: its state as status shows it ("pending", "dead"), and
 * for a running task what it lacks ("running, has not said it is
 * ready"); for one that waits, what for (`waiting`: status's waiting_for,
 * or NULL): "pending, waits for tcp db:5432 (last: ...)", or its restart
 * delay. */
void status_ready_reason(const char *state, const struct ready_rule_facts *facts,
			 const char *waiting, char *error, size_t error_size);
