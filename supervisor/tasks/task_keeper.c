#include "supervisor/tasks/task_keeper.h"

#include <string.h>

#include "base/log.h"
#include "supervisor/keeper/keeper_channel.h"
#include "supervisor/keeper/keeper_loop_side.h"
#include "supervisor/tasks/task.h"

static void send_to_keeper(struct task *task, uint32_t roles, uint32_t drop, const int *fds)
{
	struct keeper_loop_side *keeper = task->services->keeper;
	if (!keeper || !task->keeper_slot)
		return;
	struct keeper_message message = {
	    .kind = KEEPER_HOLD, .slot = task->keeper_slot, .roles = roles, .drop = drop};
	int failure = keeper_channel_send(keeper->channel, &message, fds);
	/* A keeper that cannot take it: this fd would not outlive corral;
	 * the task runs on all the same. */
	if (failure < 0)
		log_message("%s: cannot tell the keeper its fds: %s", task->config->full_name,
			    strerror(-failure));
}

void task_keeper_hold_outputs(struct task *task)
{
	if (!task->services->keeper)
		return;
	task->keeper_slot = ++task->services->keeper_next_slot;
	int fds[2];
	uint32_t roles = 0;
	size_t count = 0;
	if (task->output.watch.fd >= 0) {
		roles |= 1u << HELD_OUTPUT;
		fds[count++] = task->output.watch.fd;
	}
	if (task->error_output && task->error_output->watch.fd >= 0) {
		roles |= 1u << HELD_ERROR_OUTPUT;
		fds[count++] = task->error_output->watch.fd;
	}
	if (roles)
		send_to_keeper(task, roles, 0, fds);
}

void task_keeper_hold_process(struct task *task)
{
	if (task->pidfd_watch.fd >= 0)
		send_to_keeper(task, 1u << HELD_PIDFD, 0, &task->pidfd_watch.fd);
}

void task_keeper_drop_process(struct task *task)
{
	send_to_keeper(task, 0, 1u << HELD_PIDFD, NULL);
}

void task_keeper_forget(struct task *task)
{
	send_to_keeper(task, 0, (1u << FD_HOLDER_ROLES) - 1, NULL);
	task->keeper_slot = 0;
}
