/* corral's own prestart hooks (docs/builtin-hooks.md) put in a task's hook
 * list: task directories, then CDI devices, ahead of the exec hooks, so
 * that an exec hook's mount or variable can override theirs. Both run at
 * every start (never `done`): the directories' secrets tmpfs must be there
 * after anything removed it, and CDI specs are reread as drivers rewrite
 * them. */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "hooks/cdi.h"
#include "hooks/task_dirs.h"
#include "supervisor/tasks/task.h"

static int task_dirs_hook(const struct hook_request *request, void *data,
			  struct hook_response *response, char *error, size_t error_size)
{
	struct task *task = data;
	struct task_dirs dirs;
	uid_t uid = task->plan.change_ids ? task->plan.uid : (uid_t)-1;
	gid_t gid = task->plan.change_ids ? task->plan.gid : (gid_t)-1;
	int failure = task_dirs_prepare(task->services->task_dirs_root, request->group,
					request->task->name, uid, gid, &dirs, error, error_size);
	if (failure < 0)
		return failure;
	task_dirs_additions(&dirs, task_dirs_mounted_in_task(request->task), &response->additions);
	task_dirs_free(&dirs);
	return 0;
}

static int cdi_hook(const struct hook_request *request, void *data, struct hook_response *response,
		    char *error, size_t error_size)
{
	(void)data;
	const struct cdi_config *cdi = &request->task->cdi;
	char warning[512];
	char why[512];
	int failure =
	    cdi_additions((const char *const *)cdi->devices, (const char *const *)cdi->spec_dirs,
			  &response->additions, warning, sizeof(warning), why, sizeof(why));
	if (failure < 0) {
		/* The runner says "hook cdi: " already. */
		const char *text = strncmp(why, "cdi: ", 5) == 0 ? why + 5 : why;
		snprintf(error, error_size, "%s", text);
		return failure;
	}
	if (warning[0])
		log_message("%s: %s", request->task->full_name, warning);
	return 0;
}

void task_builtin_hooks_add(struct task *task)
{
	const struct task_config *config = task->config;
	if (config->task_dirs && task->services->task_dirs_root)
		task_hooks_add_builtin(task->hooks, "task_dirs", HOOK_STAGE_PRESTART,
				       task_dirs_hook, task);
	if (config->cdi.device_count)
		task_hooks_add_builtin(task->hooks, "cdi", HOOK_STAGE_PRESTART, cdi_hook, task);
}
