/* A task's record with corral's keeper (docs/architecture.md, "corral
 * outlives its own death"): each change of the task's state marks it, and
 * once the loop has nothing else to do its record (its state and the fds
 * it names) goes to the keeper in one message (upgrade/kept_state.c). A
 * task forgotten goes from the keeper too. Nothing is sent without a
 * keeper (services->keeper NULL), which is how corral runs by default. */
#pragma once

struct task;

/* At task_init: its slot. */
void task_keeper_open(struct task *task);
/* Its state changed: its record is sent at the end of the loop's turn. */
void task_keeper_changed(struct task *task);
/* Its records go to the keeper now, not at the end of the turn: its run's
 * exit is recorded before its process is reaped (task_reap). */
void task_keeper_send_now(struct task *task);
/* The task goes: its record with the keeper too. */
void task_keeper_forget(struct task *task);
