/* The state machine of one task: when to start, what an exit means, how to
 * stop. Pure: every effect (spawning, signalling, timers, events) goes
 * through `struct runner_effects`, so the logic is unit-tested without
 * processes and the same code runs in corral.
 *
 * States: pending (waiting for its gate or a restart delay), starting
 * (its prestart hooks running, or cloned and exec not yet confirmed),
 * running, dead; a pending or starting task's step says which of the
 * two (enum runner_step). A dead task that failed for good has `failed`
 * set.
 *
 * Hooks (docs/hooks.md): prestart hooks run before every spawn and their
 * failure is a failed start; a stop runs the prekill hooks before the kill
 * signal; poststart, exited and stop hooks are announced and not waited
 * for (the task's hook queue keeps them in order with later stages). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/model/config.h"
#include "supervisor/lifecycle/exit_tally.h"
#include "supervisor/lifecycle/restart_tracker.h"
#include "supervisor/lifecycle/task_event.h"

enum task_state {
	TASK_PENDING,
	TASK_STARTING,
	TASK_RUNNING,
	TASK_DEAD,
};

const char *task_state_name(enum task_state state);

/* Where in its state a pending or starting task is. Each value belongs to
 * one state; running and dead have no steps. */
enum runner_step {
	RUNNER_STEP_NONE,
	RUNNER_STEP_AWAIT_GATE,     /* pending: ready to start once its gate opens */
	RUNNER_STEP_AWAIT_DELAY,    /* pending: a restart delay (or a start put off
				     * for lack of a resource) runs until next_start_ms */
	RUNNER_STEP_PRESTART_HOOKS, /* starting: its prestart hooks run, no process yet */
	RUNNER_STEP_EXEC,           /* starting: cloned, exec not confirmed yet */
};

/* What the current process said of its readiness. */
enum runner_readiness {
	RUNNER_NOT_READY, /* not yet, or no process */
	/* Running: said it is ready (at once without `readiness:`); the
	 * coordinator sees a running task that is not ready as pending.
	 * Starting: said it before its exec was confirmed (the loop may
	 * hear a newline or READY=1 before the error pipe's EOF), taken
	 * once it is; texts->early_ready_how says how it was said. */
	RUNNER_READY,
	/* Running, readiness.continuous: ready once this run (the stage
	 * gates stay open), and a later check said not now. Its dependents
	 * that wait for `ready`, and `status --ready`, follow this. */
	RUNNER_READY_LOST,
};

enum runner_timer {
	RUNNER_TIMER_RESTART_DELAY,
	RUNNER_TIMER_KILL,
	RUNNER_TIMER_READINESS, /* readiness.timeout of the current run */
};
#define RUNNER_TIMER_COUNT 3

/* Why a running task is being stopped: decides what its exit means. */
enum runner_stop_intent {
	RUNNER_STOP_NONE,
	RUNNER_STOP_RESTART,       /* Restart: start again at once, not charged */
	RUNNER_STOP_GROUP_RESTART, /* the group restarts: pending, waits on its gate */
	RUNNER_STOP_DEPENDENCY,    /* a `restart: true` dependency restarts: pending,
				    * waits for it again; not charged */
	RUNNER_STOP_NEXT_RUN,      /* its schedule's next run replaces this one
				    * (concurrency: replace): a run, not a restart */
	RUNNER_STOP_NOT_READY,     /* its readiness timed out: the exit is a
				    * failure, and the restart policy decides */
	RUNNER_STOP_FOR_GOOD,      /* shutdown, sibling failure, main tasks dead */
};

/* How the main process ended. */
struct task_exit {
	enum { TASK_EXIT_CODE, TASK_EXIT_SIGNAL, TASK_EXIT_START_FAILED } kind;
	int code;   /* exit code; for a failed start 127 (not found) or 126 */
	int signal; /* TASK_EXIT_SIGNAL */
	/* Processes of the task the OOM killer killed during this run: with
	 * the main process killed by SIGKILL, the task was "OOM killed". */
	unsigned oom_kills;
};

/* Killed by the OOM killer, as Kubernetes' OOMKilled means it. */
bool task_exit_oom_killed(const struct task_exit *exit);

struct runner;

