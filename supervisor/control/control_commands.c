#include "supervisor/control/control_commands.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json_text.h"
#include "base/loop.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "supervisor/control/exec_session.h"
#include "supervisor/control/status_reply.h"
#include "supervisor/control/task_inspect.h"
#include "supervisor/output/output_line.h"
#include "supervisor/tasks/task_usage.h"

/* ---- replies ---- */

static void send_json(struct control_client *client, json_t *reply)
{
	size_t length;
	char *text = json_line_take(reply, &length);
	if (!text)
		return;
	control_client_send(client, text, length);
	free(text);
}

/* What one request acting on every instance of a task (config
 * `instances:`) gathers of each instance's reply: one reply goes out,
 * ok when every one was (run_on_instances). */
struct reply_batch {
	char message[4096];
	size_t used;
	bool failed;
};

/* Where a handler's ok or error goes: to the client at once, or, with
 * `batch`, into the one reply of a request on every instance. Handlers
 * are handed it, so that what a reply does is said where it is made. */
struct reply {
	struct control_client *client;
	struct reply_batch *batch; /* NULL: sent at once */
};

static void batch_add(struct reply_batch *batch, const char *message, bool failed)
{
	size_t room = sizeof(batch->message) - batch->used;
	int wrote =
	    snprintf(batch->message + batch->used, room, "%s%s", batch->used ? "; " : "", message);
	batch->used += wrote > 0 && (size_t)wrote < room ? (size_t)wrote : 0;
	batch->failed |= failed;
}

