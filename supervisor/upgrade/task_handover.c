#include "supervisor/upgrade/task_handover.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "base/loop.h"
#include "base/xmalloc.h"
#include "hooks/start_additions.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/pid_index.h"

/* ---- what is not handed over: refused, the old corral keeps running ---- */

/* A prestart hook that said `done` is not run again: what it returned
 * would have to go over. */
static bool prestart_hook_done(const struct task *task)
{
	for (size_t i = 0; task->hooks && i < task->hooks->count; i++)
		if (task->hooks->hooks[i].stage == HOOK_STAGE_PRESTART &&
		    task->hooks->hooks[i].done)
			return true;
	return false;
}

bool task_handover_possible(const struct task *task, char *error, size_t error_size)
{
	const struct runner *runner = &task->runner;
	const char *reason = NULL;
	if (runner->state == TASK_STARTING)
		reason = "it is starting";
	else if (runner->stop_intent != RUNNER_STOP_NONE || runner->prekill_pending ||
		 runner->prekill_ahead != RUNNER_PREKILL_AHEAD_NONE)
		reason = "it is being stopped";
	else if (task->awaiting_empty_cgroup)
		reason = "its run is ending (processes are left in its cgroup)";
	else if (task_hooks_busy(task->hooks))
		reason = "its hooks are running";
	else if (task->additions.device_count || prestart_hook_done(task))
		reason = "its prestart hooks added devices, or said done, which the hand-over "
			 "does not carry yet";
	else if (task->isolation && (task->config->isolation.network == NETWORK_BRIDGE ||
				     task->config->isolation.network == NETWORK_GROUP))
		reason = "its network mode is bridge or group, whose veths and shared namespace "
			 "the hand-over does not carry yet";
	else if (task->shared_mounts_taken)
		reason = "it has bidirectional mounts, which the hand-over does not carry yet";
	else if (task->reaper_status_write >= 0 || task->readiness.notify_pipe_write >= 0)
		reason = "it is starting"; /* the spawn's ends of its sockets and pipes */
	else if (task->rolling)
		reason = "a rolling restart replaces it";
	else if (task->execs_running)
		reason = "a `corral exec` runs in it";
	else if (task->next_config || task->removed)
		reason = "a reload's change waits for its next run";
	else if (task->output.write_fd >= 0 ||
		 (task->error_output && task->error_output->write_fd >= 0))
		reason = "corral holds its pipe's write end (no /proc)";
	else if (task->readiness.notify && task->readiness.notify->path)
		reason = "its notify socket has a path";
	else if (task->dependency_waiting || task->outside)
		reason = "it waits to start (after:, wait_for:)";
	if (reason)
		snprintf(error, error_size, "%s: %s", task->config->full_name, reason);
	return reason == NULL;
}

/* ---- writing ---- */

static json_t *deadline(const struct loop_timer *timer)
{
	return loop_timer_armed(timer) ? json_integer((json_int_t)timer->deadline_ms) : json_null();
}

static json_t *output_write(struct handover_writer *writer, const struct task_output *output)
{
	if (!output)
		return json_null();
	const char *held = output->held ? output->held + output->held_start : "";
	size_t held_length = output->held ? output->held_end - output->held_start : 0;
	return json_pack(
	    "{s:o,s:o,s:b,s:o,s:I}", "fd", handover_fd(writer, output->watch.fd), "line",
	    handover_blob(writer, output->line ? output->line : "", output->line_length),
	    "line_complete", output->line_complete, "held",
	    handover_blob(writer, held, held_length), "dropped_lines",
	    (json_int_t)output->dropped_lines);
}

/* The recent lines, as [time_ms 8][tag 4][length 4][bytes]... */
struct ring_bytes {
	char *data;
	size_t length, capacity;
};

static void ring_line(void *context, uint64_t time_ms, unsigned tag, const char *text,
		      size_t length)
{
	struct ring_bytes *bytes = context;
	size_t need = bytes->length + 16 + length;
	if (need > bytes->capacity) {
		bytes->capacity = need * 2;
		bytes->data = xreallocarray(bytes->data, bytes->capacity, 1);
	}
	uint32_t header[4] = {(uint32_t)time_ms, (uint32_t)(time_ms >> 32), tag, (uint32_t)length};
	memcpy(bytes->data + bytes->length, header, sizeof(header));
	memcpy(bytes->data + bytes->length + 16, text, length);
	bytes->length = need;
}

