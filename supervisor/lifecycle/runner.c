#include "supervisor/lifecycle/runner.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "base/xmalloc.h"

/* Room for a path or two: a hook's or a spawn's failure names its files. */
#define MESSAGE_SIZE 512

const char *task_state_name(enum task_state state)
{
	switch (state) {
	case TASK_PENDING:
		return "pending";
	case TASK_STARTING:
		return "starting";
	case TASK_RUNNING:
		return "running";
	case TASK_DEAD:
		return "dead";
	}
	return "unknown";
}

const char *task_event_type_name(enum task_event_type type)
{
	static const char *const names[TASK_EVENT_TYPE_COUNT] = {
	    [TASK_EVENT_RECEIVED] = "received",
	    [TASK_EVENT_STARTED] = "started",
	    [TASK_EVENT_START_FAILED] = "start_failed",
	    [TASK_EVENT_EXITED] = "exited",
	    [TASK_EVENT_RESTARTING] = "restarting",
	    [TASK_EVENT_NOT_RESTARTING] = "not_restarting",
	    [TASK_EVENT_KILLING] = "killing",
	    [TASK_EVENT_KILL_TIMEOUT] = "kill_timeout",
	    [TASK_EVENT_KILLED] = "killed",
	    [TASK_EVENT_RESTART_REQUESTED] = "restart_requested",
	    [TASK_EVENT_LEFTOVERS_KILLED] = "leftovers_killed",
	    [TASK_EVENT_OOM_KILLED] = "oom_killed",
	    [TASK_EVENT_READY] = "ready",
	    [TASK_EVENT_NOT_READY] = "not_ready",
	    [TASK_EVENT_UNHEALTHY] = "unhealthy",
	    [TASK_EVENT_HOOK_FAILED] = "hook_failed",
	    [TASK_EVENT_PROBE_FAILED] = "probe_failed",
	    [TASK_EVENT_PROBE_PASSED] = "probe_passed",
	    [TASK_EVENT_UPDATED] = "updated",
	    [TASK_EVENT_REPLACED] = "replaced",
	    [TASK_EVENT_REMOVED] = "removed",
	    [TASK_EVENT_HEALTHY] = "healthy",
	    [TASK_EVENT_SCHEDULED] = "scheduled",
	    [TASK_EVENT_WATCH_TRIGGERED] = "watch_triggered",
	    [TASK_EVENT_WATCH_FAILED] = "watch_failed",
	    [TASK_EVENT_ROLLING] = "rolling",
	    [TASK_EVENT_ROLL_STOPPED] = "roll_stopped",
	    [TASK_EVENT_SCALED] = "scaled",
	};
	return (unsigned)type < TASK_EVENT_TYPE_COUNT ? names[type] : "unknown";
}

bool task_exit_oom_killed(const struct task_exit *exit)
{
	return exit->kind == TASK_EXIT_SIGNAL && exit->signal == SIGKILL && exit->oom_kills > 0;
}

void task_exit_describe(const struct task_exit *exit, char *buffer, size_t size)
{
	switch (exit->kind) {
	case TASK_EXIT_CODE:
		snprintf(buffer, size, "exited with code %d", exit->code);
		break;
	case TASK_EXIT_SIGNAL:
		if (task_exit_oom_killed(exit))
			snprintf(buffer, size, "OOM killed");
		else
			snprintf(buffer, size, "killed by %s", signal_name(exit->signal));
		break;
	case TASK_EXIT_START_FAILED:
		snprintf(buffer, size, "failed to start");
		return;
	}
	/* The main process survived, or was not the one the OOM killer hit. */
	if (exit->oom_kills && !task_exit_oom_killed(exit)) {
		size_t used = strlen(buffer);
		snprintf(buffer + used, size - used, " (%u process%s OOM killed)", exit->oom_kills,
			 exit->oom_kills == 1 ? "" : "es");
	}
}

static bool exit_listed(const struct exit_status_set *set, const struct task_exit *exit)
{
	switch (exit->kind) {
	case TASK_EXIT_CODE:
		return exit_status_set_has_code(set, exit->code);
	case TASK_EXIT_SIGNAL:
		return exit_status_set_has_signal(set, exit->signal);
	case TASK_EXIT_START_FAILED:
		break;
	}
	return false;
}

/* A failure unless the exit is clean: code 0, or a code or signal that
 * restart.success_exit lists (`*by_list` then). An OOM kill or a failed
 * start never is. */
static bool exit_counts_as_failure(const struct restart_policy *policy,
				   const struct task_exit *exit, bool *by_list)
{
	*by_list = false;
	if (exit->kind == TASK_EXIT_CODE && exit->code == 0)
		return false;
	if (task_exit_oom_killed(exit))
		return true;
	*by_list = exit_listed(&policy->success_exit, exit);
	return !*by_list;
}

