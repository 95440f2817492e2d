/* The hooks of one task and the order they run in (docs/hooks.md).
 *
 * Each stage the runner asks for becomes a job in a queue; jobs run one at
 * a time, and within a job the task's hooks of that stage run one after
 * the other in list order. One queue per task keeps the stages of a task
 * in the order they happened (the exited hooks of one run finish before
 * the prestart hooks of the next begin) while tasks do not wait for each
 * other's hooks.
 *
 * A hook is an exec hook (config `hooks:`) or a built-in one: a function
 * that answers as an exec hook would, run inline. Prestart hooks keep, for
 * as long as corral runs, what they last returned, their `done` flag and
 * their state (shared by the hooks of one name across stages). */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/loop.h"
#include "config/model/config.h"
#include "hooks/hook_protocol.h"
#include "hooks/hook_runner.h"

/* A built-in hook: fills `response` as a parsed exec hook response would
 * be. 0, or -errno with `error` (the hook's name is added in front). */
typedef int (*builtin_hook_function)(const struct hook_request *request, void *data,
				     struct hook_response *response, char *error,
				     size_t error_size);

struct task_hook {
	const char *name;
	enum hook_stage stage;
	const struct hook_config *exec; /* NULL: built-in */
	char **envp; /* exec: its environment, built once (corral's, and who asks) */
	builtin_hook_function builtin;
	void *builtin_data;
	bool done;                   /* prestart: not run again */
	struct start_additions last; /* prestart: what it returned last */
};

/* Facts of the moment a stage was asked for, for the requests. */
struct hook_facts {
	unsigned run;
	pid_t pid;
	bool has_exit;
	int exit_code; /* -1: killed by exit_signal */
	int exit_signal;
	/* update: the keys a reload changed, "resources,health" */
	char changed[128];
};

/* How many hook processes run at once, for all tasks (config
 * `hook_concurrency`): a stop of 1000 tasks with an `exited` hook each
 * queues them rather than forking 1000 at once. The others wait, in
 * order. */
struct hook_limiter {
	unsigned running, max;
	struct task_hooks *first_waiting, *last_waiting;
};

/* What the task gives its hooks. */
struct task_hooks_owner {
	struct loop *loop;
	const struct task_config *task;
	const char *group_name;
	char *const *env; /* the task's environment (before hook additions) */
	/* hooks' stderr: a write end of the task's output, opened for each
	 * hook process (called with `context`) and closed once it has it */
	int (*open_stderr)(void *context);
	/* How its exec hooks' processes start (hook_runner.h). */
	const struct hook_spawner *spawner;
	/* Where a successful prestart leaves the merged results. */
	struct start_additions *additions;
	/* A job asked for with task_hooks_run ended: ok, or (prestart) the
	 * first failure, "hook volumes: exited with code 1". */
	void (*finished)(void *context, enum hook_stage stage, bool ok, const char *message);
	/* A hook of another stage failed; the others still run. */
	void (*failed)(void *context, enum hook_stage stage, const char *message);
	void *context;
	struct hook_limiter *limiter; /* NULL: no bound */
};

struct hook_state {
	char *name;
	json_t *state;
};

struct hook_job {
	enum hook_stage stage;
	struct hook_facts facts;
};

struct task_hooks {
	struct task_hooks_owner owner;
	struct task_hook *hooks;
	size_t count;
	struct hook_state *states; /* one per hook name */
	size_t state_count;

	struct hook_job *queue;
	size_t queue_length;
	bool job_active;
	bool job_cancelled;  /* the current job's result is not wanted */
	struct hook_job job; /* the current one */
	size_t next_hook;    /* in `hooks`, for the current job */
	/* The exec hook running now: allocated at the first one (most tasks
	 * have none, and it is a tenth of a task's size). */
	struct hook_run *run;
	struct loop_timer step; /* continues a job from the loop, never inline */
	bool holds_slot;        /* of owner.limiter, for the exec hook running now */
	bool waiting_for_slot;
	struct task_hooks *next_waiting;
};

/* The task's configured exec hooks, in order. The functions below that
 * ask or tell a task's hooks take NULL for a task without any (corral
 * keeps no task_hooks for it): nothing runs, nothing is busy. */
void task_hooks_init(struct task_hooks *hooks, const struct task_hooks_owner *owner);

/* Adds a built-in hook (CDI, task directories) after the built-ins added
 * before it and ahead of every exec hook: built-ins run first. */
void task_hooks_add_builtin(struct task_hooks *hooks, const char *name, enum hook_stage stage,
			    builtin_hook_function function, void *data);

/* Asks for the hooks of `stage`. true: a job is queued and `finished`
 * follows from the loop. false: nothing to wait for -- no hook of that
 * stage would run (prestart: all done, and the additions are up to date)
 * and no earlier job is still under way. */
bool task_hooks_run(struct task_hooks *hooks, enum hook_stage stage,
		    const struct hook_facts *facts);

/* The jobs of `stage` are not wanted any more: queued ones are dropped, a
 * running one is killed, and no `finished` follows for them. */
void task_hooks_cancel(struct task_hooks *hooks, enum hook_stage stage);

/* A hook runs or a job waits: corral does not exit meanwhile. */
bool task_hooks_busy(const struct task_hooks *hooks);

/* The state the hooks of `name` keep (`corral upgrade`: what they had in
 * the corral before the exec); `value` is referenced, not taken. */
void task_hooks_set_state(struct task_hooks *hooks, const char *name, json_t *value);

/* Kills the running hook and drops every queued job: corral is killing
 * everything. */
void task_hooks_abandon(struct task_hooks *hooks);

/* For the SIGCHLD sweep: true when `pid` is this task's running hook. */
bool task_hooks_reap(struct task_hooks *hooks, pid_t pid);

void task_hooks_free(struct task_hooks *hooks);