static json_t *ring_write(struct handover_writer *writer, const struct line_ring *ring)
{
	struct ring_bytes bytes = {0};
	if (!writer->for_restore)
		line_ring_visit(ring, 0, ring_line, &bytes);
	json_t *blob = handover_blob(writer, bytes.data ? bytes.data : "", bytes.length);
	free(bytes.data);
	return blob;
}

static json_t *record_write(const struct probe_record *record)
{
	return json_pack("{s:b,s:b,s:s,s:I,s:i}", "has_result", record->has_result, "passed",
			 record->passed, "last_result", record->last_result, "at_ms",
			 (json_int_t)record->at_ms, "failures_in_a_row", record->failures_in_a_row);
}

static json_t *probe_write(const struct probe *probe, const struct probe_record *record)
{
	if (!probe->made)
		return json_null();
	/* A run in progress is not carried: it is run again at once. */
	json_t *due = probe->pid > 0 || probe->socket_watch.fd >= 0 ? json_integer(0)
								    : deadline(&probe->next_run);
	return json_pack("{s:b,s:b,s:o,s:o}", "active", probe->active, "passed_once",
			 probe->passed_once, "due_ms", due, "record", record_write(record));
}

static json_t *readiness_write(struct handover_writer *writer, const struct task *task)
{
	const struct task_readiness *readiness = &task->readiness;
	json_t *state =
	    json_pack("{s:i,s:s?,s:o}", "unhealthy_restarts", readiness->unhealthy_restarts,
		      "status_text", readiness->status_text, "notify_pipe_fd",
		      handover_fd(writer, readiness->notify_pipe.fd));
	if (readiness->notify) {
		json_object_set_new(state, "notify_fd",
				    handover_fd(writer, readiness->notify->socket.fd));
		json_object_set_new(state, "notify_env", json_string(readiness->notify->env));
		json_object_set_new(state, "watchdog_ms", deadline(&readiness->notify->watchdog));
	}
	if (readiness->probes) {
		json_object_set_new(state, "readiness_probe",
				    probe_write(&readiness->probes->readiness_probe,
						&readiness->probes->readiness_record));
		json_object_set_new(state, "health_probe",
				    probe_write(&readiness->probes->health_probe,
						&readiness->probes->health_record));
	}
	return state;
}

static json_t *runner_write(const struct runner *runner)
{
	json_t *state = json_pack(
	    "{s:i,s:i,s:i,s:b,s:b,s:b,s:b,s:b,s:b,s:s?,s:i,s:i,s:I,s:I,s:I,s:I}", "state",
	    runner->state, "step", runner->step, "readiness", runner->readiness, "failed",
	    runner->failed, "dormant", runner->dormant, "healthy", runner->healthy, "has_exited",
	    runner->has_exited, "last_exit_requested", runner->last_exit_requested,
	    "last_run_failed", runner->last_run_failed, "exit_rule", runner->exit_rule,
	    "restart_count", runner->restart_count, "run_count", runner->run_count, "started_at_ms",
	    (json_int_t)runner->started_at_ms, "next_start_ms", (json_int_t)runner->next_start_ms,
	    "resource_retry_ms", (json_int_t)runner->resource_retry_ms, "generation",
	    (json_int_t)runner->generation);
	const struct task_exit *exit = &runner->last_exit;
	json_object_set_new(state, "last_exit",
			    json_pack("{s:i,s:i,s:i,s:i}", "kind", exit->kind, "code", exit->code,
				      "signal", exit->signal, "oom_kills", exit->oom_kills));
	json_object_set_new(state, "tracker",
			    json_pack("{s:I,s:i,s:b}", "window_start_ms",
				      (json_int_t)runner->tracker.window_start_ms, "restarts",
				      runner->tracker.restarts, "window_open",
				      runner->tracker.window_open));
	if (runner->texts)
		json_object_set_new(state, "texts",
				    json_pack("{s:s,s:s,s:s}", "early_ready_how",
					      runner->texts->early_ready_how, "decision",
					      runner->texts->decision, "failure",
					      runner->texts->failure));
	return state;
}

/* Its hooks' states (one per name), and the environment its prestart
 * hooks added for this run (what `corral exec` gets too). Each prestart
 * hook runs again before the next start, and says again what it adds. */
