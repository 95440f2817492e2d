/* One task across `corral upgrade`: its runner's state and counts, its
 * process (pid and pidfd), its output pipes with what corral held of
 * them, its recent lines, its readiness (notify socket, probe and
 * watchdog due times), its timers as due times (the monotonic clock
 * goes on across an exec). */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/handover.h"
#include "supervisor/tasks/task.h"

/* Why this task cannot be handed over now (it is between two states, or
 * uses what the hand-over does not carry): false with `why`, else true. */
bool task_handover_possible(const struct task *task, char *error, size_t error_size);

json_t *task_handover_write(struct handover_writer *writer, const struct task *task);

/* Puts the handed-over state into `task`, freshly made by task_init from
 * the same definition: its fds in the loop, probes and timers armed. 0,
 * or -EINVAL with `error`. Nothing is read from a handed-over fd here
 * (the loop does that once every task is taken over), so that a failure
 * leaves all of them as they were for the old binary. */
int task_handover_read(const struct handover_reader *reader, const json_t *state, struct task *task,
		       char *error, size_t error_size);
