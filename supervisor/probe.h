/* A probe: a command corral runs every `interval` to ask about a task
 * (readiness `exec`, `health`). Each run is a process of its own, started
 * and watched through the loop like a task, with the task's environment,
 * working directory and ids, its output thrown away, and its whole process
 * group killed when it outlives its timeout. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "isolation/task_plan.h"
#include "supervisor/loop.h"
#include "supervisor/services.h"

/* One run ended: passed (exit 0) or not, and why not ("exited with code 1",
 * "timed out after 2s", "exec /bin/chek: No such file or directory"). */
typedef void (*probe_result_function)(void *context, bool passed, const char *why);

struct probe {
	const struct probe_config *config;
	const struct task_config *task;
	const struct task_plan *plan;
	struct services *services;
	probe_result_function on_result;
	void *context;

	char *executable; /* argv[0] resolved once */
	bool active;      /* between probe_start and probe_stop */
	pid_t pid;        /* of the run in progress, else 0 */
	struct loop_watch pidfd_watch;
	int error_fd;     /* the run's spawn error pipe */
	bool timed_out;
	struct loop_timer next_run;
	struct loop_timer deadline;
};

void probe_init(struct probe *probe, const struct probe_config *config,
		const struct task_config *task, const struct task_plan *plan,
		struct services *services, probe_result_function on_result, void *context);

/* First run now, then one every interval until probe_stop. */
void probe_start(struct probe *probe);

/* No more runs; a run in progress is killed (and reaped through the loop). */
void probe_stop(struct probe *probe);

/* Reaps `pid` when it is this probe's run: true. For the SIGCHLD sweep. */
bool probe_reap(struct probe *probe, pid_t pid);

void probe_free(struct probe *probe);