static json_t *hooks_write(const struct task *task)
{
	if (!task->hooks)
		return json_null();
	json_t *states = json_object();
	for (size_t i = 0; i < task->hooks->state_count; i++)
		if (task->hooks->states[i].state)
			json_object_set(states, task->hooks->states[i].name,
					task->hooks->states[i].state);
	json_t *env = json_array();
	for (char **entry = task->additions.env; entry && *entry; entry++)
		json_array_append_new(env, json_string(*entry));
	return json_pack("{s:o,s:o}", "states", states, "env", env);
}

/* A task in a pid namespace of its own: corral's child is the reaper, and
 * its status socket says the command's pid and how it ended. */
static json_t *reaper_write(struct handover_writer *writer, const struct task *task)
{
	if (task->reaper_status_watch.fd < 0)
		return json_null();
	return json_pack("{s:o,s:i,s:b,s:b,s:i,s:i,s:i}", "fd",
			 handover_fd(writer, task->reaper_status_watch.fd), "command_pid",
			 task->command_pid, "started_unannounced", task->started_unannounced,
			 "exit_told", task->command_exit_told, "exit_kind", task->command_exit.kind,
			 "exit_code", task->command_exit.code, "exit_signal",
			 task->command_exit.signal);
}

json_t *task_handover_write(struct handover_writer *writer, const struct task *task)
{
	json_t *timers = json_array();
	for (int i = 0; i < RUNNER_TIMER_COUNT; i++)
		json_array_append_new(timers, deadline(&task->timers[i]));
	json_t *state = json_pack(
	    "{s:s,s:o,s:i,s:o,s:b,s:b,s:b,s:b,s:I,s:b,s:b,s:o,s:o,s:I}", "name",
	    task->config->full_name, "runner", runner_write(&task->runner), "pid", task->pid,
	    "pidfd", handover_fd(writer, task->pidfd_watch.fd), "failure_reported",
	    task->failure_reported, "failure_ignored", task->failure_ignored, "restart_held",
	    task->restart_held, "failed_by_dependency", task->failed_by_dependency,
	    "oom_kills_reported", (json_int_t)task->oom_kills_reported, "run_seen", task->run_seen,
	    "ready_seen", task->ready_seen, "timers", timers, "schedule_timer_ms",
	    deadline(&task->schedule_timer), "schedule_due_ms", (json_int_t)task->schedule_due_ms);
	/* Its slot with the keeper: records go on under the same one. */
	json_object_set_new(state, "keeper_slot", json_integer(task->keeper_slot));
	json_object_set_new(state, "cgroup_oom_at_start",
			    json_integer((json_int_t)task->cgroup.oom_kills_at_start));
	json_object_set_new(state, "cgroup_oom_of_execs",
			    json_integer((json_int_t)task->cgroup.oom_kills_of_execs));
	json_object_set_new(state, "output", output_write(writer, &task->output));
	json_object_set_new(state, "error_output", output_write(writer, task->error_output));
	json_object_set_new(state, "logs", ring_write(writer, &task->logs));
	json_object_set_new(state, "readiness", readiness_write(writer, task));
	json_object_set_new(state, "reaper", reaper_write(writer, task));
	json_object_set_new(state, "hooks", hooks_write(task));
	/* An isolated task's device program on its cgroup: the new corral
	 * replaces it with its own (the same rules) rather than add one. */
	json_object_set_new(state, "device_program_fd",
			    handover_fd(writer, task->devices.program_fd));
	return state;
}

/* ---- reading ---- */

static const char *const exit_rules[] = {"restart.success_exit", "restart.no_restart_exit",
					 "restart.policy", "restart.attempts"};

/* The runner's rule is static text: the same text of this binary. */
static const char *exit_rule(const char *name)
{
	for (size_t i = 0; name && i < sizeof(exit_rules) / sizeof(exit_rules[0]); i++)
		if (strcmp(name, exit_rules[i]) == 0)
			return exit_rules[i];
	return NULL;
}

static void copy_text(char *to, size_t size, const char *from)
{
	snprintf(to, size, "%s", from ? from : "");
}