struct runner_effects {
	/* Clone the process. 0: it is starting, and exec_succeeded or
	 * start_failed follows. <0: nothing was started; `message` says why. */
	int (*spawn)(struct runner *runner, char *message, size_t message_size);
	/* Send a signal to the task's main process. */
	void (*signal)(struct runner *runner, int signal_number);
	/* SIGKILL the task's main process and everything it started. */
	void (*kill_all)(struct runner *runner);
	void (*arm_timer)(struct runner *runner, enum runner_timer timer, uint64_t deadline_ms);
	void (*cancel_timer)(struct runner *runner, enum runner_timer timer);
	void (*event)(struct runner *runner, enum task_event_type type, const char *message);
	/* The state, or readiness to start, changed: the group re-evaluates. */
	void (*changed)(struct runner *runner);
	/* Runs the task's hooks of `stage`. true: runner_hooks_finished
	 * follows, from the loop, never inside this call. false: there is
	 * nothing to wait for. NULL: a task without hooks. */
	bool (*run_hooks)(struct runner *runner, enum hook_stage stage);
	/* The hooks of `stage` are not wanted any more: no
	 * runner_hooks_finished follows for them. */
	void (*cancel_hooks)(struct runner *runner, enum hook_stage stage);
	/* A start was put off for lack of a resource (`reason`: what
	 * failed); `first`: the first of the task's retries in a row, which
	 * the runner said as its start_failed event. Later ones are said
	 * only here, to be summed up (shortage_report.h). NULL: not told. */
	void (*resource_wait)(struct runner *runner, const char *reason, bool first,
			      uint64_t now_ms);
	/* Such retries ended: the start went through (`started`), or the
	 * task was stopped meanwhile. NULL: not told. */
	void (*resource_wait_over)(struct runner *runner, bool started);
	/* Where its exits are counted, for its whole life: memory its owner
	 * keeps beyond the runner (a task's record, which `corral upgrade`
	 * hands over). NULL: the runner allocates and frees them. */
	struct exit_tally *(*exit_tally)(struct runner *runner);
};

struct runner {
	const struct task_config *config;
	const struct runner_effects *effects;
	void *context; /* the effects' own data */

	enum task_state state;
	enum runner_step step;
	enum runner_readiness readiness;
	enum runner_stop_intent stop_intent; /* not NONE: being stopped */

	/* The booleans left are flags, not states: each holds beside any
	 * step or readiness, or outlives the state it was set in.
	 *
	 * Dead and failed for good. Read by the group's failure rules and
	 * dependents; it stays while a manual task is dormant again after
	 * its group restarted, so with `dormant` it is not one sub-state. */
	bool failed;
	/* autostart: false, dead until `corral start`: at first, and again
	 * after each restart of its group (failed or not). */
	bool dormant;
	/* Running, and its health probe passed since this run began: the
	 * health probe is apart from readiness, either comes first. */
	bool healthy;
	/* Being stopped, and its prekill hooks run: no signal sent yet.
	 * A step of a stop, which a starting task at any step and a running
	 * one at any readiness can be in (stop_intent). */
	bool prekill_pending;
	/* Its group stops for good and its turn has not come (its dependents
	 * or a lower stop tier go first): its prekill hooks run ahead, as
	 * Kubernetes starts every terminating container's PreStop hook at
	 * once, so that N sidecars' hooks take one hook's time, not N. A flag
	 * beside stop_intent: a task may be in any state of its run when its
	 * group begins to stop. */
	enum runner_prekill_ahead {
		RUNNER_PREKILL_AHEAD_NONE,
		RUNNER_PREKILL_AHEAD_RUNNING,
		RUNNER_PREKILL_AHEAD_DONE,
	} prekill_ahead;

