/* A task's `wait_for:` at run time: its outside targets (a TCP port, an
 * HTTP URL, a path) checked every interval while the task waits to start,
 * from corral's own namespaces, as probes are made (probe.h); it may start
 * once each has passed. The checks exist only during a wait: a task that
 * starts, or stops waiting, frees them, and the next wait checks afresh
 * (a database that was up for the last run may be down for this one). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct task;

/* The wait began (task_dependencies_waiting): the checks start, once. */
void outside_wait_begin(struct task *task);
/* It is over, or the config changed under it: the checks stop. */
void outside_wait_end(struct task *task);

/* Every target passed in this wait (true for a task without wait_for). */
bool outside_wait_passed(const struct task *task);

/* The earliest deadline of a target still waited for, from `began_ms`;
 * 0 when none has a timeout. */
uint64_t outside_wait_next_deadline(const struct task *task, uint64_t began_ms);

/* A target not passed whose timeout ran out since `began_ms`: "tcp
 * db:5432 not reached within 30s (g/app: wait_for[0].timeout; last:
 * connect db:5432: Connection refused)" into `error`; false when none. */
bool outside_wait_timed_out(const struct task *task, uint64_t began_ms, uint64_t now_ms,
			    char *error, size_t error_size);

/* What it waits for, for status: "waits for tcp db:5432 (at most 30s;
 * last: ...)"; false when nothing outside holds it. */
bool outside_wait_describe(const struct task *task, char *buffer, size_t size);