static int runner_read(const json_t *state, struct runner *runner, char *error, size_t error_size)
{
	int64_t value = handover_int(state, "state", -1);
	if (value < TASK_PENDING || value > TASK_DEAD) {
		snprintf(error, error_size, "its state is not one this corral knows");
		return -EINVAL;
	}
	runner->state = (enum task_state)value;
	runner->step = (enum runner_step)handover_int(state, "step", 0);
	runner->readiness = (enum runner_readiness)handover_int(state, "readiness", 0);
	runner->failed = handover_bool(state, "failed");
	runner->dormant = handover_bool(state, "dormant");
	runner->healthy = handover_bool(state, "healthy");
	runner->has_exited = handover_bool(state, "has_exited");
	runner->last_exit_requested = handover_bool(state, "last_exit_requested");
	runner->last_run_failed = handover_bool(state, "last_run_failed");
	runner->exit_rule = exit_rule(handover_string(state, "exit_rule"));
	runner->restart_count = (unsigned)handover_int(state, "restart_count", 0);
	runner->run_count = (unsigned)handover_int(state, "run_count", 0);
	runner->started_at_ms = (uint64_t)handover_int(state, "started_at_ms", 0);
	runner->next_start_ms = (uint64_t)handover_int(state, "next_start_ms", 0);
	runner->resource_retry_ms = (uint64_t)handover_int(state, "resource_retry_ms", 0);
	runner->generation = (uint64_t)handover_int(state, "generation", 0);
	const json_t *exit = json_object_get(state, "last_exit");
	runner->last_exit = (struct task_exit){
	    .kind = (int)handover_int(exit, "kind", 0),
	    .code = (int)handover_int(exit, "code", 0),
	    .signal = (int)handover_int(exit, "signal", 0),
	    .oom_kills = (unsigned)handover_int(exit, "oom_kills", 0),
	};
	const json_t *tracker = json_object_get(state, "tracker");
	runner->tracker.window_start_ms = (uint64_t)handover_int(tracker, "window_start_ms", 0);
	runner->tracker.restarts = (unsigned)handover_int(tracker, "restarts", 0);
	runner->tracker.window_open = handover_bool(tracker, "window_open");
	const json_t *texts = json_object_get(state, "texts");
	if (json_is_object(texts)) {
		if (!runner->texts)
			runner->texts = xcalloc(1, sizeof(*runner->texts));
		copy_text(runner->texts->early_ready_how, sizeof(runner->texts->early_ready_how),
			  handover_string(texts, "early_ready_how"));
		copy_text(runner->texts->decision, sizeof(runner->texts->decision),
			  handover_string(texts, "decision"));
		copy_text(runner->texts->failure, sizeof(runner->texts->failure),
			  handover_string(texts, "failure"));
	}
	return 0;
}

static int output_read(const struct handover_reader *reader, const json_t *state,
		       struct task_output *output, char *error, size_t error_size)
{
	if (!output && json_is_null(state))
		return 0;
	if (!output || !json_is_object(state)) {
		snprintf(error, error_size, "its log.streams differ from the running corral's");
		return -EINVAL;
	}
	/* A task taken over that has not run since has no pipe yet
	 * (task_output_open's `pipe_later`): it gets one at its start. */
	if (json_is_null(json_object_get(state, "fd")))
		return 0;
	int fd = handover_fd_get(reader, state, "fd");
	const char *line, *held;
	size_t line_length, held_length;
	if (fd < 0 ||
	    !handover_blob_get(reader, json_object_get(state, "line"), &line, &line_length) ||
	    line_length > TASK_OUTPUT_LINE_MAX ||
	    !handover_blob_get(reader, json_object_get(state, "held"), &held, &held_length)) {
		snprintf(error, error_size, "its output pipe is not in the hand-over");
		return -EINVAL;
	}
	output->dropped_lines = (uint64_t)handover_int(state, "dropped_lines", 0);
	task_output_adopt(output, fd, line, line_length, handover_bool(state, "line_complete"),
			  held, held_length);
	return 0;
}

static void ring_read(const struct handover_reader *reader, const json_t *blob,
		      struct line_ring *ring)
{
	const char *data;
	size_t length;
	if (!handover_blob_get(reader, blob, &data, &length))
		return;
	for (size_t at = 0; at + 16 <= length;) {
		uint32_t header[4];
		memcpy(header, data + at, sizeof(header));
		if (header[3] > length - at - 16)
			break;
		line_ring_append(ring, (uint64_t)header[1] << 32 | header[0], header[2],
				 data + at + 16, header[3]);
		at += 16 + header[3];
	}
}

static void arm_at(struct loop *loop, struct loop_timer *timer, const json_t *due)
{
	if (json_is_integer(due))
		loop_timer_arm(loop, timer, (uint64_t)json_integer_value(due));
}