	/* The last exit, kept across runs and states (status, dependents,
	 * the exit code corral ends with). */
	struct task_exit last_exit;
	bool has_exited;
	bool last_exit_requested; /* corral stopped it: the exit is not a failure */
	/* The last run ended in failure: a failed start, a signal or a
	 * non-zero code that restart.success_exit does not list, or no
	 * readiness in time. Meaningful when has_exited. */
	bool last_run_failed;
	/* The config rule that decided what followed the last exit, for
	 * status: "restart.success_exit", "restart.no_restart_exit",
	 * "restart.policy", "restart.attempts"; NULL when corral stopped it.
	 * Static text. */
	const char *exit_rule;
	unsigned restart_count; /* every run after the first, but a schedule's */
	/* A scheduled task's runs begun: each time of its schedule, and each
	 * `corral start` between its runs. Apart from restart_count, which
	 * counts the retries within a run: 30 runs are not 30 restarts. */
	unsigned run_count;
	uint64_t started_at_ms; /* monotonic, when the current run began */
	uint64_t next_start_ms; /* at RUNNER_STEP_AWAIT_DELAY: when it runs again */
	/* The last start found corral short of a resource (fds, processes,
	 * memory): it is tried again after this long, doubling, and not
	 * counted against the restart policy. 0 once a start went through,
	 * or the task died meanwhile (a stop). */
	uint64_t resource_retry_ms;
	/* Counts the times it became pending again: a dependent that started
	 * under an older generation saw a run that is over. */
	uint64_t generation;
	/* What the runner has to say about its task, made at the first thing
	 * said: NULL for a task that never exited, failed or said it was
	 * ready early, as most idle tasks (288 bytes a task; bench_supervisor --memory-only). */
	struct runner_texts *texts;
	/* Its exits and failed starts by kind, over its whole life (kept
	 * across reloads, as restart_count is); NULL until the first. */
	struct exit_tally *exits;

	struct restart_tracker tracker;
};

struct runner_texts {
	char early_ready_how[32];
	char decision[160]; /* what followed the last exit: "restarting in 1s ..." */
	/* Why it failed for good, for the tasks that waited for it:
	 * "exited with code 1", "not ready within 15s", or what it waited for
	 * in vain with the chain there ("g/db failed for good (...); the
	 * chain: g/web -> g/api -> g/db"). Made only for a task with
	 * something to say. */
	char failure[224];
};

void runner_init(struct runner *runner, const struct task_config *config,
		 const struct runner_effects *effects, void *context);
/* Frees what the runner made; runner_init again to use it. */
void runner_free(struct runner *runner);

/* What followed the last exit ("restarting in 1s ..."), or NULL. */
const char *runner_decision(const struct runner *runner);
/* Why it failed for good, or "" when no reason was recorded. */
const char *runner_failure(const struct runner *runner);

/* Announces the task (event "received"): it is known and waits for its
 * stage gate. Called once the whole group exists. */
void runner_received(struct runner *runner);

/* Pending and not waiting out a restart delay. */
bool runner_ready_to_start(const struct runner *runner);

/* Pending, and a restart delay (or a start put off for lack of a
 * resource) runs until next_start_ms. */
bool runner_waiting_out_delay(const struct runner *runner);

/* The group calls this when the task's gate is open and it is ready. */
void runner_start(struct runner *runner, uint64_t now_ms);

/* From the process side. */
void runner_exec_succeeded(struct runner *runner, uint64_t now_ms);
/* The task said it is ready (`how`: "READY=1", "fd 3", "probe passed").
 * Said while still starting (before runner_exec_succeeded), it counts
 * once the exec is confirmed. */
void runner_ready(struct runner *runner, const char *how);
/* Ready once in this run: what the stage gates wait for. */
bool runner_is_ready(const struct runner *runner);
/* readiness.continuous: a task that was ready is not any more (`why`:
 * "readiness probe failed 3 times in a row (last: HTTP 503)"), until
 * runner_ready says it is again. */
void runner_not_ready(struct runner *runner, const char *why);
/* Ready now: ready once, and not lost since. */
bool runner_is_ready_now(const struct runner *runner);
/* readiness.continuous: ready once in this run, and not now. */
bool runner_ready_lost(const struct runner *runner);
/* The state a status shows: "stopping" while the task's process runs on
 * after corral began to stop it (systemd's deactivating, Kubernetes'
 * Terminating), else task_state_name's. */
const char *runner_shown_state(const struct runner *runner);
/* Whether a status says it is ready: ready now, and not being stopped. */
bool runner_shown_ready(const struct runner *runner);
/* EXTEND_TIMEOUT_USEC: a running task that is not ready yet has until
 * `until_ms` (rather than its readiness timeout) to become ready. */
void runner_extend_readiness(struct runner *runner, uint64_t until_ms);
/* Its health probe passed (once per run is enough to be healthy). */
void runner_healthy(struct runner *runner);
void runner_start_failed(struct runner *runner, const char *message, int exit_code,
			 uint64_t now_ms);
