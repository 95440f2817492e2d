/* A task's `schedule:` at run time (task_schedule.c): the timer that
 * starts each run at its time. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct task;

/* At task_init: armed for the first time, when the task has a schedule. */
void task_schedule_open(struct task *task);
void task_schedule_close(struct task *task);

/* The next run's wall-clock time (ms since the epoch) and how far off it
 * is; false when none is coming (no schedule, the group stopping). */
bool task_schedule_next(const struct task *task, uint64_t *due_ms, uint64_t *in_ms);

/* The state a status shows: `waiting` for a scheduled task between its
 * runs with a next run coming (`dead` would read as over for good), else
 * runner_shown_state's. */
const char *task_schedule_shown_state(const struct task *task);
