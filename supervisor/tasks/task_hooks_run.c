/* A task's hooks (hooks/task_hooks.h) wired to its runner: the runner's
 * run_hooks and cancel_hooks effects, and the answers going back to it. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "hooks/start_additions.h"
#include "hooks/task_hooks.h"
#include "isolation/spawn.h"
#include "isolation/spawn_executable.h"
#include "supervisor/tasks/task.h"

#define TASK_FROM_RUNNER(runner_pointer)                                                           \
	((struct task *)((char *)(runner_pointer)-offsetof(struct task, runner)))

static void on_hooks_finished(void *context, enum hook_stage stage, bool ok, const char *message)
{
	struct task *task = context;
	/* The environment of the starts to come: the prestart hooks' env
	 * over the task's own. */
	if (stage == HOOK_STAGE_PRESTART && ok)
		task_plan_set_additions(&task->plan, task->additions.env);
	runner_hooks_finished(&task->runner, stage, ok, message, loop_now_ms());
}

static void on_hook_failed(void *context, enum hook_stage stage, const char *message)
{
	struct task *task = context;
	char text[TASK_EVENT_MESSAGE_MAX];
	snprintf(text, sizeof(text), "%s (%s)", message, hook_stage_name(stage));
	task_note_event(task, TASK_EVENT_HOOK_FAILED, text);
}

/* ---- how a hook process starts: the one spawn path, no isolation ---- */

static int spawn_hook(void *context, char *const *argv, char *const *envp, const int stdio[3],
		      struct hook_process *process)
{
	struct services *services = context;
	char found[PATH_MAX];
	struct spawn_request request = {
	    .executable = spawn_resolve_executable(argv[0], envp, found, sizeof(found)),
	    .argv = argv,
	    .envp = envp,
	    .stdin_given = true,
	    .stdin_fd = stdio[0],
	    .output_fd = stdio[1],
	    .separate_stderr = true,
	    .stderr_fd = stdio[2],
	    .notify_target = -1,
	};
	struct spawn_result result;
	int failure = spawn_process(services->spawn_slots, &request, &result);
	if (failure < 0)
		return failure;
	*process = (struct hook_process){
	    .pid = result.pid, .pidfd = result.pidfd, .error_fd = result.error_fd};
	return 0;
}

static bool hook_start_failed(void *context, char *const *argv, int error_fd, char *error,
			      size_t error_size)
{
	(void)context;
	struct spawn_failure failure;
	if (spawn_read_failure(error_fd, &failure) != 1)
		return false;
	if (failure.stage == SPAWN_STAGE_EXEC) {
		/* As the hook's start said it before the spawn path. */
		snprintf(error, error_size, "exec %s: %s", argv[0], strerror(failure.error));
		return true;
	}
	struct spawn_request request = {.executable = argv[0], .argv = argv};
	spawn_failure_describe(&request, &failure, error, error_size);
	return true;
}

static const struct hook_spawner *hook_spawner_of(struct services *services)
{
	services->hook_spawner = (struct hook_spawner){
	    .spawn = spawn_hook, .start_failed = hook_start_failed, .context = services};
	return &services->hook_spawner;
}

void task_hooks_open(struct task *task, const char *group_name)
{
	struct task_hooks_owner owner = {
	    .loop = task->services->loop,
	    .task = task->config,
	    .group_name = group_name,
	    .env = NULL, /* below: pinned only for a task that has hooks */
	    .open_stderr = task_open_stderr_writer,
	    .spawner = hook_spawner_of(task->services),
	    .additions = &task->additions,
	    .finished = on_hooks_finished,
	    .failed = on_hook_failed,
	    .context = task,
	    .limiter = task->services->hook_limiter,
	};
	task->hooks = xmalloc(sizeof(*task->hooks));
	task_hooks_init(task->hooks, &owner);
	task_builtin_hooks_add(task);
	if (task->hooks->count == 0) {
		task_hooks_free(task->hooks);
		free(task->hooks);
		task->hooks = NULL;
		return;
	}
	/* Every hook request carries it, for the task's whole life. */
	task->hooks->owner.env = task_plan_pin_environment(&task->plan);
}

bool task_effect_run_hooks(struct runner *runner, enum hook_stage stage)
{
	struct task *task = TASK_FROM_RUNNER(runner);
	struct hook_facts facts = {.run = runner->restart_count};
	if (stage == HOOK_STAGE_POSTSTART || stage == HOOK_STAGE_PREKILL)
		facts.pid = task->pid;
	if (stage == HOOK_STAGE_EXITED) {
		const struct task_exit *exit = &runner->last_exit;
		facts.has_exit = true;
		facts.exit_code = exit->kind == TASK_EXIT_SIGNAL ? -1 : exit->code;
		facts.exit_signal = exit->kind == TASK_EXIT_SIGNAL ? exit->signal : 0;
	}
	return task_hooks_run(task->hooks, stage, &facts);
}

void task_effect_cancel_hooks(struct runner *runner, enum hook_stage stage)
{
	task_hooks_cancel(TASK_FROM_RUNNER(runner)->hooks, stage);
}

void task_hooks_close(struct task *task)
{
	if (task->hooks) {
		task_hooks_free(task->hooks);
		free(task->hooks);
		task->hooks = NULL;
	}
	start_additions_free(&task->additions);
}
