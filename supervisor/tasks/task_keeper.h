/* A task's record with corral's keeper (docs/decisions.md, "corral
 * outlives its own death"): each change of the task's state marks it, and
 * once the loop has nothing else to do its record (its state and the fds
 * it names) goes to the keeper in one message (kept_state.c). A
 * task forgotten goes from the keeper too. Nothing is sent without a
 * keeper (services->keeper NULL), which is how corral runs by default. */
#pragma once

#include <sys/types.h>

struct task;

/* At task_init: its slot. */
void task_keeper_open(struct task *task);
/* Its state changed: its record is sent at the end of the loop's turn. */
void task_keeper_changed(struct task *task);
/* `pid`, a zombie of the task's whose exit was handled, is reaped once
 * the task's record after it is with the keeper (task_reap). */
void task_keeper_reap_after_record(struct task *task, pid_t pid);
/* The task goes: its record with the keeper too. */
void task_keeper_forget(struct task *task);