static void reply_ok(struct reply *reply, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static void reply_ok(struct reply *reply, const char *format, ...)
{
	char message[512];
	va_list args;
	va_start(args, format);
	vsnprintf(message, sizeof(message), format, args);
	va_end(args);
	if (reply->batch) {
		batch_add(reply->batch, message, false);
		return;
	}
	json_t *answer = json_object();
	json_object_set_new(answer, "ok", json_true());
	json_object_set_new(answer, "message", json_string_lossy(message, strlen(message)));
	send_json(reply->client, answer);
}

static void reply_error(struct reply *reply, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static void reply_error(struct reply *reply, const char *format, ...)
{
	char message[1024];
	va_list args;
	va_start(args, format);
	vsnprintf(message, sizeof(message), format, args);
	va_end(args);
	if (reply->batch) {
		batch_add(reply->batch, message, true);
		return;
	}
	char *answer = control_reply_error(message);
	control_client_send(reply->client, answer, strlen(answer));
	free(answer);
}

/* ---- finding what a request names ---- */

/* The lookups of control_scope.h, their errors replied. A reply's
 * message is at most 1024 bytes (reply_error). */

static struct group *lookup_group(struct control_context *context, struct reply *reply,
				  const char *target)
{
	char error[1024];
	struct group *group = control_scope_group(context->groups, context->group_count, target,
						  error, sizeof(error));
	if (!group)
		reply_error(reply, "%s", error);
	return group;
}

static struct task *lookup_task(struct control_context *context, struct reply *reply,
				const char *target)
{
	char error[1024];
	struct task *task =
	    control_scope_task(context->groups, context->group_count, target, error, sizeof(error));
	if (!task)
		reply_error(reply, "%s", error);
	return task;
}

static struct group *instances_target(struct control_context *context, const char *target,
				      const char **name, size_t *count)
{
	return control_scope_instances(context->groups, context->group_count, target, name, count);
}

/* false after replying the error. */
static bool resolve_scope(struct control_context *context, struct reply *reply, const char *target,
			  struct control_scope *scope)
{
	char error[1024];
	if (control_scope_resolve(context->groups, context->group_count, target, scope, error,
				  sizeof(error)) == 0)
		return true;
	reply_error(reply, "%s", error);
	return false;
}

/* ---- status ---- */

/* The usage readings a status of many tasks found missing or stale, read
 * once its reply is out: a batch per idle turn of the loop, so that a
 * pass over 1000 tasks (about 10 ms of reads) never holds up a request
 * that comes meanwhile (task_usage.h). */
static void on_usage_refresh(struct loop_idle *idle)
{
	struct control_context *context = idle->data;
	if (!task_usage_refresh_some(context->groups, context->group_count, &context->usage_cursor,
				     loop_now_ms(), TASK_USAGE_REFRESH_BATCH))
		loop_idle_request(context->loop, &context->usage_refresh);
}

/* The pass starts TASK_USAGE_REFRESH_DELAY_MS after the reply, not at the
 * loop's next idle turn: a client reading a status of 1000 tasks (550 KB)
 * and printing it is still at work then, and on a machine of few CPUs the
 * ~10 ms of reads would compete with it (docs/benchmarks-history.md, bench_control). */
static void on_usage_refresh_due(struct loop_timer *timer)
{
	struct control_context *context = timer->data;
	loop_idle_request(context->loop, &context->usage_refresh);
}

/* A pass under way goes on from where it is: what it passed was read
 * during it. A pass due already is not put off by a later reply. */
void control_commands_refresh_usage(struct control_context *context)
{
	if (!context->loop)
		return;
	if (!context->usage_refresh.callback) {
		loop_idle_init(&context->usage_refresh, on_usage_refresh, context);
		loop_timer_init(&context->usage_refresh_due, on_usage_refresh_due, context);
	}
	if (!context->usage_refresh.pending && !loop_timer_armed(&context->usage_refresh_due))
		loop_timer_arm(context->loop, &context->usage_refresh_due,
			       loop_now_ms() + TASK_USAGE_REFRESH_DELAY_MS);
}

static void run_status(struct control_context *context, struct reply *reply,
		       const struct control_request *request)
{
	struct control_scope scope;
	if (!resolve_scope(context, reply, request->target, &scope))
		return;
	/* One task: its usage at most TASK_USAGE_FRESH_MS old, and a buffer
	 * of its own size. */
	struct status_reply one = {.recent_usage = true};
	struct status_reply *status = scope.task ? &one : &context->status_many;
	status->stale_usage = false;
	size_t length, capacity;
	struct status_self self = {
	    .started_wall_ms = context->started_wall_ms ? *context->started_wall_ms : 0,
	    .upgrades = context->counters ? context->counters->upgrades : 0,
	    .restores = context->counters ? context->counters->restores : 0,
	};
	char *line = status_reply_line(status, &self, context->groups, context->group_count, &scope,
				       loop_now_ms(), &length, &capacity);
	control_client_send_owned(reply->client, line, length, capacity);
	if (status->stale_usage)
		control_commands_refresh_usage(context);
}

/* ---- restarts, stop, start, signal ---- */

/* "dead (exited with code 1)", "pending", "dead (stopped)". */
static void describe_state(const struct task *task, char *buffer, size_t size)
{
	const struct runner *runner = &task->runner;
	if (runner->state != TASK_DEAD || !runner->has_exited) {
		snprintf(buffer, size, "%s", runner_shown_state(runner));
		return;
	}
	char exit[64];
	task_exit_describe(&runner->last_exit, exit, sizeof(exit));
	snprintf(buffer, size, "dead (%s%s)", exit,
		 runner->last_exit_requested ? ", stopped by corral" : "");
}

static bool refuse_when_stopping(struct control_context *context, struct reply *reply,
				 const struct group *group)
{
	if (context->shutting_down(context->supervisor)) {
		reply_error(reply, "corral is shutting down: nothing can be started any more");
		return true;
	}
	if (group->stop_mode == GROUP_STOPPING) {
		reply_error(reply,
			    "group %s is stopping (%s): use `corral restart --all %s` to run it "
			    "again",
			    group->config->name, group->stop_reason, group->config->name);
		return true;
	}
	return false;
}

static void reply_gate_closed(struct reply *reply, const struct task *task)
{
	const struct group *group = task->group;
	reply_error(
	    reply,
	    "%s is a %s task and group %s is in state %s, where that stage cannot start "
	    "again: use `corral restart --all %s` to run the whole group in lifecycle order",
	    task->config->full_name, lifecycle_stage_name(task->config->stage), group->config->name,
	    coordinator_state_name(group->coordinator.state), group->config->name);
}

static void run_restart_task(struct control_context *context, struct reply *reply,
			     struct task *task, bool force)
{
	if (refuse_when_stopping(context, reply, task->group))
		return;
	uint64_t now = loop_now_ms();
	char state[128];
	describe_state(task, state, sizeof(state));
	enum runner_request_result result = force ? group_force_restart_task(task->group, task, now)
						  : group_restart_task(task->group, task, now);
	switch (result) {
	case RUNNER_REQUEST_DONE:
		reply_ok(reply, "%s: %s", task->config->full_name,
			 force && strncmp(state, "dead", 4) == 0 ? "will run again" : "restarting");
		return;
	case RUNNER_REQUEST_NOT_RUNNING:
		/* Suggest only what will work: --force is refused where the
		 * task's gate cannot open again. */
		if (group_can_run_again(task->group, task))
			reply_error(reply,
				    "%s is %s: only a running task can be restarted; use `corral "
				    "restart --force %s` to run it again",
				    task->config->full_name, state, task->config->full_name);
		else
			reply_error(reply,
				    "%s is %s: only a running task can be restarted, and a %s "
				    "task cannot start again while group %s is in state %s; use "
				    "`corral restart --all %s` to run the whole group in lifecycle "
				    "order",
				    task->config->full_name, state,
				    lifecycle_stage_name(task->config->stage),
				    task->group->config->name,
				    coordinator_state_name(task->group->coordinator.state),
				    task->group->config->name);
		return;
	case RUNNER_REQUEST_GATE_CLOSED:
		reply_gate_closed(reply, task);
		return;
	case RUNNER_REQUEST_STOPPING:
		reply_error(reply, "%s is being stopped: it cannot be restarted now",
			    task->config->full_name);
		return;
	}
}

/* What a pending task waits for, in words: "its restart delay", "stack/
 * migrate to complete", "the main stage's gate". */
static void describe_pending(const struct task *task, char *buffer, size_t size)
{
	const struct group *group = task->group;
	if (task->config->stage == STAGE_POSTSTOP) {
		snprintf(buffer, size, "a poststop task runs once the rest of group %s has stopped",
			 group->config->name);
		return;
	}
	char waiting[192];
	if (task_dependencies_describe_wait(task, waiting, sizeof(waiting))) {
		snprintf(buffer, size, "it starts once what it waits for holds: it %s", waiting);
		return;
	}
	snprintf(buffer, size, "it starts when the %s stage's gate opens (group %s is in state %s)",
		 lifecycle_stage_name(task->config->stage), group->config->name,
		 coordinator_state_name(group->coordinator.state));
}

/* `corral start`: a dead task runs again (as restart --force); a running
 * one is refused, as supervisorctl does; a pending one is told what it
 * waits for, unless only a restart delay held it. */
static void run_start(struct control_context *context, struct reply *reply, struct task *task)
{
	const char *name = task->config->full_name;
	char what[320];
	/* First: during a shutdown a task still running is only waiting for
	 * its turn to stop, and "already running" would mislead. */
	if (context->shutting_down(context->supervisor)) {
		reply_error(reply, "corral is shutting down: nothing can be started any more");
		return;
	}
	switch (task->runner.state) {
	case TASK_STARTING:
	case TASK_RUNNING:
		if (task->runner.stop_intent != RUNNER_STOP_NONE)
			reply_error(reply, "%s is being stopped: start it once it is dead", name);
		else
			reply_error(reply,
				    "%s is already %s; use `corral restart %s` to restart it", name,
				    task_state_name(task->runner.state), name);
		return;
	case TASK_PENDING:
		if (runner_waiting_out_delay(&task->runner))
			break; /* restart --force skips the delay */
		if (refuse_when_stopping(context, reply, task->group))
			return;
		describe_pending(task, what, sizeof(what));
		reply_ok(reply, "%s is pending: %s", name, what);
		return;
	case TASK_DEAD:
		break;
	}
	run_restart_task(context, reply, task, true);
}

/* `restart --rolling GROUP/TASK`: a roll of the task's instances begins,
 * and the client follows it: a line as each instance is replaced, then
 * one that says how it ended (instance_roll.h). */
static void run_rolling_restart(struct control_context *context, struct reply *reply,
				const struct control_request *request)
{
	const char *name;
	size_t count;
	struct group *group = instances_target(context, request->target, &name, &count);
	if (!group) {
		struct task *task = lookup_task(context, reply, request->target);
		if (task)
			reply_error(reply,
				    "%s has no instances: restart --rolling replaces the instances "
				    "of a task written with instances: N; `corral restart %s` "
				    "restarts it",
				    request->target, request->target);
		return;
	}
	if (refuse_when_stopping(context, reply, group))
		return;
	struct task *members[count ? count : 1];
	size_t member_count = 0;
	for (size_t i = 0; i < group->task_count && member_count < count; i++) {
		struct task *task = group->tasks[i];
		if (!task->removed && task->config->instance_of &&
		    strcmp(task->config->instance_of, name) == 0)
			members[member_count++] = task;
	}
	char error[320];
	struct instance_roll *roll = instance_roll_begin(
	    group, name, members, member_count,
	    request->max_unavailable ? request->max_unavailable : 1, false, error, sizeof(error));
	if (!roll) {
		reply_error(reply, "%s", error);
		return;
	}
	unsigned at_once = roll->max_unavailable;
	reply_ok(reply, "%s: rolling restart of %zu instance%s, %u at a time", roll->full_name,
		 member_count, member_count == 1 ? "" : "s", at_once);
	control_client_follow(reply->client, CONTROL_FOLLOW_ROLL, roll);
}

static void run_restart(struct control_context *context, struct reply *reply,
			const struct control_request *request)
{
	if (request->restart_mode == CONTROL_RESTART_ROLLING) {
		run_rolling_restart(context, reply, request);
		return;
	}
	if (request->restart_mode == CONTROL_RESTART_TASK ||
	    request->restart_mode == CONTROL_RESTART_FORCE) {
		struct task *task = lookup_task(context, reply, request->target);
		if (task)
			run_restart_task(context, reply, task,
					 request->restart_mode == CONTROL_RESTART_FORCE);
		return;
	}
	struct group *group = lookup_group(context, reply, request->target);
	if (!group)
		return;
	if (context->shutting_down(context->supervisor)) {
		reply_error(reply, "corral is shutting down: nothing can be started any more");
		return;
	}
	if (request->restart_mode == CONTROL_RESTART_ALL) {
		group_restart_all(group, loop_now_ms());
		reply_ok(reply, "group %s: restarting every task in lifecycle order",
			 group->config->name);
		return;
	}
	if (refuse_when_stopping(context, reply, group))
		return;
	group_restart_running(group, loop_now_ms());
	reply_ok(reply, "group %s: restarting the running tasks", group->config->name);
}

static void run_stop(struct control_context *context, struct reply *reply,
		     const struct control_request *request)
{
	struct task *task = lookup_task(context, reply, request->target);
	if (!task)
		return;
	if (task->runner.state == TASK_DEAD) {
		char state[128];
		describe_state(task, state, sizeof(state));
		reply_ok(reply, "%s is already %s", task->config->full_name, state);
		return;
	}
	group_stop_task(task->group, task, loop_now_ms());
	reply_ok(reply, "%s: stopping", task->config->full_name);
}

static void run_signal(struct control_context *context, struct reply *reply,
		       const struct control_request *request)
{
	struct task *task = lookup_task(context, reply, request->target);
	if (!task)
		return;
	int failure = task_send_signal(task, request->signal_number);
	if (failure == -ESRCH) {
		char state[128];
		describe_state(task, state, sizeof(state));
		reply_error(reply, "%s is %s: there is no process to signal",
			    task->config->full_name, state);
		return;
	}
	if (failure < 0) {
		reply_error(reply, "%s: sending %s: %s", task->config->full_name,
			    signal_name(request->signal_number), strerror(-failure));
		return;
	}
	reply_ok(reply, "%s: sent %s to pid %d", task->config->full_name,
		 signal_name(request->signal_number), (int)task_command_pid(task));
}

/* ---- logs and events ---- */

struct array_builder {
	json_t *array;
};

static void add_event(void *pointer, uint64_t time_ms, unsigned tag, const char *text,
		      size_t length)
{
	struct array_builder *builder = pointer;
	json_t *event = json_loadb(text, length, 0, NULL);
	if (event)
		json_array_append_new(builder->array, event);
}

/* Kept lines of one or more tasks, to be merged by time. */
struct log_line {
	uint64_t time_ms;
	size_t order; /* as collected: ties keep each task's own order */
	json_t *json;
};

struct log_collector {
	struct log_line *lines;
	size_t count, capacity;
	const char *task; /* the one being collected */
};

static void collect_line(void *pointer, uint64_t time_ms, unsigned stream, const char *text,
			 size_t length)
{
	struct log_collector *collector = pointer;
	if (collector->count == collector->capacity) {
		collector->capacity = collector->capacity ? 2 * collector->capacity : 256;
		collector->lines =
		    xreallocarray(collector->lines, collector->capacity, sizeof(*collector->lines));
	}
	collector->lines[collector->count] = (struct log_line){
	    .time_ms = time_ms,
	    .order = collector->count,
	    .json = output_line_json(time_ms, collector->task, (enum output_stream)stream, text,
				     length),
	};
	collector->count++;
}

static int by_time(const void *a, const void *b)
{
	const struct log_line *x = a, *y = b;
	if (x->time_ms != y->time_ms)
		return x->time_ms < y->time_ms ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The kept lines of one task, of a group's tasks or of every task,
 * interleaved by time; `tail` of them (0: all). */
static json_t *collect_logs(struct control_context *context, const struct control_scope *scope,
			    unsigned tail)
{
	struct log_collector collector = {0};
	for (size_t g = 0; g < context->group_count; g++)
		for (size_t t = 0; t < context->groups[g]->task_count; t++) {
			const struct task *task = context->groups[g]->tasks[t];
			if (!control_scope_includes(scope, task))
				continue;
			collector.task = task->config->full_name;
			line_ring_visit(&task->logs, tail, collect_line, &collector);
		}
	if (collector.count) /* lines is NULL without any, which qsort may not get */
		qsort(collector.lines, collector.count, sizeof(*collector.lines), by_time);
	size_t first = tail && tail < collector.count ? collector.count - tail : 0;
	json_t *array = json_array();
	for (size_t i = 0; i < collector.count; i++) {
		if (i >= first)
			json_array_append(array, collector.lines[i].json);
		json_decref(collector.lines[i].json);
	}
	free(collector.lines);
	return array;
}

static void run_logs(struct control_context *context, struct reply *reply,
		     const struct control_request *request)
{
	struct control_scope scope;
	if (!resolve_scope(context, reply, request->target, &scope))
		return;
	if (scope.instances_of && request->follow) {
		reply_error(reply, "%s has instances: follow one (%s@0) or the group (%s)",
			    request->target, request->target, scope.group->config->name);
		return;
	}
	json_t *answer = json_object();
	json_object_set_new(answer, "ok", json_true());
	if (scope.task)
		json_object_set_new(answer, "task", json_string(scope.task->config->full_name));
	json_object_set_new(answer, "lines", collect_logs(context, &scope, request->tail));
	send_json(reply->client, answer);
	if (!request->follow)
		return;
	if (scope.task)
		control_client_follow(reply->client, CONTROL_FOLLOW_LOGS, scope.task);
	else if (scope.group)
		control_client_follow(reply->client, CONTROL_FOLLOW_LOGS_GROUP, scope.group);
	else
		control_client_follow(reply->client, CONTROL_FOLLOW_LOGS_ALL, NULL);
}

static void run_events(struct control_context *context, struct reply *reply,
		       const struct control_request *request)
{
	struct array_builder builder = {.array = json_array()};
	line_ring_visit(&context->events->recent, request->tail, add_event, &builder);
	json_t *answer = json_object();
	json_object_set_new(answer, "ok", json_true());
	json_object_set_new(answer, "events", builder.array);
	send_json(reply->client, answer);
	if (request->follow)
		control_client_follow(reply->client, CONTROL_FOLLOW_EVENTS, NULL);
}

/* Secrets (env values) only for root and corral's own user. */
static void run_inspect(struct control_context *context, struct reply *reply,
			const struct control_request *request)
{
	struct task *task = lookup_task(context, reply, request->target);
	if (!task)
		return;
	if (request->show_secrets && !control_client_is_owner(reply->client)) {
		reply_error(reply, "--show-secrets: only root and corral's own user may see "
				   "the values of secret variables");
		return;
	}
	json_t *answer = json_object();
	json_object_set_new(answer, "ok", json_true());
	json_object_set_new(answer, "inspect", task_inspect_json(task, request->show_secrets));
	send_json(reply->client, answer);
}

void control_commands_exec_client_gone(void *pointer, const void *session)
{
	struct control_context *context = pointer;
	exec_session_client_gone(context->exec_sessions, session);
}

/* A command inside a running task (exec_session.h). It runs code as the
 * task's user, which restart and stop do not: root and corral's own user
 * only. */
static void run_exec(struct control_context *context, struct reply *reply,
		     const struct control_request *request)
{
	int fds[CONTROL_PASSED_FDS_MAX];
	size_t fd_count = control_client_take_fds(reply->client, fds);
	for (size_t i = 0; i < fd_count; i++)
		close(fds[i]);
	struct task *task = NULL;
	char error[512] = "";
	if (fd_count)
		/* A client's fd in the task could be reopened there through
		 * /proc (the operator's terminal, read after the exec): corral
		 * makes the command's streams itself (exec_streams.h). */
		snprintf(error, sizeof(error),
			 "exec takes no fds: corral makes the command's pipes or terminal and "
			 "hands the client their other ends (a corral exec older than the "
			 "server?)");
	/* A task's client got here only with exec in its control: list. */
	else if (!control_client_is_owner(reply->client) && !control_client_task(reply->client) &&
		 !context->group_may_exec(context->supervisor))
		snprintf(error, sizeof(error),
			 "exec runs code in a task: only root and corral's own user may, and the "
			 "control group only with control: {exec: true}");
	else if (request->user[0] && !control_client_is_owner(reply->client))
		snprintf(error, sizeof(error),
			 "-u: only root and corral's own user may exec as another user");
	else if (!(task = lookup_task(context, reply, request->target)))
		error[0] = '\0'; /* lookup_task replied */
	else if (task->runner.state != TASK_RUNNING || !task_command_pid(task)) {
		char state[128];
		describe_state(task, state, sizeof(state));
		snprintf(error, sizeof(error), "%s is %s: exec needs a running task",
			 task->config->full_name, state);
	}
	if (!error[0] && task &&
	    exec_session_start(context->exec_sessions, task, reply->client, request, error,
			       sizeof(error)) == 0)
		return;
	if (error[0])
		reply_error(reply, "%s", error);
}

static void run_reload(struct control_context *context, struct reply *reply,
		       const struct control_request *request)
{
	/* Any file corral can read would become commands run as corral. The
	 * running config's own file, named by its path, is no other file:
	 * it is read again from where corral read it, whatever `path`
	 * points at by the time the reload reads it. */
	bool names_running_config = request->path[0] && !control_client_is_owner(reply->client) &&
				    context->is_running_config(context->supervisor, request->path);
	if (request->path[0] && !control_client_is_owner(reply->client) && !names_running_config) {
		reply_error(reply, "reload of another file than the running config: only root "
				   "and corral's own user may name one (the control group may "
				   "reload the same file)");
		return;
	}
	struct reload_options options = {
	    .path = request->path[0] && !names_running_config ? request->path : NULL,
	    .dry_run = request->dry_run,
	    .rerun_completed = request->rerun_completed,
	};
	send_json(reply->client, context->reload(context->supervisor, &options));
}

unsigned control_commands_task_rights(void *pointer, const char *name)
{
	struct control_context *context = pointer;
	for (size_t g = 0; g < context->group_count; g++)
		for (size_t t = 0; t < context->groups[g]->task_count; t++) {
			const struct task *task = context->groups[g]->tasks[t];
			if (!task->removed && strcmp(task->config->full_name, name) == 0)
				return task->config->control_rights;
		}
	return 0;
}

/* A task publishes its lines only while someone follows them: its own
 * followers, its group's and those of every task. */
void control_commands_followers_changed(void *pointer, enum control_follow kind,
					const void *subject, int delta)
{
	struct control_context *context = pointer;
	for (size_t g = 0; g < context->group_count; g++)
		for (size_t t = 0; t < context->groups[g]->task_count; t++) {
			struct task *task = context->groups[g]->tasks[t];
			bool follows =
			    kind == CONTROL_FOLLOW_LOGS_ALL ||
			    (kind == CONTROL_FOLLOW_LOGS_GROUP && task->group == subject) ||
			    (kind == CONTROL_FOLLOW_LOGS && task == subject);
			if (follows) {
				task->log_followers = (unsigned)((int)task->log_followers + delta);
				task_sinks_changed(task);
			}
		}
}

/* Restart, stop, start and signal of "group/task" when the task was
 * written with `instances:`: each instance in turn, one reply. */
static bool acts_on_one_task(const struct control_request *request)
{
	switch (request->command) {
	case CONTROL_RESTART:
		return request->restart_mode == CONTROL_RESTART_TASK ||
		       request->restart_mode == CONTROL_RESTART_FORCE;
	case CONTROL_STOP:
	case CONTROL_START:
	case CONTROL_SIGNAL:
		return true;
	default:
		return false;
	}
}

/* Answered now only when refused at once; else once the new binary's
 * check ends: with why it failed, or by the new corral on the same
 * connection (upgrade.h). */
static void run_upgrade(struct control_context *context, struct reply *reply,
			const struct control_request *request)
{
	char error[1024];
	/* A task granted `upgrade` (control_server.c checked the grant) may
	 * have corral re-exec its own binary, as SIGUSR2 from it would; never
	 * a binary of its choosing. */
	const char *task = control_client_task(reply->client);
	if (task && request->path[0]) {
		reply_error(reply,
			    "upgrade: %s is a task: its upgrade right re-runs corral's own binary "
			    "only, not %s",
			    task, request->path);
		return;
	}
	if (!task && !control_client_is_owner(reply->client)) {
		reply_error(reply, "upgrade: only root or corral's own user may replace corral");
		return;
	}
	if (context->upgrade(context->supervisor, reply->client, request->path, error,
			     sizeof(error)) < 0)
		reply_error(reply, "upgrade: %s", error);
}

/* One request, its replies through `reply`. */
static void handle(struct control_context *context, struct reply *reply,
		   const struct control_request *request)
{
	switch (request->command) {
	case CONTROL_STATUS:
		run_status(context, reply, request);
		return;
	case CONTROL_RESTART:
		run_restart(context, reply, request);
		return;
	case CONTROL_STOP:
		run_stop(context, reply, request);
		return;
	case CONTROL_START: {
		struct task *task = lookup_task(context, reply, request->target);
		if (task)
			run_start(context, reply, task);
		return;
	}
	case CONTROL_SIGNAL:
		run_signal(context, reply, request);
		return;
	case CONTROL_LOGS:
		run_logs(context, reply, request);
		return;
	case CONTROL_EVENTS:
		run_events(context, reply, request);
		return;
	case CONTROL_RELOAD:
		run_reload(context, reply, request);
		return;
	case CONTROL_EXEC:
		run_exec(context, reply, request);
		return;
	case CONTROL_INSPECT:
		run_inspect(context, reply, request);
		return;
	case CONTROL_SCALE:
		send_json(reply->client, context->scale(context->supervisor, request));
		return;
	case CONTROL_UPGRADE:
		run_upgrade(context, reply, request);
		return;
	case CONTROL_SHUTDOWN:
		reply_ok(reply, "shutting down gracefully");
		context->shutdown(context->supervisor, "shutdown requested on the control socket");
		return;
	}
	reply_error(reply, "unknown command");
}

/* Each instance handled as a request of its own, its replies gathered;
 * then one reply to the client. */
static bool run_on_instances(struct control_context *context, struct control_client *client,
			     const struct control_request *request)
{
	const char *name;
	size_t count;
	struct group *group;
	if (!acts_on_one_task(request) ||
	    !(group = instances_target(context, request->target, &name, &count)))
		return false;
	struct reply_batch gathered = {0};
	struct reply each = {client, &gathered};
	for (size_t i = 0; i < group->task_count; i++) {
		const struct task_config *config = group->tasks[i]->config;
		if (!config->instance_of || strcmp(config->instance_of, name) != 0)
			continue;
		struct control_request one = *request;
		snprintf(one.target, sizeof(one.target), "%s", config->full_name);
		handle(context, &each, &one);
	}
	struct reply once = {client, NULL};
	if (gathered.failed)
		reply_error(&once, "%s", gathered.message);
	else
		reply_ok(&once, "%s", gathered.message);
	return true;
}

void control_commands_handle(void *pointer, struct control_client *client,
			     const struct control_request *request)
{
	struct control_context *context = pointer;
	if (context->counters && (unsigned)request->command < CONTROL_COMMAND_COUNT)
		context->counters->control_requests[request->command]++;
	if (run_on_instances(context, client, request))
		return;
	struct reply reply = {client, NULL};
	handle(context, &reply, request);
}
