/* One task of a running corral: its runner (the state machine) wired to a
 * real process, output pipe and timers. Its events go to the event log. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/model/config.h"
#include "hooks/task_hooks.h"
#include "isolation/cgroup_task.h"
#include "isolation/device_policy.h"
#include "isolation/spawn.h"
#include "isolation/task_isolation.h"
#include "isolation/task_plan.h"
#include "supervisor/lifecycle/runner.h"
#include "supervisor/output/line_ring.h"
#include "supervisor/output/log_file.h"
#include "supervisor/output/task_output.h"
#include "supervisor/tasks/services.h"
#include "supervisor/tasks/task_dependencies.h"
#include "supervisor/tasks/task_network.h"
#include "supervisor/tasks/task_readiness.h"
#include "supervisor/tasks/task_records.h"
#include "supervisor/tasks/task_usage.h"

struct group;

#define TASK_EVENT_MESSAGE_MAX 160

struct task {
	struct runner runner;
	const struct task_config *config;
	struct group *group;
	struct services *services;
	struct task_plan plan;
	/* Namespaces, capabilities, seccomp: for a task with an `isolation:`
	 * map only, else NULL (no room kept for it). */
	struct task_isolation *isolation;
	/* What this start adds to the configured mounts, devices and
	 * environment: the prestart hooks' results (hooks/), kept across
	 * restarts until the hooks run again. Empty without hooks. */
	struct start_additions additions;
	/* Its hooks, their queue and their state; NULL for a task with no
	 * hook, exec or built-in (most tasks: no room kept for them). */
	struct task_hooks *hooks;
	struct task_network network; /* modes bridge and group (task_network.c) */

	/* Small fields sit together, here and below: the holes between
	 * them and the 8-byte fields were 48 bytes a task (measured: bench_supervisor
	 * --memory-only). */
	pid_t pid; /* 0 when no process */
	bool has_setup_failure;
	struct loop_watch pidfd_watch;
	struct loop_watch error_pipe_watch;
	struct spawn_failure setup_failure;

	bool failure_reported; /* services->task_failed_for_good was called */
	bool failure_ignored;  /* on_failure: ignore said so for this failure */

	/* With corral's reaper as the PID 1 of its pid namespace, `pid` is the
	 * reaper's; its status socket tells the command's (task_reaper_status.c). */
	struct loop_watch reaper_status_watch; /* corral's end, during a run */
	int reaper_status_write;               /* the reaper's, until the spawn is done */
	pid_t command_pid;                     /* in corral's namespace; 0 until told */
	bool command_exit_told;                /* the reaper said how the command ended */
	struct task_exit command_exit;

	/* Config `after:` at run time (task_dependencies.c); NULL, 0 and
	 * false for a config without it. */
	struct task_link *after; /* after_count of them */
	/* Config `wait_for:`'s checks while it waits to start
	 * (task_outside_wait.h); NULL otherwise. */
	struct outside_wait *outside;
	size_t after_count;
	struct task **dependents; /* the tasks whose `after:` names this one */
	size_t dependent_count;
	size_t stop_position; /* in the stop order of the whole config */
	bool restart_held;    /* a Restart waits for restart: true dependents */
	/* A rolling restart replaces it (instance_roll.h): its `restart:
	 * true` dependents stay up, and do not hold its new run back. */
	bool rolling;
	bool failed_by_dependency; /* never started: what it waited for failed */
	/* Ready to start with its gate open, held back by `after:` since
	 * dependency_wait_began_ms: an entry's `timeout` counts from then, and
	 * dependency_timer fires when the next one runs out. */
	bool dependency_waiting;
	uint64_t dependency_wait_began_ms;
	struct loop_timer dependency_timer;
	/* Its reaper started, the command's pid not told yet: "started (pid
	 * N)" waits for it, so that the pid said is the command's, as status
	 * and `kill` want it, not the reaper's. */
	bool started_unannounced;
	unsigned walk_mark; /* scratch of one graph walk */

	/* Its cgroup, made before its first start and kept across restarts. A
	 * run ends when the cgroup is empty, not when the main process exits:
	 * in between, `exit` waits in `pending_exit`. */
	struct task_cgroup cgroup;
	struct loop_watch cgroup_events_watch; /* cgroup.events, EPOLLPRI */
	struct device_policy devices;          /* an isolated task's, on its cgroup */
	uint64_t oom_kills_reported;           /* the counter when last reported */
	unsigned execs_running;                /* `corral exec` commands inside it */
	/* Instead of cgroup.events, when it could not be watched (corral
	 * short of fds): the cgroup is looked at every 50 ms. */
	struct loop_timer cgroup_poll;
	struct task_exit pending_exit;
	/* Its last usage reading, which status replies of many tasks serve
	 * (task_usage.h); forgotten when a run begins or ends. */
	struct task_usage usage;

	struct task_readiness readiness;
	bool run_seen;   /* the current run's exec was seen (readiness listens) */
	bool ready_seen; /* and its readiness (the health probe runs) */
	/* The main process exited and others of the run are left in the
	 * cgroup (task_cgroup_run_end). */
	bool awaiting_empty_cgroup;
	/* Its bidirectional mounts' sources are taken for the run. */
	bool shared_mounts_taken;

	/* config `schedule:`: the timer of its next run, and that run's
	 * wall-clock time (task_schedule.h). */
	struct loop_timer schedule_timer;
	uint64_t schedule_due_ms;

	struct task_output output;        /* stdout, and stderr unless separate */
	struct task_output *error_output; /* log.streams: separate: stderr's; else NULL */
	struct line_ring logs;            /* recent output, for `corral logs` */
	struct log_file *log_file;        /* config log.dir: its lines on disk too; else NULL */
	/* Where both pipes' lines go: stdout, the ring, the file, followers,
	 * found from the task at each batch (task.c's hand_task_lines). */
	struct output_sink_list sinks; /* task_sinks_changed */
	struct loop_timer timers[RUNNER_TIMER_COUNT];

	/* Reload (task_reload.h): the definition its next run takes, NULL
	 * when none waits; and whether the config no longer has it (it
	 * stops, and is freed once dead). */
	const struct task_config *next_config;
	bool removed;
	unsigned log_followers; /* control clients following the logs */
	/* Its counts and exits over its whole life (task_records.h): NULL
	 * until there is something to count, as most tasks never have
	 * (task_counts_of). */
	struct task_record *record;
	/* Its slot with corral's keeper (task_keeper.h); 0: none. Changed:
	 * its record is to be sent; unsettled: the keeper was told its last
	 * record is not what it is doing now (a start, a stop, hooks). */
	uint32_t keeper_slot;
	bool keeper_changed, keeper_unsettled;
	bool keeper_restored; /* taken back from its record by a restore */
	/* A task taken back after a restore is the keeper's child: how it
	 * ended comes from the keeper (task_reap). */
	bool keeper_reaped;
	int keeper_wait_status;
};

