/* A task's fds told to corral's keeper as they are made and closed
 * (docs/architecture.md, "corral outlives its own death"): its output
 * pipes' read ends when the task is made, its pidfd at each start, and
 * their ends. Nothing is sent without a keeper (services->keeper NULL),
 * which is how corral runs today. */
#pragma once

struct task;

/* At task_init: its slot, and its pipes' read ends. */
void task_keeper_hold_outputs(struct task *task);
/* A run began: its pidfd. */
void task_keeper_hold_process(struct task *task);
/* The run's pidfd is closed. */
void task_keeper_drop_process(struct task *task);
/* The task goes: everything held for it. */
void task_keeper_forget(struct task *task);
