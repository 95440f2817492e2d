/* How a task tells corral it is ready (config `readiness:`), and whether it
 * stays healthy (`health:`):
 * - notify systemd: NOTIFY_SOCKET names a datagram socket of corral's own,
 *   one per task (abstract and named by the kernel, so nothing is left on
 *   disk and nothing clashes); READY=1, STATUS=
 *   and STOPPING=1 are taken from the task's processes only (the sender's
 *   credentials: its main process or a process of its session);
 * - notify fd: a pipe whose write end the task gets as fd N (s6 style); a
 *   newline on it means ready;
 * - exec: a probe run every interval until it exits 0.
 * The runner keeps the state (runner->readiness) and the readiness timeout; this
 * file only listens. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "base/loop.h"
#include "isolation/spawn.h"
#include "supervisor/probes/probe.h"
#include "supervisor/probes/probe_record.h"
#include "supervisor/tasks/task_join.h"

struct task;

#define TASK_STATUS_TEXT_MAX 128

/* The probes of a task that has any (readiness: probe, health:): most
 * tasks have none, and these are most of a task's size (about 2.6 KiB),
 * so they are allocated only for a task that does. */
/* A probe run `inside` its task, joined to it as `corral exec` is. */
struct probe_join {
	struct task *task;
	struct task_join joined; /* the run in progress's */
};

struct task_probes {
	struct probe readiness_probe; /* exec, tcp, http, unix */
	struct probe health_probe;
	struct probe_join readiness_join, health_join;
	/* What the probes said during the current run (or the last one,
	 * until the next begins): for the log and `corral status`. */
	struct probe_record readiness_record;
	struct probe_record health_record;
	struct log_readiness *log; /* readiness.log, else NULL */
};

/* `notify: systemd` and `watchdog`: what only such a task needs. */
struct task_notify {
	char *env;                /* "NOTIFY_SOCKET=@corral/..." for the task */
	char *path;               /* its path, for a task with its own network; else NULL */
	struct loop_watch socket; /* notify systemd */
	/* readiness.watchdog: WATCHDOG_USEC=... for the task, and the
	 * deadline of its next WATCHDOG=1 while it runs ready. */
	char *watchdog_env;
	struct loop_timer watchdog;
};

struct task_readiness {
	/* NULL unless the task has `notify: systemd` or a watchdog: 72 bytes
	 * less for every other task (measured: bench_supervisor --memory-only). */
	struct task_notify *notify;
	struct loop_watch notify_pipe; /* notify fd: the read end of this run */
	int notify_pipe_write;         /* its write end, until the spawn is done */
	/* Restarts for failed health checks in a row, with no pass between:
	 * the next run's first check waits longer each time. */
	unsigned unhealthy_restarts;
	struct task_probes *probes; /* NULL while its config has no probe */
	/* The last STATUS= (TASK_STATUS_TEXT_MAX bytes, allocated at the
	 * first one), else NULL. */
	char *status_text;
};

/* Before the task's plan is built: the notify socket (its env var). 0, or
 * -1 with `error`. */
int task_readiness_open(struct task *task, char *error, size_t error_size);

/* After the plan is built: the probes, which run with the task's env. */
void task_readiness_init_probes(struct task *task);

/* The spawn of a run: a fresh pipe for `notify: fd`. 0 or -errno. */
int task_readiness_prepare_spawn(struct task *task, struct spawn_request *request);
void task_readiness_spawned(struct task *task);

/* The run's exec succeeded: probes start. */
void task_readiness_run_started(struct task *task);
/* Its readiness timeout passed, not ready: the readiness probe's failures
 * held back during the start (probe_record.h) are said now, before the
 * runner's not_ready event. */
void task_readiness_start_timed_out(struct task *task);
/* The run said it is ready: the health probe starts. */
void task_readiness_now_ready(struct task *task);
/* The run is over: listening stops until the next. */
void task_readiness_run_ended(struct task *task);

/* For the SIGCHLD sweep: reaps `pid` when it is a probe run of this task. */
bool task_readiness_reap(struct task *task, pid_t pid);

void task_readiness_close(struct task *task);
/* `corral upgrade`: the notify socket of the corral before the exec
 * (`env`: the NOTIFY_SOCKET= its tasks were given) replaces the new one.
 * The caller puts `env` into the task's plan. */
void task_readiness_adopt_notify(struct task *task, int fd, const char *env);
