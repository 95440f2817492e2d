/* `corral status --ready`: is every task that should be up running and
 * ready? Pure, over a status reply, so that it is tested on canned ones. */
#pragma once

#include <jansson.h>
#include <stdio.h>

/* Main tasks and sidecars must be running and ready; ephemeral and
 * poststop tasks are not asked, nor are tasks at rest: dead without having
 * failed and not waiting for a restart (a completed one-shot, a scheduled
 * task between runs, a task never started; supervisor/lifecycle/ready_rule.h
 * says which). Writes one line per task that is not
 * ("web/app: not ready (running, waits for READY=1 or its probe)"), or
 * "ready" when all are. Returns 0 when ready, 1 when not, -1 for a reply
 * without groups. */
int status_ready_check(FILE *out, const json_t *reply);
