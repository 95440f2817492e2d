/* How long a graceful shutdown of a config can take, at worst: corral's
 * stop (supervisor.c, group.c's advance_stop, task_dependencies.c, the
 * runner's stop) modelled on the config alone, for `corral check`. Pure:
 * a config in, a chain of tasks and its time out.
 *
 * At a shutdown every group stops at once. Every running task's prekill
 * hooks start then (a task whose turn has not come runs them ahead, as
 * Kubernetes runs every PreStop hook at once); a task gets its kill signal
 * once its prekill hooks are over and every task it waits for is dead:
 * the tasks that wait for it (`after:`, in any group, also through tasks
 * that are dead), the lower stop tiers of its group placed before it
 * (main and one-shot tasks, then poststart sidecars, then prestart
 * sidecars), and, in an `order: sequential` group, the tasks written
 * after it in its stage. It is dead at worst its kill timeout later (the
 * SIGKILL). corral exits once every task is dead and its exited and stop
 * hooks are over; a group's poststop tasks start once every other task of
 * the group is dead, and their own run is not known here.
 *
 * At worst, in a running group: every main task and sidecar runs when the
 * shutdown comes (prestart and poststart one-shots ran once, at the start,
 * and are done), every hook takes its whole timeout, every task ignores
 * its kill signal. Not counted: hook_concurrency, which can make hooks
 * wait for a slot, and the run of poststop tasks. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/model/config.h"

/* One task of the chain that takes longest. */
struct shutdown_link {
	const struct task_config *task;
	/* What it adds: the first its prekill hooks (when they hold its
	 * signal back longer than what it waits for) and its kill timeout;
	 * the others their kill timeout; the last its exited and stop hooks.
	 * A poststop task: its prestart hooks and then its hooks after. */
	uint64_t prekill_ms;
	uint64_t kill_timeout_ms;
	uint64_t prestart_ms;
	uint64_t hooks_after_ms;
	bool poststop; /* runs once its group is down; its own run not counted */
};

struct shutdown_budget {
	uint64_t total_ms;
	/* In time order: the first task stopped first, the last ends last. */
	struct shutdown_link *chain;
	size_t chain_length;
	/* Tasks that wait for each other to stop (`order: sequential`
	 * against `after:`): none gets its signal until shutdown_timeout
	 * kills them all. `cycle` holds them, the first again at the end. */
	const struct task_config **cycle;
	size_t cycle_length;
};

/* Computes the budget of `config`; free it with shutdown_budget_free. */
void shutdown_budget_compute(const struct config *config, struct shutdown_budget *budget);
void shutdown_budget_free(struct shutdown_budget *budget);

/* 0 when a shutdown fits in `timeout_ms`; else -1 with `warning`:
 *   shutdown: web/db <- web/app <- web/proxy can take 1m5s (web/proxy:
 *   prekill hooks 10s + kill.timeout 30s; web/app: kill.timeout 15s;
 *   web/db: kill.timeout 10s) > shutdown_timeout 30s
 * (A <- B: A stops once B is dead), or the tasks that wait for each other.
 * `source` names where the timeout came from ("--shutdown-timeout"), NULL
 * for the config. */
int shutdown_budget_check(const struct config *config, uint64_t timeout_ms, const char *source,
			  char *warning, size_t warning_size);
