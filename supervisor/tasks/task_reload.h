/* A task's side of a reload (supervisor/reload.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/model/config_diff.h"
#include "isolation/cgroup_task.h"

struct task;

/* A TASK_CHANGE_IN_PLACE change, applied to the task as it runs: the
 * fields move into its definition (task_config_swap_in_place_fields), new
 * limits are written to its cgroup, probes are made again, its log ring
 * resized. -1 with `error` when the kernel refused a limit, and the limit
 * and the kernel's reason in `refusal`: the old limits are kept, in the
 * definition and in the cgroup. */
int task_update_in_place(struct task *task, struct task_config *definition,
			 const struct task_diff *diff, struct limit_refusal *refusal, char *error,
			 size_t error_size);

/* task->next_config is set (a change that needs a new process) and the
 * task is between two runs: no process, no hook, no restart delay. */
bool task_can_take_next_config(const struct task *task);

/* Rebuilds the task from task->next_config, keeping its runner (state,
 * restart count, history), its recent output and its dependency links;
 * a dead task stays dead, a pending one starts as the new definition. */
void task_take_next_config(struct task *task);
