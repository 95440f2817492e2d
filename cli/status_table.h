/* `corral status` for people: the status reply (docs/control-protocol.md)
 * as one table per group. Separate from the command so that it can be
 * tested on canned replies. */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "cli/json_view.h"

/* Writes corral itself in one line (its version, pid, uptime, restores
 * and upgrades: the reply's "corral", when it has one), then each group of
 * `reply` as a header line ("web  state: main") and
 * its tasks as rows: TASK, STAGE, STATE, READY, HEALTH, PID, UPTIME, CPU,
 * MEM (now, and /limit with a memory limit), PIDS, RESTARTS, LAST EXIT, NEXT RESTART. Column widths
 * fit the widest cell of all groups, so that
 * the tables line up. Fields missing from the reply show as "?". Returns
 * 0, or -1 when the reply has no "groups" array. */
int status_table_write(FILE *out, const struct jv *reply);

/* For a status of one task, under its table: each task's memory now, its
 * peak and its limit ("web/app memory: 12.0M now, 40.0M peak, 64.0M
 * limit"), after a blank line; nothing for a task without a memory
 * figure. */
void status_table_write_memory(FILE *out, const struct jv *reply);

/* A duration at a glance: its two largest units, rounded down ("1h2m",
 * "3m4s", "5s", "2d3h"), or milliseconds below a second ("250ms"). */
void status_duration_format(uint64_t ms, char *buffer, size_t size);