/* Prepares everything a start needs: 0, or -errno with `error` naming the
 * task. */
int task_init(struct task *task, const struct task_config *config, struct group *group,
	      const char *group_name, struct services *services, char *error, size_t error_size);
void task_free(struct task *task);

/* The process of this task ended (seen by its pidfd or by the SIGCHLD
 * sweep, whichever comes first): reap it and tell the runner. */
void task_reap(struct task *task);

bool task_has_process(const struct task *task);

/* autostart: false, and not started yet: its group's lifecycle goes on
 * without it, as if it were not in the config, until `corral start`. */
bool task_is_dormant(const struct task *task);

/* Records an event of the task (the event log) outside the runner:
 * readiness and health. */
void task_note_event(struct task *task, enum task_event_type type, const char *message);

/* The SIGCHLD sweep found `pid` exited: true when it was one of the task's
 * probe runs, now reaped. */
bool task_reap_helper(struct task *task, pid_t pid);

/* ---- its cgroup while it runs (task_cgroup_run.c) ---- */

void task_cgroup_run_init(struct task *task);
/* Before a start: the cgroup made (once) with its limits, and watched;
 * an isolated task's device policy put on it. A negative errno with
 * `error`: the cgroup's mkdir or open's own (EMFILE: corral is short of
 * fds, and the start is tried again), -EINVAL when a limit or the policy
 * cannot be applied. */
int task_cgroup_run_prepare(struct task *task, char *error, size_t error_size);
/* Dead for good, or freed: watches closed, cgroups removed. */
void task_cgroup_run_release(struct task *task);
/* The main process exited: true when others of the run were left in the
 * cgroup; they are killed, and the run ends (task_finish_run) once the
 * cgroup is empty. */
