#include "supervisor/pid1/signal_judgement.h"

#include <signal.h>
#include <stdio.h>

#include "config/model/config.h"

unsigned signal_judgement_right(int signal_number)
{
	switch (signal_number) {
	case SIGTERM:
	case SIGINT:
	case SIGQUIT:
		return CONTROL_RIGHT_SHUTDOWN;
	case SIGHUP:
		return CONTROL_RIGHT_RELOAD;
	case SIGUSR2:
		return CONTROL_RIGHT_UPGRADE;
	default:
		return 0;
	}
}

enum signal_verdict signal_judgement_decide(const struct signal_sender *sender, int signal_number,
					    unsigned task_rights, bool tasks_can_signal)
{
	unsigned right = signal_judgement_right(signal_number);
	if (!right)
		return SIGNAL_HONOUR; /* it asks for nothing */
	switch (sender->kind) {
	case SIGNAL_FROM_TASK:
		return (task_rights & right) ? SIGNAL_HONOUR : SIGNAL_REFUSE_NOT_GRANTED;
	case SIGNAL_FROM_STARTED:
		return SIGNAL_REFUSE_STARTED;
	case SIGNAL_FROM_GONE:
		return tasks_can_signal ? SIGNAL_REFUSE_GONE_MAY_BE_TASK : SIGNAL_HONOUR;
	case SIGNAL_FROM_KERNEL_OR_ABOVE:
	case SIGNAL_FROM_CORRAL:
	case SIGNAL_FROM_PARENT:
	case SIGNAL_FROM_OTHER:
		break;
	}
	return SIGNAL_HONOUR;
}

void signal_judgement_describe_sender(const struct signal_sender *sender, char *buffer, size_t size)
{
	int pid = (int)sender->pid;
	switch (sender->kind) {
	case SIGNAL_FROM_KERNEL_OR_ABOVE:
		snprintf(buffer, size, "the kernel or a process outside corral's pid namespace");
		return;
	case SIGNAL_FROM_CORRAL:
		snprintf(buffer, size, "corral itself");
		return;
	case SIGNAL_FROM_PARENT:
		snprintf(buffer, size, "pid %d (corral's parent)", pid);
		return;
	case SIGNAL_FROM_TASK:
		snprintf(buffer, size, "pid %d (task %s)", pid, sender->task);
		return;
	case SIGNAL_FROM_STARTED:
		snprintf(buffer, size, "pid %d (a process corral started, in no task's cgroup)",
			 pid);
		return;
	case SIGNAL_FROM_GONE:
		snprintf(buffer, size, "pid %d (exited before corral could look at it)", pid);
		return;
	case SIGNAL_FROM_OTHER:
		snprintf(buffer, size, "pid %d", pid);
		return;
	}
}
