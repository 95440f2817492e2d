#include "hooks/task_hooks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/units.h"
#include "base/xmalloc.h"
#include "hooks/start_additions.h"

/* Room for a CDI message: a spec path, its line and column, the field. */
#define HOOK_MESSAGE_MAX 1024

static void on_step(struct loop_timer *timer);
static void on_run_done(void *context, const struct hook_run_result *result);
static void release_slot(struct task_hooks *hooks);

static struct hook_state *state_of(struct task_hooks *hooks, const char *name)
{
	for (size_t i = 0; i < hooks->state_count; i++)
		if (strcmp(hooks->states[i].name, name) == 0)
			return &hooks->states[i];
	hooks->states =
	    xreallocarray(hooks->states, hooks->state_count + 1, sizeof(*hooks->states));
	struct hook_state *state = &hooks->states[hooks->state_count++];
	*state = (struct hook_state){.name = xstrdup(name)};
	return state;
}

void task_hooks_set_state(struct task_hooks *hooks, const char *name, json_t *value)
{
	struct hook_state *state = state_of(hooks, name);
	json_decref(state->state);
	state->state = json_incref(value);
}

/* At `position`, moving the ones from there down. */
static void add_hook(struct task_hooks *hooks, size_t position, const struct task_hook *hook)
{
	hooks->hooks = xreallocarray(hooks->hooks, hooks->count + 1, sizeof(*hooks->hooks));
	memmove(hooks->hooks + position + 1, hooks->hooks + position,
		(hooks->count - position) * sizeof(*hooks->hooks));
	hooks->hooks[position] = *hook;
	hooks->count++;
	state_of(hooks, hook->name);
}

/* corral's own environment, and who is asking. */
static char **hook_environment(const struct task_hooks_owner *owner, const char *name,
			       enum hook_stage stage)
{
	extern char **environ;
	size_t count = 0;
	while (environ[count])
		count++;
	char **envp = xcalloc(count + 5, sizeof(*envp));
	size_t used = 0;
	static const char *const ours[] = {
	    "CORRAL_GROUP=", "CORRAL_TASK=", "CORRAL_HOOK=", "CORRAL_HOOK_STAGE="};
	for (size_t i = 0; i < count; i++) {
		bool replaced = false;
		for (size_t j = 0; j < 4 && !replaced; j++)
			replaced = strncmp(environ[i], ours[j], strlen(ours[j])) == 0;
		if (!replaced)
			envp[used++] = xstrdup(environ[i]);
	}
	envp[used++] = xasprintf("CORRAL_GROUP=%s", owner->group_name);
	envp[used++] = xasprintf("CORRAL_TASK=%s", owner->task->name);
	envp[used++] = xasprintf("CORRAL_HOOK=%s", name);
	envp[used++] = xasprintf("CORRAL_HOOK_STAGE=%s", hook_stage_name(stage));
	return envp;
}

void task_hooks_init(struct task_hooks *hooks, const struct task_hooks_owner *owner)
{
	memset(hooks, 0, sizeof(*hooks));
	hooks->owner = *owner;
	loop_timer_init(&hooks->step, on_step, hooks);
	for (size_t i = 0; i < owner->task->hook_count; i++) {
		const struct hook_config *config = &owner->task->hooks[i];
		add_hook(hooks, hooks->count,
			 &(struct task_hook){
			     .name = config->name,
			     .stage = config->stage,
			     .exec = config,
			     .envp = hook_environment(owner, config->name, config->stage),
			 });
	}
}

void task_hooks_add_builtin(struct task_hooks *hooks, const char *name, enum hook_stage stage,
			    builtin_hook_function function, void *data)
{
	/* After the built-ins already there, before every exec hook. */
	size_t position = 0;
	while (position < hooks->count && hooks->hooks[position].builtin)
		position++;
	add_hook(hooks, position,
		 &(struct task_hook){
		     .name = name,
		     .stage = stage,
		     .builtin = function,
		     .builtin_data = data,
		 });
}

static bool would_run(const struct task_hook *hook, enum hook_stage stage)
{
	return hook->stage == stage && !(stage == HOOK_STAGE_PRESTART && hook->done);
}

static bool exec_hook_running(const struct task_hooks *hooks)
{
	return hooks->run && hook_run_active(hooks->run);
}

static void kill_exec_hook(struct task_hooks *hooks)
{
	if (hooks->run)
		hook_run_kill(hooks->run);
}