bool task_cgroup_run_end(struct task *task, const struct task_exit *exit);
/* A kill seen in the group's memory.events (group_oom_watch.h): reported
 * now when the task runs, or is ending a run. */
void task_report_oom_kills_while_running(struct task *task);

/* A `corral exec` command in the task began: returns the OOM count its
 * end compares with. While one runs, OOM kills are not reported as the
 * task's (they may be the command's). */
uint64_t task_exec_started(struct task *task);

/* It ended (`sigkilled`: by SIGKILL, which an OOM kill is): returns the
 * OOM kills that were its own, which are then never the task's (its
 * oom_killed events, status oom_kills, its exit). */
unsigned task_exec_ended(struct task *task, uint64_t kills_at_start, bool sigkilled);
/* The run is over: OOM kills counted, output drained, the runner told. */
void task_finish_run(struct task *task, struct task_exit exit);

/* Usage read from its cgroup now (all false without one). */
void task_read_stats(const struct task *task, struct task_cgroup_stats *stats);

/* Sends a signal to the task's main process: 0, or -ESRCH with none. */
int task_send_signal(struct task *task, int signal_number);

/* ---- its reaper's status socket (task_reaper_status.c) ---- */

void task_reaper_status_init(struct task *task);
/* A start of a task with a reaper: a fresh socket, the reaper's end in
 * `request`. 0 or -errno. */
int task_reaper_status_prepare_spawn(struct task *task, struct spawn_request *request);
void task_reaper_status_spawned(struct task *task);
/* The reaper exited: the socket is read a last time and closed. True with
 * `exit` set when the reaper said how the command ended. */
bool task_reaper_status_run_ended(struct task *task, struct task_exit *exit);
/* The command's pid: for a task with a reaper the command's once it said
 * so (microseconds after the start), else `pid`. */
pid_t task_command_pid(const struct task *task);
/* Says "started", when the task's reaper has not told the command's pid
 * yet and it was put off for it (task.c's effect_event). */
void task_announce_started(struct task *task);
void task_reaper_status_close(struct task *task);

/* ---- its hooks (task_hooks_run.c) ---- */

/* The run is over: its bidirectional mounts' sources are given back (what
 * it mounted below them goes once no run binds them). */
void task_give_back_shared_mounts(struct task *task);

/* A write end of where its stderr goes: its own pipe (log.streams:
 * separate) or the output pipe; the caller closes it. -errno on failure. */
/* The task's output sinks made again from what it has now: corral's
 * stdout first (it paces the others), the ring `corral logs` reads, the
 * log file when there is one, the followers of `corral logs -f` while
 * there are any, the readiness pattern when there is one. Called when one
 * comes or goes, not at each batch. */
void task_sinks_changed(struct task *task);

int task_open_stderr_writer(void *task);

/* The config's log.mode and log.rate_limit, on each of its pipes. */
void task_apply_output_settings(struct task *task);

/* (Re)opens its log file as its config's log.dir says: none without. */
void task_open_log_file(struct task *task);
void task_close_log_file(struct task *task);

/* Lines its output pipes dropped (log.mode: non-blocking), since the task
 * was made (a reload that rebuilds it included). */
uint64_t task_dropped_lines(const struct task *task);
/* Lines its log files (log.dir) lost, likewise. */
uint64_t task_lost_log_lines(const struct task *task);

/* Its counts, made at the first thing counted. */
struct task_counts *task_counts_of(struct task *task);
/* Its counts, NULL while nothing was counted. */
const struct task_counts *task_counts_seen(const struct task *task);
/* Its record with what its current pipes dropped added (what a log file
 * lost is, when it is closed), taken from the task (the caller owns it;
 * NULL: nothing counted): a rebuild hands it to the task it makes. */
struct task_record *task_detach_record(struct task *task);

/* After its plan and output exist. */
void task_hooks_open(struct task *task, const char *group_name);
void task_hooks_close(struct task *task);
/* Its built-in prestart hooks, ahead of the exec ones (task_builtin_hooks.c). */
void task_builtin_hooks_add(struct task *task);
/* The runner's run_hooks and cancel_hooks effects. */
bool task_effect_run_hooks(struct runner *runner, enum hook_stage stage);
void task_effect_cancel_hooks(struct runner *runner, enum hook_stage stage);