static void emit(struct runner *runner, enum task_event_type type, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void emit(struct runner *runner, enum task_event_type type, const char *format, ...)
{
	char message[MESSAGE_SIZE];
	va_list args;
	va_start(args, format);
	vsnprintf(message, sizeof(message), format, args);
	va_end(args);
	runner->effects->event(runner, type, message);
}

static struct runner_texts *texts(struct runner *runner)
{
	if (!runner->texts)
		runner->texts = xcalloc(1, sizeof(*runner->texts));
	return runner->texts;
}

const char *runner_decision(const struct runner *runner)
{
	return runner->texts && runner->texts->decision[0] ? runner->texts->decision : NULL;
}

const char *runner_failure(const struct runner *runner)
{
	return runner->texts ? runner->texts->failure : "";
}

/* What follows an exit, and the rule that decided it: an event, and the
 * same words kept for status. */
static void decide(struct runner *runner, const char *rule, enum task_event_type type,
		   const char *format, ...) __attribute__((format(printf, 4, 5)));

static void decide(struct runner *runner, const char *rule, enum task_event_type type,
		   const char *format, ...)
{
	char *decision = texts(runner)->decision;
	va_list args;
	va_start(args, format);
	vsnprintf(decision, sizeof(runner->texts->decision), format, args);
	va_end(args);
	runner->exit_rule = rule;
	runner->effects->event(runner, type, decision);
}

/* A failure reason is shown inside other messages: cut, never overflowed. */
static void note_failure(struct runner *runner, const char *reason)
{
	char *failure = texts(runner)->failure;
	size_t length = strnlen(reason, sizeof(runner->texts->failure) - 1);
	memmove(failure, reason, length);
	failure[length] = '\0';
}

/* `step`: one of `state`'s (RUNNER_STEP_NONE for running and dead). */
static void set_state(struct runner *runner, enum task_state state, enum runner_step step)
{
	if (state != TASK_DEAD)
		runner->dormant = false;
	if (state == TASK_PENDING && runner->state != TASK_PENDING)
		runner->generation++;
	runner->state = state;
	runner->step = step;
	runner->effects->changed(runner);
}

static bool in_prestart_hooks(const struct runner *runner)
{
	return runner->state == TASK_STARTING && runner->step == RUNNER_STEP_PRESTART_HOOKS;
}

void runner_init(struct runner *runner, const struct task_config *config,
		 const struct runner_effects *effects, void *context)
{
	memset(runner, 0, sizeof(*runner));
	runner->config = config;
	runner->effects = effects;
	runner->context = context;
	runner->state = TASK_PENDING;
	runner->step = RUNNER_STEP_AWAIT_GATE;
	restart_tracker_init(&runner->tracker);
}

void runner_free(struct runner *runner)
{
	free(runner->texts);
	runner->texts = NULL;
	if (!runner->effects || !runner->effects->exit_tally)
		free(runner->exits);
	runner->exits = NULL;
}

static struct exit_tally *exits(struct runner *runner)
{
	if (!runner->exits)
		runner->exits = runner->effects->exit_tally ? runner->effects->exit_tally(runner)
							    : xcalloc(1, sizeof(*runner->exits));
	return runner->exits;
}

/* What a task of `stage` waits for before it starts, in its group's
 * words (the coordinator's gates, coordinator.c). */
static const char *received_wait(enum lifecycle_stage stage)
{
	switch (stage) {
	case STAGE_PRESTART_EPHEMERAL:
	case STAGE_PRESTART_SIDECAR:
		return "starts with its group (a prestart task)";
	case STAGE_MAIN:
		return "starts once its group's prestart tasks are done, if it has any";
	case STAGE_POSTSTART_EPHEMERAL:
	case STAGE_POSTSTART_SIDECAR:
		return "starts once its group's main tasks have started (a poststart task)";
	case STAGE_POSTSTOP:
		return "runs once its group's other tasks have ended (a poststop task)";
	}
	return "waits for its stage to start";
}

void runner_received(struct runner *runner)
{
	if (runner->config->manual_start) {
		/* Dead without a run: no stop hooks, nothing failed. */
		emit(runner, TASK_EVENT_RECEIVED, "%s",
		     runner->config->schedule.set
			 ? "received: it waits for its schedule (or corral start)"
			 : "received: autostart: false, it waits for corral start");
		set_state(runner, TASK_DEAD, RUNNER_STEP_NONE);
		runner->dormant = true;
		return;
	}
	emit(runner, TASK_EVENT_RECEIVED, "received: %s", received_wait(runner->config->stage));
}

bool runner_ready_to_start(const struct runner *runner)
{
	return runner->state == TASK_PENDING && runner->step == RUNNER_STEP_AWAIT_GATE;
}

bool runner_waiting_out_delay(const struct runner *runner)
{
	return runner->state == TASK_PENDING && runner->step == RUNNER_STEP_AWAIT_DELAY;
}

/* Asks for the task's hooks of `stage`: true when runner_hooks_finished
 * follows. */
static bool run_hooks(struct runner *runner, enum hook_stage stage)
{
	return runner->effects->run_hooks && runner->effects->run_hooks(runner, stage);
}

static void cancel_hooks(struct runner *runner, enum hook_stage stage)
{
	if (runner->effects->cancel_hooks)
		runner->effects->cancel_hooks(runner, stage);
}

static void start_failed(struct runner *runner, const char *message, int exit_code, uint64_t now_ms,
			 bool had_process);

/* What corral ran short of to start a task (clone's EAGAIN under pids.max
 * or RLIMIT_NPROC, EMFILE, ENFILE, ENOMEM): the machine's state, not the
 * task's failure. */
static bool resource_shortage(int error)
{
	return error == -EAGAIN || error == -EMFILE || error == -ENFILE || error == -ENOMEM;
}

#define RESOURCE_RETRY_FIRST_MS 100
#define RESOURCE_RETRY_MAX_MS   5000

/* Tried again later, with back-off, as a restart delay is. Said as an
 * event the first time in a row only: a shortage hits many tasks and
 * lasts, and a line per retry was 13,915 lines in 45 s with 10,000 tasks;
 * the later retries are summed up by the effects (shortage_report.h). */
static void postpone_start(struct runner *runner, const char *message, uint64_t now_ms)
{
	bool first = runner->resource_retry_ms == 0;
	uint64_t retry = first ? RESOURCE_RETRY_FIRST_MS : 2 * runner->resource_retry_ms;
	runner->resource_retry_ms = retry < RESOURCE_RETRY_MAX_MS ? retry : RESOURCE_RETRY_MAX_MS;
	if (first) {
		char delay[32], longest[32];
		format_duration_ms(runner->resource_retry_ms, delay, sizeof(delay));
		format_duration_ms(RESOURCE_RETRY_MAX_MS, longest, sizeof(longest));
		emit(runner, TASK_EVENT_START_FAILED,
		     "%s: corral is short of a resource; trying again in %s, then up to every "
		     "%s until it starts (not counted against the restart policy)",
		     message, delay, longest);
	}
	runner->next_start_ms = now_ms + runner->resource_retry_ms;
	runner->effects->arm_timer(runner, RUNNER_TIMER_RESTART_DELAY, runner->next_start_ms);
	set_state(runner, TASK_PENDING, RUNNER_STEP_AWAIT_DELAY);
	/* Once it is seen waiting: the summary counts it. */
	if (runner->effects->resource_wait)
		runner->effects->resource_wait(runner, message, first, now_ms);
}

static void end_resource_wait(struct runner *runner, bool started)
{
	if (runner->resource_retry_ms && runner->effects->resource_wait_over)
		runner->effects->resource_wait_over(runner, started);
	runner->resource_retry_ms = 0;
}

static void spawn_now(struct runner *runner, uint64_t now_ms)
{
	char message[MESSAGE_SIZE];
	int failure = runner->effects->spawn(runner, message, sizeof(message));
	if (failure < 0 && resource_shortage(failure)) {
		postpone_start(runner, message, now_ms);
		return;
	}
	if (failure < 0) {
		start_failed(runner, message, 126, now_ms, false);
		return;
	}
	end_resource_wait(runner, true);
	if (runner->state != TASK_STARTING)
		set_state(runner, TASK_STARTING, RUNNER_STEP_EXEC);
	else
		runner->step = RUNNER_STEP_EXEC;
}

void runner_start(struct runner *runner, uint64_t now_ms)
{
	if (!runner_ready_to_start(runner))
		return;
	runner->stop_intent = RUNNER_STOP_NONE;
	runner->started_at_ms = now_ms;
	if (runner->texts)
		runner->texts->failure[0] = '\0';
	runner->readiness = RUNNER_NOT_READY;
	if (run_hooks(runner, HOOK_STAGE_PRESTART)) {
		set_state(runner, TASK_STARTING, RUNNER_STEP_PRESTART_HOOKS);
		return;
	}
	spawn_now(runner, now_ms);
}

void runner_extend_readiness(struct runner *runner, uint64_t until_ms)
{
	if (runner->state != TASK_RUNNING || runner->readiness != RUNNER_NOT_READY ||
	    runner->stop_intent != RUNNER_STOP_NONE || !readiness_of(runner->config)->timeout_ms)
		return;
	runner->effects->arm_timer(runner, RUNNER_TIMER_READINESS, until_ms);
}

void runner_exec_succeeded(struct runner *runner, uint64_t now_ms)
{
	if (runner->state != TASK_STARTING)
		return;
	const struct readiness_config *readiness = readiness_of(runner->config);
	/* Said before the exec was confirmed: the loop heard the task before
	 * the EOF of its error pipe. Not once it is being stopped, as for
	 * runner_ready. */
	bool said_ready =
	    runner->readiness == RUNNER_READY && runner->stop_intent == RUNNER_STOP_NONE;
	/* As in Nomad: without a readiness check, started means ready. */
	bool ready = readiness->kind == READINESS_NONE || said_ready;
	runner->readiness = ready ? RUNNER_READY : RUNNER_NOT_READY;
	emit(runner, TASK_EVENT_STARTED, "started");
	if (said_ready)
		emit(runner, TASK_EVENT_READY, "ready (%s)", runner->texts->early_ready_how);
	if (!ready && readiness->timeout_ms)
		runner->effects->arm_timer(runner, RUNNER_TIMER_READINESS,
					   now_ms + readiness->timeout_ms);
	set_state(runner, TASK_RUNNING, RUNNER_STEP_NONE);
	/* As in Nomad: once started, not once ready; nothing waits for them. */
	run_hooks(runner, HOOK_STAGE_POSTSTART);
}

void runner_ready(struct runner *runner, const char *how)
{
	/* Too late once it is being stopped: nothing may start on it. */
	if (runner->stop_intent != RUNNER_STOP_NONE)
		return;
	if (runner->state == TASK_STARTING && runner->step != RUNNER_STEP_PRESTART_HOOKS) {
		/* The process exists and said it: it has run its command, so
		 * its exec succeeded, though the loop has not seen that yet.
		 * Dropping it would leave the task unready for good (a
		 * newline on the notify fd is said once). */
		if (runner->readiness == RUNNER_NOT_READY) {
			runner->readiness = RUNNER_READY;
			snprintf(texts(runner)->early_ready_how,
				 sizeof(runner->texts->early_ready_how), "%s", how);
		}
		return;
	}
	if (runner->state != TASK_RUNNING)
		return;
	if (runner->readiness == RUNNER_READY_LOST) {
		runner->readiness = RUNNER_READY;
		emit(runner, TASK_EVENT_READY, "ready again (%s)", how);
		runner->effects->changed(runner);
		return;
	}
	if (runner->readiness == RUNNER_READY)
		return;
	runner->readiness = RUNNER_READY;
	runner->effects->cancel_timer(runner, RUNNER_TIMER_READINESS);
	emit(runner, TASK_EVENT_READY, "ready (%s)", how);
	runner->effects->changed(runner);
}

void runner_not_ready(struct runner *runner, const char *why)
{
	if (!runner_is_ready_now(runner) || runner->stop_intent != RUNNER_STOP_NONE)
		return;
	runner->readiness = RUNNER_READY_LOST;
	emit(runner, TASK_EVENT_NOT_READY, "not ready: %s", why);
	runner->effects->changed(runner);
}

bool runner_is_ready_now(const struct runner *runner)
{
	return runner->state == TASK_RUNNING && runner->readiness == RUNNER_READY;
}

bool runner_ready_lost(const struct runner *runner)
{
	return runner->state == TASK_RUNNING && runner->readiness == RUNNER_READY_LOST;
}

void runner_healthy(struct runner *runner)
{
	if (runner->state != TASK_RUNNING || runner->healthy)
		return;
	runner->healthy = true;
	emit(runner, TASK_EVENT_HEALTHY, "healthy (its health probe passed)");
	runner->effects->changed(runner);
}

bool runner_is_ready(const struct runner *runner)
{
	return runner->state == TASK_RUNNING && runner->readiness != RUNNER_NOT_READY;
}

static bool is_being_stopped(const struct runner *runner)
{
	return (runner->state == TASK_STARTING || runner->state == TASK_RUNNING) &&
	       runner->stop_intent != RUNNER_STOP_NONE;
}

const char *runner_shown_state(const struct runner *runner)
{
	return is_being_stopped(runner) ? "stopping" : task_state_name(runner->state);
}

bool runner_shown_ready(const struct runner *runner)
{
	return runner_is_ready_now(runner) && !is_being_stopped(runner);
}

/* After the process is gone (or never came): stop timers. */
static void forget_process(struct runner *runner)
{
	runner->readiness = RUNNER_NOT_READY;
	runner->healthy = false;
	runner->effects->cancel_timer(runner, RUNNER_TIMER_KILL);
	runner->effects->cancel_timer(runner, RUNNER_TIMER_READINESS);
}

static void become_dead(struct runner *runner, bool failed)
{
	runner->failed = failed;
	if (failed && !runner_failure(runner)[0] && runner->has_exited)
		task_exit_describe(&runner->last_exit, texts(runner)->failure,
				   sizeof(runner->texts->failure));
	runner->effects->cancel_timer(runner, RUNNER_TIMER_RESTART_DELAY);
	end_resource_wait(runner, false); /* a start after this is a new try */
	set_state(runner, TASK_DEAD, RUNNER_STEP_NONE);
	/* Every way into dead passes here, once per life of the task. */
	run_hooks(runner, HOOK_STAGE_STOP);
}

static void become_pending_now(struct runner *runner)
{
	runner->failed = false;
	set_state(runner, TASK_PENDING, RUNNER_STEP_AWAIT_GATE);
}

/* restart.no_restart_exit lists the exit: the task is done, failed for
 * good when the exit was a failure. */
static void refuse_restart_by_list(struct runner *runner)
{
	char exit[64];
	task_exit_describe(&runner->last_exit, exit, sizeof(exit));
	decide(runner, "restart.no_restart_exit", TASK_EVENT_NOT_RESTARTING,
	       "not restarting: %s, listed in restart.no_restart_exit%s", exit,
	       runner->last_run_failed ? "; failed for good" : "");
	become_dead(runner, runner->last_run_failed);
}

/* A success only because restart.success_exit lists the exit. */
static bool success_by_list(const struct runner *runner)
{
	const struct task_exit *exit = &runner->last_exit;
	return !runner->last_run_failed && !(exit->kind == TASK_EXIT_CODE && exit->code == 0);
}

/* The policy decides what an exit that nobody asked for means (or a stop
 * for want of readiness, which is not the task's own exit status:
 * `by_exit_status` false). */
static void apply_restart_policy(struct runner *runner, uint64_t now_ms, bool by_exit_status)
{
	const struct restart_policy *policy = &runner->config->restart;
	bool failed = runner->last_run_failed;

	if (by_exit_status && exit_listed(&policy->no_restart_exit, &runner->last_exit)) {
		refuse_restart_by_list(runner);
		return;
	}
	struct restart_decision decision =
	    restart_tracker_decide(&runner->tracker, policy, failed, now_ms);

	switch (decision.verdict) {
	case RESTART_VERDICT_NO_RESTART:
		decide(runner, success_by_list(runner) ? "restart.success_exit" : "restart.policy",
		       TASK_EVENT_NOT_RESTARTING, "not restarting: %s", decision.reason);
		become_dead(runner, failed);
		return;
	case RESTART_VERDICT_GIVE_UP: {
		char interval[32];
		format_duration_ms(policy->interval_ms, interval, sizeof(interval));
		decide(runner, "restart.attempts", TASK_EVENT_NOT_RESTARTING,
		       "not restarting: %s (%u restart%s allowed within %s); failed for good",
		       decision.reason, decision.attempts, decision.attempts == 1 ? "" : "s",
		       interval);
		char exit[64], reason[sizeof(exit) + 64];
		task_exit_describe(&runner->last_exit, exit, sizeof(exit));
		snprintf(reason, sizeof(reason), "%s, %u restart%s within %s spent", exit,
			 decision.attempts, decision.attempts == 1 ? "" : "s", interval);
		if (!runner_failure(runner)[0])
			note_failure(runner, reason);
		become_dead(runner, true);
		return;
	}
	case RESTART_VERDICT_RESTART:
		break;
	}

	char delay[32];
	format_duration_ms(decision.delay_ms, delay, sizeof(delay));
	if (decision.attempts == RESTART_ATTEMPTS_UNLIMITED)
		decide(runner, "restart.policy", TASK_EVENT_RESTARTING,
		       "restarting in %s (restart %u, attempts unlimited)", delay,
		       decision.attempt);
	else
		decide(runner, "restart.policy", TASK_EVENT_RESTARTING,
		       "restarting in %s (restart %u of %u)", delay, decision.attempt,
		       decision.attempts);
	runner->restart_count++;
	runner->failed = false;
	if (decision.delay_ms == 0) {
		become_pending_now(runner);
		return;
	}
	runner->next_start_ms = now_ms + decision.delay_ms;
	runner->effects->arm_timer(runner, RUNNER_TIMER_RESTART_DELAY, runner->next_start_ms);
	set_state(runner, TASK_PENDING, RUNNER_STEP_AWAIT_DELAY);
}

/* Common to a real exit and a failed start. */
static void handle_end_of_run(struct runner *runner, uint64_t now_ms)
{
	enum runner_stop_intent intent = runner->stop_intent;
	runner->stop_intent = RUNNER_STOP_NONE;
	runner->last_exit_requested = intent != RUNNER_STOP_NONE && intent != RUNNER_STOP_NOT_READY;
	forget_process(runner);
	if (runner->prekill_pending || runner->prekill_ahead == RUNNER_PREKILL_AHEAD_RUNNING) {
		/* Gone before its prekill hooks were over: they have nothing
		 * left to prepare. */
		runner->prekill_pending = false;
		cancel_hooks(runner, HOOK_STAGE_PREKILL);
	}
	runner->prekill_ahead = RUNNER_PREKILL_AHEAD_NONE;

	switch (intent) {
	case RUNNER_STOP_RESTART:
		decide(runner, NULL, TASK_EVENT_RESTARTING, "restarting now, as requested");
		runner->restart_count++;
		become_pending_now(runner);
		return;
	case RUNNER_STOP_GROUP_RESTART:
		decide(runner, NULL, TASK_EVENT_KILLED, "stopped for a restart of the group");
		runner->restart_count++; /* as Nomad counts an alloc restart */
		become_pending_now(runner);
		return;
	case RUNNER_STOP_DEPENDENCY:
		decide(runner, NULL, TASK_EVENT_KILLED,
		       "stopped: it starts again once what it waits for holds again");
		runner->restart_count++;
		become_pending_now(runner);
		return;
	case RUNNER_STOP_NEXT_RUN:
		decide(runner, NULL, TASK_EVENT_KILLED,
		       "stopped: its schedule's next run replaces it");
		become_pending_now(runner);
		return;
	case RUNNER_STOP_FOR_GOOD:
		decide(runner, NULL, TASK_EVENT_KILLED, "stopped");
		become_dead(runner, false);
		return;
	case RUNNER_STOP_NOT_READY:
		/* However it ended, the run failed: it never became ready. */
		runner->last_run_failed = true;
		apply_restart_policy(runner, now_ms, false);
		return;
	case RUNNER_STOP_NONE:
		apply_restart_policy(runner, now_ms, true);
		return;
	}
}

static void start_failed(struct runner *runner, const char *message, int exit_code, uint64_t now_ms,
			 bool had_process)
{
	runner->last_exit = (struct task_exit){.kind = TASK_EXIT_START_FAILED, .code = exit_code};
	runner->has_exited = true;
	exits(runner)->start_failures++;
	runner->last_run_failed = true;
	note_failure(runner, message);
	emit(runner, TASK_EVENT_START_FAILED, "%s", message);
	if (had_process)
		run_hooks(runner, HOOK_STAGE_EXITED);
	handle_end_of_run(runner, now_ms);
}

void runner_start_failed(struct runner *runner, const char *message, int exit_code, uint64_t now_ms)
{
	start_failed(runner, message, exit_code, now_ms, true);
}

void runner_exited(struct runner *runner, const struct task_exit *exit, uint64_t now_ms)
{
	if (runner->state != TASK_STARTING && runner->state != TASK_RUNNING)
		return;
	char description[64];
	bool by_list;
	runner->last_exit = *exit;
	runner->has_exited = true;
	if (exit->kind == TASK_EXIT_START_FAILED)
		exits(runner)->start_failures++;
	else
		exit_tally_add(exits(runner), exit->kind == TASK_EXIT_SIGNAL,
			       exit->kind == TASK_EXIT_SIGNAL ? exit->signal : exit->code);
	runner->last_run_failed = exit_counts_as_failure(&runner->config->restart, exit, &by_list);
	task_exit_describe(exit, description, sizeof(description));
	emit(runner, TASK_EVENT_EXITED, "%s%s", description,
	     by_list ? " (a success: listed in restart.success_exit)" : "");
	run_hooks(runner, HOOK_STAGE_EXITED);
	handle_end_of_run(runner, now_ms);
}

void runner_timer_fired(struct runner *runner, enum runner_timer timer, uint64_t now_ms)
{
	switch (timer) {
	case RUNNER_TIMER_RESTART_DELAY:
		if (runner_waiting_out_delay(runner)) {
			runner->step = RUNNER_STEP_AWAIT_GATE;
			runner->effects->changed(runner);
		}
		return;
	case RUNNER_TIMER_KILL:
		if (runner->state == TASK_STARTING || runner->state == TASK_RUNNING) {
			char timeout[32];
			format_duration_ms(runner->config->kill_timeout_ms, timeout,
					   sizeof(timeout));
			emit(runner, TASK_EVENT_KILL_TIMEOUT,
			     "still running %s after %s: sending SIGKILL", timeout,
			     signal_name(runner->config->kill_signal));
			runner->effects->kill_all(runner);
		}
		return;
	case RUNNER_TIMER_READINESS:
		/* A failed start: stopped as any stop is (prekill hooks, kill
		 * signal, SIGKILL after the kill timeout), and its exit
		 * counts against the restart policy like any failure. */
		if (runner->state == TASK_RUNNING && runner->readiness == RUNNER_NOT_READY &&
		    runner->stop_intent == RUNNER_STOP_NONE) {
			char timeout[32];
			format_duration_ms(readiness_of(runner->config)->timeout_ms, timeout,
					   sizeof(timeout));
			char *failure = texts(runner)->failure;
			snprintf(failure, sizeof(runner->texts->failure), "not ready within %s",
				 timeout);
			emit(runner, TASK_EVENT_NOT_READY, "not ready within %s: stopping it",
			     timeout);
			runner_stop(runner, RUNNER_STOP_NOT_READY, failure, now_ms);
		}
		return;
	}
}

static int intent_strength(enum runner_stop_intent intent)
{
	return intent == RUNNER_STOP_FOR_GOOD ? 2 : intent == RUNNER_STOP_NONE ? 0 : 1;
}

static void send_kill_signal(struct runner *runner, uint64_t now_ms)
{
	runner->effects->signal(runner, runner->config->kill_signal);
	runner->effects->arm_timer(runner, RUNNER_TIMER_KILL,
				   now_ms + runner->config->kill_timeout_ms);
}

/* Stopped while its prestart hooks ran: they are cancelled, and the run
 * ends as `intent` says without a process. */
static void stop_before_spawn(struct runner *runner, enum runner_stop_intent intent,
			      const char *reason, uint64_t now_ms)
{
	/* Out of its hooks before they are cancelled: a cancel that says
	 * they finished spawns nothing. The run ends at once, as a step of
	 * neither pending nor starting. */
	runner->step = RUNNER_STEP_NONE;
	cancel_hooks(runner, HOOK_STAGE_PRESTART);
	runner->stop_intent = intent;
	emit(runner, TASK_EVENT_KILLING, "prestart hooks cancelled: %s", reason);
	handle_end_of_run(runner, now_ms);
}

void runner_prekill_ahead(struct runner *runner)
{
	if (runner->state != TASK_RUNNING || runner->stop_intent != RUNNER_STOP_NONE ||
	    runner->prekill_ahead != RUNNER_PREKILL_AHEAD_NONE)
		return;
	if (run_hooks(runner, HOOK_STAGE_PREKILL))
		runner->prekill_ahead = RUNNER_PREKILL_AHEAD_RUNNING;
	else
		runner->prekill_ahead = RUNNER_PREKILL_AHEAD_DONE; /* none to run */
}

void runner_stop(struct runner *runner, enum runner_stop_intent intent, const char *reason,
		 uint64_t now_ms)
{
	switch (runner->state) {
	case TASK_DEAD:
		return;
	case TASK_PENDING:
		if (intent == RUNNER_STOP_FOR_GOOD) {
			emit(runner, TASK_EVENT_KILLED, "not started: %s", reason);
			become_dead(runner, false);
		}
		return;
	case TASK_STARTING:
	case TASK_RUNNING:
		break;
	}

	if (in_prestart_hooks(runner)) {
		stop_before_spawn(runner, intent, reason, now_ms);
		return;
	}
	if (runner->stop_intent != RUNNER_STOP_NONE) {
		/* Already stopping: the signal is out (or follows the prekill
		 * hooks) and the timer armed. */
		if (intent_strength(intent) > intent_strength(runner->stop_intent))
			runner->stop_intent = intent;
		return;
	}
	runner->stop_intent = intent;
	if (runner->prekill_ahead == RUNNER_PREKILL_AHEAD_RUNNING) {
		/* Started ahead: the signal follows them (runner_hooks_finished). */
		runner->prekill_pending = true;
		emit(runner, TASK_EVENT_KILLING, "prekill hooks under way, then %s: %s",
		     signal_name(runner->config->kill_signal), reason);
		return;
	}
	if (runner->prekill_ahead == RUNNER_PREKILL_AHEAD_NONE &&
	    run_hooks(runner, HOOK_STAGE_PREKILL)) {
		runner->prekill_pending = true;
		emit(runner, TASK_EVENT_KILLING, "prekill hooks first, then %s: %s",
		     signal_name(runner->config->kill_signal), reason);
		return;
	}
	emit(runner, TASK_EVENT_KILLING, "sending %s: %s", signal_name(runner->config->kill_signal),
	     reason);
	send_kill_signal(runner, now_ms);
}

void runner_hooks_finished(struct runner *runner, enum hook_stage stage, bool ok,
			   const char *message, uint64_t now_ms)
{
	switch (stage) {
	case HOOK_STAGE_PRESTART:
		if (!in_prestart_hooks(runner))
			return;
		runner->step = RUNNER_STEP_EXEC; /* out of its hooks: a clone or a failed start */
		if (!ok)
			start_failed(runner, message, 126, now_ms, false);
		else
			spawn_now(runner, now_ms);
		return;
	case HOOK_STAGE_PREKILL:
		if (runner->prekill_ahead == RUNNER_PREKILL_AHEAD_RUNNING)
			runner->prekill_ahead = RUNNER_PREKILL_AHEAD_DONE;
		if (!runner->prekill_pending)
			return;
		runner->prekill_pending = false;
		emit(runner, TASK_EVENT_KILLING, "prekill hooks done: sending %s",
		     signal_name(runner->config->kill_signal));
		send_kill_signal(runner, now_ms);
		return;
	case HOOK_STAGE_POSTSTART:
	case HOOK_STAGE_EXITED:
	case HOOK_STAGE_STOP:
	case HOOK_STAGE_UPDATE:
		return; /* nothing waits for them */
	}
}

void runner_redirect_stop(struct runner *runner, enum runner_stop_intent intent)
{
	if (runner->stop_intent != RUNNER_STOP_NONE)
		runner->stop_intent = intent;
}

void runner_kill_now(struct runner *runner, const char *reason)
{
	switch (runner->state) {
	case TASK_DEAD:
		return;
	case TASK_PENDING:
		emit(runner, TASK_EVENT_KILLED, "not started: %s", reason);
		become_dead(runner, false);
		return;
	case TASK_STARTING:
	case TASK_RUNNING:
		if (in_prestart_hooks(runner)) {
			stop_before_spawn(runner, RUNNER_STOP_FOR_GOOD, reason, 0);
			return;
		}
		if (runner->prekill_pending ||
		    runner->prekill_ahead == RUNNER_PREKILL_AHEAD_RUNNING) {
			runner->prekill_pending = false;
			runner->prekill_ahead = RUNNER_PREKILL_AHEAD_DONE;
			cancel_hooks(runner, HOOK_STAGE_PREKILL);
		}
		runner->stop_intent = RUNNER_STOP_FOR_GOOD;
		emit(runner, TASK_EVENT_KILLING, "sending SIGKILL: %s", reason);
		runner->effects->kill_all(runner);
		return;
	}
}

enum runner_request_result runner_restart(struct runner *runner, uint64_t now_ms)
{
	if (runner->state != TASK_RUNNING && runner->state != TASK_STARTING)
		return RUNNER_REQUEST_NOT_RUNNING;
	if (runner->stop_intent == RUNNER_STOP_FOR_GOOD)
		return RUNNER_REQUEST_STOPPING;
	if (runner->stop_intent == RUNNER_STOP_NONE)
		emit(runner, TASK_EVENT_RESTART_REQUESTED, "restart requested");
	runner_stop(runner, RUNNER_STOP_RESTART, "restart requested", now_ms);
	return RUNNER_REQUEST_DONE;
}

enum runner_request_result runner_force_restart(struct runner *runner, bool gate_reachable,
						uint64_t now_ms)
{
	switch (runner->state) {
	case TASK_STARTING:
	case TASK_RUNNING:
		return runner_restart(runner, now_ms);
	case TASK_PENDING:
		if (runner->step == RUNNER_STEP_AWAIT_DELAY) {
			emit(runner, TASK_EVENT_RESTART_REQUESTED,
			     "restart requested: restart delay skipped");
			runner->effects->cancel_timer(runner, RUNNER_TIMER_RESTART_DELAY);
			runner->step = RUNNER_STEP_AWAIT_GATE;
			runner->effects->changed(runner);
		}
		return RUNNER_REQUEST_DONE;
	case TASK_DEAD:
		break;
	}
	if (!gate_reachable)
		return RUNNER_REQUEST_GATE_CLOSED;
	if (runner->config->schedule.set) {
		/* `corral start` between a schedule's runs: one run more. */
		runner->run_count++;
		emit(runner, TASK_EVENT_RESTART_REQUESTED, "run %u requested, besides its schedule",
		     runner->run_count);
		become_pending_now(runner);
		return RUNNER_REQUEST_DONE;
	}
	emit(runner, TASK_EVENT_RESTART_REQUESTED, "restart requested (forced)");
	if (runner->has_exited) /* the first start of an autostart: false task is not a restart */
		runner->restart_count++;
	become_pending_now(runner);
	return RUNNER_REQUEST_DONE;
}

enum runner_request_result runner_run_scheduled(struct runner *runner, const char *why,
						bool gate_reachable, uint64_t now_ms)
{
	switch (runner->state) {
	case TASK_STARTING:
	case TASK_RUNNING:
		if (runner->stop_intent == RUNNER_STOP_FOR_GOOD)
			return RUNNER_REQUEST_STOPPING;
		break;
	case TASK_PENDING:
		if (runner->step != RUNNER_STEP_AWAIT_DELAY)
			return RUNNER_REQUEST_NOT_RUNNING;
		break;
	case TASK_DEAD:
		if (!gate_reachable)
			return RUNNER_REQUEST_GATE_CLOSED;
		break;
	}
	runner->run_count++;
	emit(runner, TASK_EVENT_SCHEDULED, "run %u of its schedule: %s", runner->run_count, why);
	switch (runner->state) {
	case TASK_STARTING:
	case TASK_RUNNING:
		runner_stop(runner, RUNNER_STOP_NEXT_RUN, "its schedule's next run replaces it",
			    now_ms);
		break;
	case TASK_PENDING:
		/* The failed run's retries give way to the new run. */
		runner->effects->cancel_timer(runner, RUNNER_TIMER_RESTART_DELAY);
		runner->step = RUNNER_STEP_AWAIT_GATE;
		runner->effects->changed(runner);
		break;
	case TASK_DEAD:
		become_pending_now(runner);
		break;
	}
	return RUNNER_REQUEST_DONE;
}

void runner_rearm(struct runner *runner)
{
	restart_tracker_reset(&runner->tracker);
	if (runner->state != TASK_DEAD)
		return;
	/* Only `corral start` runs it, not its group's restarts. */
	if (runner->config->manual_start) {
		runner->dormant = true;
		return;
	}
	emit(runner, TASK_EVENT_RECEIVED, "waiting to run again with its group");
	if (runner->has_exited)
		runner->restart_count++; /* it ran: this is a run again */
	become_pending_now(runner);
}

void runner_fail_unstarted(struct runner *runner, const char *reason)
{
	if (runner->state != TASK_PENDING)
		return;
	note_failure(runner, reason);
	emit(runner, TASK_EVENT_NOT_RESTARTING, "not started: %s; failed for good", reason);
	become_dead(runner, true);
}

bool runner_last_run_succeeded(const struct runner *runner)
{
	return runner->state == TASK_DEAD && runner->has_exited && !runner->last_exit_requested &&
	       !runner->last_run_failed;
}

bool runner_last_exit_failed(const struct runner *runner)
{
	return runner->has_exited && !runner->last_exit_requested && runner->last_run_failed;
}

int runner_failure_exit_code(const struct runner *runner)
{
	const struct task_exit *exit = &runner->last_exit;
	switch (exit->kind) {
	case TASK_EXIT_SIGNAL:
		return 128 + exit->signal;
	case TASK_EXIT_START_FAILED:
	case TASK_EXIT_CODE:
		return exit->code ? exit->code : 1;
	}
	return 1;
}