static void record_read(const json_t *state, struct probe_record *record)
{
	if (!json_is_object(state))
		return;
	record->has_result = handover_bool(state, "has_result");
	record->passed = handover_bool(state, "passed");
	copy_text(record->last_result, sizeof(record->last_result),
		  handover_string(state, "last_result"));
	record->at_ms = (uint64_t)handover_int(state, "at_ms", 0);
	record->failures_in_a_row = (unsigned)handover_int(state, "failures_in_a_row", 0);
}

/* An active probe runs next at its due time (at once for a run that was
 * in progress, whose result the old corral did not see). */
static void probe_read(const json_t *state, struct probe *probe, struct probe_record *record)
{
	if (!json_is_object(state) || !probe->made)
		return;
	record_read(json_object_get(state, "record"), record);
	if (!handover_bool(state, "active"))
		return;
	uint64_t now = loop_now_ms();
	int64_t due = handover_int(state, "due_ms", 0);
	probe_start_after(probe, (uint64_t)due > now ? (uint64_t)due - now : 0);
	probe->passed_once = handover_bool(state, "passed_once");
}

static int notify_read(const struct handover_reader *reader, const json_t *state, struct task *task,
		       char *error, size_t error_size)
{
	struct task_notify *notify = task->readiness.notify;
	if (!notify)
		return 0;
	int fd = handover_fd_get(reader, state, "notify_fd");
	const char *env = handover_string(state, "notify_env");
	if (fd < 0 || !env) {
		snprintf(error, error_size, "its notify socket is not in the hand-over");
		return -EINVAL;
	}
	/* The task's NOTIFY_SOCKET names the old socket: that one stays, and
	 * the next run is told the same name (an autobound name: always as
	 * long as the one task_init made). */
	if (task_plan_replace_assignment(&task->plan, notify->env, env) < 0) {
		snprintf(error, error_size, "its NOTIFY_SOCKET (%s) cannot be given again", env);
		return -EINVAL;
	}
	task_readiness_adopt_notify(task, fd, env);
	arm_at(task->services->loop, &notify->watchdog, json_object_get(state, "watchdog_ms"));
	return 0;
}

static void readiness_read(const struct handover_reader *reader, const json_t *state,
			   struct task *task)
{
	struct task_readiness *readiness = &task->readiness;
	readiness->unhealthy_restarts = (unsigned)handover_int(state, "unhealthy_restarts", 0);
	const char *status_text = handover_string(state, "status_text");
	if (status_text) {
		if (!readiness->status_text)
			readiness->status_text = xmalloc(TASK_STATUS_TEXT_MAX);
		copy_text(readiness->status_text, TASK_STATUS_TEXT_MAX, status_text);
	}
	/* notify: fd: the read end of the run's pipe, its newline to come. */
	int pipe_fd = handover_fd_get(reader, state, "notify_pipe_fd");
	if (pipe_fd >= 0 && readiness->notify_pipe.fd < 0) {
		readiness->notify_pipe.fd = pipe_fd;
		loop_watch_add(task->services->loop, &readiness->notify_pipe, EPOLLIN);
	}
	if (readiness->probes) {
		probe_read(json_object_get(state, "readiness_probe"),
			   &readiness->probes->readiness_probe,
			   &readiness->probes->readiness_record);
		probe_read(json_object_get(state, "health_probe"), &readiness->probes->health_probe,
			   &readiness->probes->health_record);
	}
}

static void hooks_read(const json_t *state, struct task *task)
{
	if (!task->hooks || !json_is_object(state))
		return;
	const char *name;
	json_t *value;
	json_object_foreach(json_object_get(state, "states"), name, value)
	    task_hooks_set_state(task->hooks, name, value);
	size_t index;
	json_array_foreach(json_object_get(state, "env"), index, value)
	{
		if (json_is_string(value))
			start_additions_append_env(&task->additions, json_string_value(value));
	}
	if (task->additions.env)
		task_plan_set_additions(&task->plan, task->additions.env);
}

static int reaper_read(const struct handover_reader *reader, const json_t *state, struct task *task,
		       char *error, size_t error_size)
{
	if (!json_is_object(state))
		return 0;
	int fd = handover_fd_get(reader, state, "fd");
	if (fd < 0 || !task->isolation || !task->isolation->reaper_argv) {
		snprintf(error, error_size, "its reaper's status socket is not in the hand-over");
		return -EINVAL;
	}
	task->reaper_status_watch.fd = fd;
	loop_watch_add(task->services->loop, &task->reaper_status_watch, EPOLLIN);
	task->command_pid = (pid_t)handover_int(state, "command_pid", 0);
	task->started_unannounced = handover_bool(state, "started_unannounced");
	task->command_exit_told = handover_bool(state, "exit_told");
	task->command_exit = (struct task_exit){
	    .kind = (int)handover_int(state, "exit_kind", 0),
	    .code = (int)handover_int(state, "exit_code", 0),
	    .signal = (int)handover_int(state, "exit_signal", 0),
	};
	return 0;
}