bool task_hooks_busy(const struct task_hooks *hooks)
{
	if (!hooks)
		return false;
	return hooks->job_active || hooks->queue_length > 0 || exec_hook_running(hooks);
}

bool task_hooks_run(struct task_hooks *hooks, enum hook_stage stage, const struct hook_facts *facts)
{
	if (!hooks)
		return false;
	bool any = false;
	for (size_t i = 0; i < hooks->count && !any; i++)
		any = would_run(&hooks->hooks[i], stage);
	/* A prestart waits for the hooks of the run before it even when it
	 * has nothing of its own to run: they may undo what it relies on. */
	if (!any && !(stage == HOOK_STAGE_PRESTART && task_hooks_busy(hooks)))
		return false;
	hooks->queue = xreallocarray(hooks->queue, hooks->queue_length + 1, sizeof(*hooks->queue));
	hooks->queue[hooks->queue_length++] = (struct hook_job){.stage = stage, .facts = *facts};
	loop_timer_arm(hooks->owner.loop, &hooks->step, loop_now_ms());
	return true;
}

void task_hooks_cancel(struct task_hooks *hooks, enum hook_stage stage)
{
	if (!hooks)
		return;
	size_t kept = 0;
	for (size_t i = 0; i < hooks->queue_length; i++)
		if (hooks->queue[i].stage != stage)
			hooks->queue[kept++] = hooks->queue[i];
	hooks->queue_length = kept;
	if (hooks->job_active && hooks->job.stage == stage) {
		hooks->job_cancelled = true;
		kill_exec_hook(hooks);
		if (hooks->waiting_for_slot)
			loop_timer_arm(hooks->owner.loop, &hooks->step, loop_now_ms());
	}
}

void task_hooks_abandon(struct task_hooks *hooks)
{
	if (!hooks)
		return;
	hooks->queue_length = 0;
	if (hooks->job_active) {
		hooks->job_cancelled = true;
		kill_exec_hook(hooks);
		if (hooks->waiting_for_slot)
			loop_timer_arm(hooks->owner.loop, &hooks->step, loop_now_ms());
	}
}

bool task_hooks_reap(struct task_hooks *hooks, pid_t pid)
{
	return hooks && hooks->run && hook_run_reap(hooks->run, pid);
}

/* The prestart results of every prestart hook, in list order: done hooks
 * keep contributing what they returned last. */
static void rebuild_additions(struct task_hooks *hooks)
{
	struct start_additions *additions = hooks->owner.additions;
	start_additions_free(additions);
	for (size_t i = 0; i < hooks->count; i++)
		if (hooks->hooks[i].stage == HOOK_STAGE_PRESTART)
			start_additions_merge(additions, &hooks->hooks[i].last);
}

static void end_job(struct task_hooks *hooks, bool ok, const char *message)
{
	struct hook_job job = hooks->job;
	bool cancelled = hooks->job_cancelled;
	hooks->job_active = false;
	hooks->job_cancelled = false;
	if (cancelled)
		return;
	if (job.stage == HOOK_STAGE_PRESTART && ok)
		rebuild_additions(hooks);
	hooks->owner.finished(hooks->owner.context, job.stage, ok, message);
}

/* Takes what a hook answered, or says why it is a failure. */
static int apply_response(struct task_hooks *hooks, struct task_hook *hook,
			  struct hook_response *response, char *error, size_t error_size)
{
	const struct start_additions *got = &response->additions;
	const struct isolation_config *isolation = &hooks->owner.task->isolation;
	bool mount_namespace = isolation->enabled && (isolation->namespaces & ISOLATION_NS_MOUNT);
	if ((got->mount_count || got->device_count) && !mount_namespace) {
		snprintf(error, error_size,
			 "%s: the task has no mount namespace; add \"mount\" to its "
			 "isolation.namespaces",
			 got->mount_count ? "mounts" : "devices");
		return -1;
	}
	if (response->has_state) {
		struct hook_state *state = state_of(hooks, hook->name);
		json_decref(state->state);
		state->state = response->state;
		response->state = NULL;
	}
	if (hook->stage == HOOK_STAGE_PRESTART) {
		start_additions_free(&hook->last);
		hook->last = response->additions;
		response->additions = (struct start_additions){0};
		hook->done = response->done;
	}
	return 0;
}

