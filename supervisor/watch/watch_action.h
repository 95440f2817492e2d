/* What a change to a task's watched paths does (config `watch:`), once
 * its debounce is over, said in the event log as `watch_triggered` and in
 * corral's log: "web/app: watch: /etc/app/config.yaml changed: restarting".
 *
 * Only a running task is restarted or signalled: a task that is stopped,
 * failed, pending or between scheduled runs reads its files when it next
 * starts, so nothing is done for it (the event says so). A reload of
 * corral's config does not depend on the task's state. */
#pragma once

#include "config/model/config.h"
#include "supervisor/tasks/task.h"

/* `what` changed ("/etc/app/config.yaml changed"). `reload` is called
 * last, as it may end the entry the change came from. */
void watch_action_run(struct task *task, const struct watch_config *watch, const char *what,
		      void (*reload)(void *context), void *context);