void runner_exited(struct runner *runner, const struct task_exit *exit, uint64_t now_ms);
void runner_timer_fired(struct runner *runner, enum runner_timer timer, uint64_t now_ms);

/* The hooks of `stage` asked for by run_hooks are over. Prestart: `ok`
 * spawns the task, else the start failed with `message` ("hook volumes:
 * exited with code 1"), which counts against the restart policy. Prekill:
 * the kill signal goes out (whatever the hooks did). */
void runner_hooks_finished(struct runner *runner, enum hook_stage stage, bool ok,
			   const char *message, uint64_t now_ms);

/* Stops a starting or running task with its kill signal, SIGKILL after its
 * kill timeout; its prekill hooks run first. A task whose prestart hooks
 * run has them cancelled and ends without a process. A pending task
 * stopped for good becomes dead at once. A stronger intent (for good)
 * overrides a weaker one already under way. */
/* Its group stops it for good later (after its dependents): its prekill
 * hooks start now, so that the stop, when it comes, only signals. Nothing
 * for a task without prekill hooks, one not running, or one stopping. */
void runner_prekill_ahead(struct runner *runner);

void runner_stop(struct runner *runner, enum runner_stop_intent intent, const char *reason,
		 uint64_t now_ms);

/* A stop under way ends as `intent` instead: a restart of the whole group
 * overrides a stop for good that has not finished yet. */
void runner_redirect_stop(struct runner *runner, enum runner_stop_intent intent);

/* SIGKILL now, no grace; a pending task becomes dead. */
void runner_kill_now(struct runner *runner, const char *reason);

enum runner_request_result {
	RUNNER_REQUEST_DONE,
	RUNNER_REQUEST_NOT_RUNNING, /* Restart of a task that is not running */
	RUNNER_REQUEST_GATE_CLOSED, /* ForceRestart whose gate cannot open now */
	RUNNER_REQUEST_STOPPING,    /* the task is being stopped for good */
};

/* Restart of a running (or starting) task: stopped with its kill signal and
 * started again at once, not charged to its restart policy. */
enum runner_request_result runner_restart(struct runner *runner, uint64_t now_ms);

/* ForceRestart: a dead task runs again, waiting on its stage gate like any
 * start; `gate_reachable` says whether that gate can still open in the
 * group's current state. A running task is restarted as by runner_restart;
 * a pending one starts without waiting out its restart delay. */
enum runner_request_result runner_force_restart(struct runner *runner, bool gate_reachable,
						uint64_t now_ms);

/* A scheduled task's time came (`why`: "its time came"): a new run, said as
 * a `scheduled` event "run N of its schedule: <why>" and counted in
 * run_count, never in restart_count. A dead task runs again, waiting on its
 * stage gate (`gate_reachable` as for runner_force_restart); a running one
 * (concurrency: replace) is stopped and started again as the next run; one
 * waiting out a restart delay after a failed run starts the next run now.
 * RUNNER_REQUEST_NOT_RUNNING: it is about to start already, nothing new. */
enum runner_request_result runner_run_scheduled(struct runner *runner, const char *why,
						bool gate_reachable, uint64_t now_ms);

/* For a restart of the whole group: a dead task becomes pending again with
 * a fresh restart history. Running tasks are stopped by the group first
 * with RUNNER_STOP_GROUP_RESTART. */
void runner_rearm(struct runner *runner);

/* The code corral exits with when this task is the first to fail for good:
 * the exit code, 128+signal, 127/126 for a failed start, and 1 for a task
 * that exited 0 too often for its policy. */
int runner_failure_exit_code(const struct runner *runner);

/* Never started, and never will: what it waits for failed (`reason`). It is
 * dead and failed for good, with `reason` as its failure. */
void runner_fail_unstarted(struct runner *runner, const char *reason);

/* Dead after a run that ended with success, not stopped by corral: what
 * a `completed` dependency waits for. */
bool runner_last_run_succeeded(const struct runner *runner);

/* The last exit was a failure that counted: not one corral asked for. */
bool runner_last_exit_failed(const struct runner *runner);

/* "exited with code 3", "killed by SIGKILL", "failed to start". */
void task_exit_describe(const struct task_exit *exit, char *buffer, size_t size);
