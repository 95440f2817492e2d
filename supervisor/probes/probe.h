/* A probe: how corral asks about a task every `interval` (readiness,
 * health).
 * - exec: each run is a process of its own, started and watched through
 *   the loop like a task, with the task's environment, working directory
 *   and ids, its output thrown away, and its whole process group killed
 *   when it outlives its timeout.
 * - tcp, http, unix: each run is a non-blocking connection corral makes
 *   from its loop (net_probe.c): no process. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/loop.h"
#include "config/model/config.h"
#include "isolation/spawn.h"
#include "isolation/task_plan.h"
#include "supervisor/probes/probe_services.h"

/* One run ended: passed (exit 0) or not, and why not ("exited with code 1",
 * "timed out after 2s", "exec /bin/chek: No such file or directory"). */
typedef void (*probe_result_function)(void *context, bool passed, const char *why);

/* exec with `inside`: its owner starts each run inside the task (for a
 * task's probes, tasks/task_join.h, as `corral exec` does). */
struct probe_inside {
	/* Starts `argv`: 0 with `result`, or -errno with `error`. */
	int (*spawn)(void *context, char *const *argv, struct spawn_result *result, char *error,
		     size_t error_size);
	/* After the run exited: true, with `error`, when its start failed. */
	bool (*read_failure)(void *context, int error_fd, char *error, size_t error_size);
	/* The run is over: what its start held goes. */
	void (*release)(void *context);
	void *context;
};

struct probe {
	const struct probe_config *config;
	const struct task_config *task;
	const struct task_plan *plan;
	struct probe_services *services;
	probe_result_function on_result;
	void *context;

	bool made;        /* probe_init was called, probe_free not yet */
	char *executable; /* exec: argv[0] resolved once */
	bool active;      /* between probe_start and probe_stop */
	bool passed_once; /* since probe_start: start_interval is over */
	pid_t pid;        /* of the run in progress, else 0 */
	struct loop_watch pidfd_watch;
	int error_fd; /* the run's spawn error pipe */
	bool timed_out;
	struct loop_timer next_run;
	struct loop_timer deadline;

	/* exec with `inside` (spawn NULL: none): how a run starts in the task. */
	struct probe_inside inside;
	bool run_joined; /* the run in progress was: its failure reads differently */

	/* tcp, http, unix (net_probe.c). */
	pid_t (*target_pid)(void *context); /* the task's process, for its namespaces */
	/* A wait_for target's: made from corral's own network namespace
	 * whatever the task's, to a host given by name or address. */
	bool outside;
	struct name_lookup *lookup;            /* a name being resolved, else NULL */
	struct resolved_addresses *candidates; /* a name's addresses, during a run */
	struct loop_watch socket_watch;        /* fd -1 between runs */
	char *request;                         /* http: the GET, and how much went out */
	size_t request_length, request_sent;
	char response[512]; /* http: the start of the answer */
	size_t response_length;
};

void probe_init(struct probe *probe, const struct probe_config *config,
		const struct task_config *task, const struct task_plan *plan,
		struct probe_services *services, probe_result_function on_result, void *context);

/* First run now (or after initial_delay), then one every interval until
 * probe_stop. */
void probe_start(struct probe *probe);
/* The same, the first run not before `delay_ms` from now. */
void probe_start_after(struct probe *probe, uint64_t delay_ms);

/* No more runs; a run in progress is killed (and reaped through the loop). */
void probe_stop(struct probe *probe);

/* Reaps `pid` when it is this probe's run: true. For the SIGCHLD sweep. */
bool probe_reap(struct probe *probe, pid_t pid);

void probe_free(struct probe *probe);

/* The interval now: start_interval until the first pass, then interval. */
uint64_t probe_interval_ms(const struct probe *probe);
/* A run's result, to the owner while the probe is active. */
void probe_report(struct probe *probe, bool passed, const char *why);

/* ---- net_probe.c: the connection kinds (and path), for probe.c ---- */

/* One run: the connection is made (in the task's network namespace, or
 * through its root for a Unix socket), and its result reported. */
void net_probe_run(struct probe *probe);
/* The run in progress ends without a result. */
void net_probe_cancel(struct probe *probe);
/* Whether a run is in progress. */
bool net_probe_running(const struct probe *probe);
/* Its deadline passed: a failure, "timed out after 2s". */
void net_probe_timed_out(struct probe *probe);