static int process_read(const struct handover_reader *reader, const json_t *state,
			struct task *task, char *error, size_t error_size)
{
	pid_t pid = (pid_t)handover_int(state, "pid", 0);
	int pidfd = handover_fd_get(reader, state, "pidfd");
	if (!pid && pidfd < 0)
		return 0;
	if (pid <= 0 || pidfd < 0) {
		snprintf(error, error_size, "its process (pid %d) has no pidfd in the hand-over",
			 (int)pid);
		return -EINVAL;
	}
	/* The program on its cgroup, for the replace below (a copy: tasks
	 * share the default rules' program, and state_read closes it). */
	int program = handover_fd_get(reader, state, "device_program_fd");
	if (program >= 0)
		task->devices.program_fd = fcntl(program, F_DUPFD_CLOEXEC, 0);
	/* Its cgroup was made by the old corral: opened again, its device
	 * policy put on it again. */
	int prepared = task_cgroup_run_prepare(task, error, error_size);
	if (prepared < 0)
		return prepared;
	task->oom_kills_reported = (uint64_t)handover_int(state, "oom_kills_reported", 0);
	task->cgroup.oom_kills_at_start = (uint64_t)handover_int(state, "cgroup_oom_at_start", 0);
	task->cgroup.oom_kills_of_execs = (uint64_t)handover_int(state, "cgroup_oom_of_execs", 0);
	task->pid = pid;
	pid_index_put(task->services->task_pids, pid, task);
	task->pidfd_watch.fd = pidfd;
	/* Level-triggered: a task that exited while corral exec'd is heard at
	 * the first turn of the loop, and reaped through its pidfd. */
	loop_watch_add(task->services->loop, &task->pidfd_watch, EPOLLIN);
	return 0;
}

int task_handover_read(const struct handover_reader *reader, const json_t *state, struct task *task,
		       char *error, size_t error_size)
{
	char why[400] = "";
	struct loop *loop = task->services->loop;
	int failure =
	    runner_read(json_object_get(state, "runner"), &task->runner, why, sizeof(why));
	if (failure == 0)
		failure = process_read(reader, state, task, why, sizeof(why));
	if (failure == 0)
		failure =
		    reaper_read(reader, json_object_get(state, "reaper"), task, why, sizeof(why));
	if (failure == 0)
		failure = output_read(reader, json_object_get(state, "output"), &task->output, why,
				      sizeof(why));
	if (failure == 0)
		failure = output_read(reader, json_object_get(state, "error_output"),
				      task->error_output, why, sizeof(why));
	const json_t *readiness = json_object_get(state, "readiness");
	if (failure == 0)
		failure = notify_read(reader, readiness, task, why, sizeof(why));
	if (failure < 0) {
		snprintf(error, error_size, "%s: %s", task->config->full_name, why);
		return failure;
	}
	task->failure_reported = handover_bool(state, "failure_reported");
	task->failure_ignored = handover_bool(state, "failure_ignored");
	task->restart_held = handover_bool(state, "restart_held");
	task->failed_by_dependency = handover_bool(state, "failed_by_dependency");
	task->run_seen = handover_bool(state, "run_seen");
	task->ready_seen = handover_bool(state, "ready_seen");
	ring_read(reader, json_object_get(state, "logs"), &task->logs);
	hooks_read(json_object_get(state, "hooks"), task);
	const json_t *timers = json_object_get(state, "timers");
	for (int i = 0; i < RUNNER_TIMER_COUNT; i++)
		arm_at(loop, &task->timers[i], json_array_get(timers, (size_t)i));
	/* The schedule as the old corral had it, not one made again from now. */
	loop_timer_cancel(loop, &task->schedule_timer);
	task->schedule_due_ms = (uint64_t)handover_int(state, "schedule_due_ms", 0);
	arm_at(loop, &task->schedule_timer, json_object_get(state, "schedule_timer_ms"));
	readiness_read(reader, readiness, task);
	return 0;
}
