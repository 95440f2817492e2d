#include "supervisor/watch/watch_action.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/units.h"
#include "supervisor/tasks/group.h"

/* Why nothing is done to the task, or NULL when something can be. */
static const char *why_not(const struct task *task)
{
	const struct group *group = task->group;
	if (group->stop_mode != GROUP_RUNNING || group->starts_forbidden)
		return "its group is stopping: nothing done";
	if (task->runner.state != TASK_RUNNING && task->runner.state != TASK_STARTING)
		return "not running: nothing done (it reads them when it starts)";
	if (task->runner.stop_intent != RUNNER_STOP_NONE)
		return "being stopped: nothing done";
	return NULL;
}

static void say(struct task *task, const char *what, const char *done)
{
	char message[1024];
	snprintf(message, sizeof(message), "watch: %s: %s", what, done);
	task_note_event(task, TASK_EVENT_WATCH_TRIGGERED, message);
}

void watch_action_run(struct task *task, const struct watch_config *watch, const char *what,
		      void (*reload)(void *context), void *context)
{
	const char *refused = watch->action == WATCH_ACTION_RELOAD ? NULL : why_not(task);
	if (refused) {
		say(task, what, refused);
		return;
	}
	char done[96];
	switch (watch->action) {
	case WATCH_ACTION_RESTART:
		say(task, what, "restarting");
		/* As `corral restart TASK`: its `restart: true` dependents stop
		 * first and start again after it. */
		group_restart_task(task->group, task, loop_now_ms());
		return;
	case WATCH_ACTION_SIGNAL: {
		snprintf(done, sizeof(done), "sending %s to pid %d", signal_name(watch->signal),
			 (int)task_command_pid(task));
		say(task, what, done);
		int result = task_send_signal(task, watch->signal);
		if (result < 0)
			log_message("%s: watch: sending %s: %s", task->config->full_name,
				    signal_name(watch->signal), strerror(-result));
		return;
	}
	case WATCH_ACTION_RELOAD:
		say(task, what, "reloading corral's config");
		reload(context);
		return;
	}
}
