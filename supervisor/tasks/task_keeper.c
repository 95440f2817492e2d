#include "supervisor/tasks/task_keeper.h"

#include "supervisor/keeper/keeper_channel.h"
#include "supervisor/keeper/keeper_loop_side.h"
#include "supervisor/tasks/task.h"

void task_keeper_open(struct task *task)
{
	if (task->services->keeper && !task->keeper_slot)
		task->keeper_slot = ++task->services->keeper_next_slot;
	task_keeper_changed(task);
}

void task_keeper_changed(struct task *task)
{
	if (!task->services->keeper || !task->keeper_slot)
		return;
	task->keeper_changed = true;
	if (task->services->keeper_wanted)
		task->services->keeper_wanted(task->services->keeper_context);
}

void task_keeper_send_now(struct task *task)
{
	if (task->services->keeper && task->services->keeper_send_now)
		task->services->keeper_send_now(task->services->keeper_context);
}

void task_keeper_forget(struct task *task)
{
	struct keeper_loop_side *keeper = task->services->keeper;
	if (!keeper || !task->keeper_slot)
		return;
	/* No state and no fds: the slot is forgotten. A keeper that cannot
	 * take it keeps a record of a task that is gone, which a restore
	 * finds no task for, and forgets. */
	struct keeper_message message = {.kind = KEEPER_RECORD, .slot = task->keeper_slot};
	keeper_channel_send(keeper->channel, &message, NULL, NULL, NULL);
	task->keeper_slot = 0;
	task->keeper_changed = false;
}