/* The hook is over, with `message` when it failed. */
static void hook_finished(struct task_hooks *hooks, struct task_hook *hook, const char *message)
{
	hooks->next_hook++;
	if (hooks->job_cancelled) {
		end_job(hooks, false, NULL);
	} else if (message) {
		char full[HOOK_MESSAGE_MAX];
		snprintf(full, sizeof(full), "hook %s: %s", hook->name, message);
		if (hooks->job.stage == HOOK_STAGE_PRESTART)
			end_job(hooks, false, full); /* the start fails: no more hooks */
		else
			hooks->owner.failed(hooks->owner.context, hooks->job.stage, full);
	}
	loop_timer_arm(hooks->owner.loop, &hooks->step, loop_now_ms());
}

static void take_answer(struct task_hooks *hooks, struct task_hook *hook, const char *text,
			size_t length)
{
	char error[HOOK_MESSAGE_MAX];
	struct hook_response response;
	int result =
	    hook_response_parse(text, length, hook->stage, true, &response, error, sizeof(error));
	if (result == 0) {
		result = apply_response(hooks, hook, &response, error, sizeof(error));
		hook_response_free(&response);
	}
	hook_finished(hooks, hook, result == 0 ? NULL : error);
}

static void on_run_done(void *context, const struct hook_run_result *result)
{
	struct task_hooks *hooks = context;
	release_slot(hooks);
	struct task_hook *hook = &hooks->hooks[hooks->next_hook];
	char error[HOOK_MESSAGE_MAX];
	if (result->start_failed) {
		snprintf(error, sizeof(error), "%s", result->failure);
	} else if (result->timed_out) {
		char timeout[32];
		format_duration_ms(hook->exec->timeout_ms, timeout, sizeof(timeout));
		snprintf(error, sizeof(error), "timed out after %s; its process group was killed",
			 timeout);
	} else if (result->output_too_large) {
		snprintf(error, sizeof(error), "wrote more than %u KiB to stdout; killed",
			 HOOK_RESPONSE_MAX_BYTES >> 10);
	} else if (!result->exited) {
		snprintf(error, sizeof(error), "killed by %s", signal_name(result->signal));
	} else if (result->code != 0) {
		snprintf(error, sizeof(error), "exited with code %d", result->code);
	} else {
		take_answer(hooks, hook, result->output, result->output_length);
		return;
	}
	hook_finished(hooks, hook, error);
}

static void fill_request(struct task_hooks *hooks, const struct task_hook *hook,
			 struct hook_request *request)
{
	const struct hook_facts *facts = &hooks->job.facts;
	*request = (struct hook_request){
	    .stage = hooks->job.stage,
	    .hook = hook->name,
	    .group = hooks->owner.group_name,
	    .task = hooks->owner.task,
	    .env = hooks->owner.env,
	    .run = facts->run,
	    .pid = facts->pid,
	    .has_exit = facts->has_exit,
	    .exit_code = facts->exit_code,
	    .exit_signal = facts->exit_signal,
	    .state = state_of(hooks, hook->name)->state,
	    .changed = facts->changed,
	};
}

/* ---- the bound on hook processes (struct hook_limiter) ---- */

static void release_slot(struct task_hooks *hooks)
{
	struct hook_limiter *limiter = hooks->owner.limiter;
	if (!hooks->holds_slot)
		return;
	hooks->holds_slot = false;
	limiter->running--;
	struct task_hooks *next = limiter->first_waiting;
	if (!next)
		return;
	limiter->first_waiting = next->next_waiting;
	if (!limiter->first_waiting)
		limiter->last_waiting = NULL;
	next->next_waiting = NULL;
	next->waiting_for_slot = false;
	loop_timer_arm(next->owner.loop, &next->step, loop_now_ms());
}

static void stop_waiting(struct task_hooks *hooks)
{
	struct hook_limiter *limiter = hooks->owner.limiter;
	if (!hooks->waiting_for_slot)
		return;
	struct task_hooks **link = &limiter->first_waiting, *previous = NULL;
	while (*link && *link != hooks) {
		previous = *link;
		link = &(*link)->next_waiting;
	}
	if (*link)
		*link = hooks->next_waiting;
	if (limiter->last_waiting == hooks)
		limiter->last_waiting = previous;
	hooks->next_waiting = NULL;
	hooks->waiting_for_slot = false;
}

/* An exec hook may start now: true with a slot taken, or false with the
 * task queued for the next one free. */
