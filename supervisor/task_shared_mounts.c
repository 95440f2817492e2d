/* A task's bidirectional binds around each run: the sources made shared
 * on the host before the spawn, and what the task mounted below them
 * unmounted once the run is over (isolation/shared_source.h). */
#include <limits.h>

#include "supervisor/log.h"
#include "supervisor/task.h"

int task_shared_mounts_prepare(struct task *task, char *message, size_t message_size)
{
	return task_isolation_share_sources(&task->isolation, message, message_size);
}

void task_shared_mounts_release(struct task *task)
{
	char why[PATH_MAX + 256];
	if (task_isolation_unshare_sources(&task->isolation, why, sizeof(why)) < 0)
		log_message("%s: warning: %s", task->config->full_name, why);
}