static bool take_slot(struct task_hooks *hooks)
{
	struct hook_limiter *limiter = hooks->owner.limiter;
	if (!limiter || hooks->holds_slot)
		return true;
	if (limiter->running >= limiter->max) {
		if (!hooks->waiting_for_slot) {
			hooks->waiting_for_slot = true;
			if (limiter->last_waiting)
				limiter->last_waiting->next_waiting = hooks;
			else
				limiter->first_waiting = hooks;
			limiter->last_waiting = hooks;
		}
		return false;
	}
	limiter->running++;
	hooks->holds_slot = true;
	return true;
}

/* Starts the hook; a built-in, or an exec hook that could not start, is
 * over at once (hook_finished), an exec hook that runs ends in on_run_done. */
static void start_hook(struct task_hooks *hooks, struct task_hook *hook)
{
	struct hook_request request;
	fill_request(hooks, hook, &request);
	if (hook->builtin) {
		char error[HOOK_MESSAGE_MAX];
		struct hook_response response = {0};
		int result =
		    hook->builtin(&request, hook->builtin_data, &response, error, sizeof(error));
		if (result == 0)
			result = apply_response(hooks, hook, &response, error, sizeof(error));
		hook_response_free(&response);
		hook_finished(hooks, hook, result == 0 ? NULL : error);
		return;
	}
	size_t length;
	char *input = hook_request_build(&request, &length);
	int stderr_fd = hooks->owner.open_stderr(hooks->owner.context);
	int started = stderr_fd;
	if (stderr_fd >= 0 && !hooks->run) {
		hooks->run = xmalloc(sizeof(*hooks->run));
		hook_run_init(hooks->run, hooks->owner.loop, hooks->owner.spawner);
	}
	if (stderr_fd >= 0) {
		started = hook_run_start(hooks->run, hook->exec->argv, hook->envp, input, length,
					 stderr_fd, hook->exec->timeout_ms, on_run_done, hooks);
		close(stderr_fd);
	} else {
		free(input);
	}
	if (started == 0)
		return;
	release_slot(hooks);
	char why[HOOK_MESSAGE_MAX];
	snprintf(why, sizeof(why), "exec %s: %s", hook->exec->argv[0], strerror(-started));
	hook_finished(hooks, hook, why);
}

/* Runs the next hook of the current job, or the next job. Always from the
 * loop, so that `finished` never runs inside the caller of
 * task_hooks_run. */
static void on_step(struct loop_timer *timer)
{
	struct task_hooks *hooks = timer->data;
	if (exec_hook_running(hooks))
		return;
	if (!hooks->job_active) {
		if (!hooks->queue_length)
			return;
		hooks->job = hooks->queue[0];
		memmove(hooks->queue, hooks->queue + 1,
			(hooks->queue_length - 1) * sizeof(*hooks->queue));
		hooks->queue_length--;
		hooks->job_active = true;
		hooks->job_cancelled = false;
		hooks->next_hook = 0;
	}
	while (hooks->next_hook < hooks->count &&
	       !would_run(&hooks->hooks[hooks->next_hook], hooks->job.stage))
		hooks->next_hook++;
	/* Cancelled between two of its hooks: the rest do not run. */
	if (hooks->job_cancelled || hooks->next_hook == hooks->count) {
		stop_waiting(hooks);
		end_job(hooks, !hooks->job_cancelled, NULL);
		loop_timer_arm(hooks->owner.loop, &hooks->step, loop_now_ms());
		return;
	}
	struct task_hook *hook = &hooks->hooks[hooks->next_hook];
	if (!hook->builtin && !take_slot(hooks))
		return; /* release_slot of another task steps this one again */
	start_hook(hooks, hook);
}

void task_hooks_free(struct task_hooks *hooks)
{
	if (!hooks->owner.loop)
		return;
	if (hooks->run) {
		hook_run_free(hooks->run);
		free(hooks->run);
		hooks->run = NULL;
	}
	stop_waiting(hooks);
	release_slot(hooks);
	loop_timer_cancel(hooks->owner.loop, &hooks->step);
	for (size_t i = 0; i < hooks->count; i++) {
		start_additions_free(&hooks->hooks[i].last);
		string_vector_free(hooks->hooks[i].envp);
	}
	free(hooks->hooks);
	for (size_t i = 0; i < hooks->state_count; i++) {
		free(hooks->states[i].name);
		json_decref(hooks->states[i].state);
	}
	free(hooks->states);
	free(hooks->queue);
	memset(hooks, 0, sizeof(*hooks));
}
