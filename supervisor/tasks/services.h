/* What every task and group of a running corral shares: passed down
 * explicitly rather than kept in globals. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/loop.h"
#include "hooks/task_hooks.h"
#include "isolation/cgroup_tree.h"
#include "isolation/host_shared_mounts.h"
#include "isolation/network.h"
#include "isolation/spawn.h"
#include "supervisor/output/output_sinks.h"
#include "supervisor/output/output_stdout.h"
#include "supervisor/probes/probe_services.h"
#include "supervisor/tasks/event_log.h"
#include "supervisor/tasks/network_spares.h"
#include "supervisor/tasks/pid_index.h"

struct group;
struct shortage_report;
struct task;
struct task_records;
struct keeper_loop_side;

struct services {
	struct loop *loop;
	struct output_stdout *sink;
	struct event_log *events;
	struct spawn_slots *spawn_slots;       /* the low fds every spawn goes through */
	struct cgroup_tree *cgroups;           /* enabled false: tasks get no cgroups */
	struct network_host *network;          /* corral's network namespace (libnl) */
	struct network_spares *network_spares; /* namespaces for network mode none */
	struct pid_index *task_pids;           /* running tasks by main pid (reaping) */
	struct task_records *records;          /* tasks' life-long counts (task_records.h) */
	/* corral's keeper (keeper_loop_side.h), sent each task's record;
	 * NULL without one. `keeper_next_slot` numbers the tasks for it;
	 * `keeper_wanted` is told a task's record is to be sent. */
	struct keeper_loop_side *keeper;
	uint32_t keeper_next_slot;
	void (*keeper_wanted)(void *context);
	/* `pid` (a zombie) reaped once the records are with the keeper. */
	void (*keeper_reap_after)(void *context, pid_t pid);
	void *keeper_context;
	/* Sources of bidirectional mounts, shared on the host while bound. */
	struct host_shared_mounts *shared_mounts;
	/* ROOT/PID of the task directories (hooks/task_dirs.h) when a task
	 * has task_dirs, else NULL; removed when corral exits. */
	const char *task_dirs_root;
	/* Where the NOTIFY_SOCKETs of tasks with a network namespace of their
	 * own are (task_readiness.c): made at the first, removed at exit;
	 * NULL until then. `notify_sockets` numbers them. */
	char *notify_dir;
	unsigned notify_sockets;
	/* Where the control socket listens, NULL without one: covered in the
	 * mount namespace of a task whose control: list grants nothing, so
	 * that it does not see the socket at all. */
	const char *control_socket_path;
	/* What the probes of tasks take: the loop, the spawn slots and the
	 * network as above, and the resolver of wait_for's host names. */
	struct probe_services probes;
	/* Hook processes at once, all tasks together (config hook_concurrency). */
	struct hook_limiter *hook_limiter;
	/* How hook processes start: spawn_slots above (task_hooks_run.c). */
	struct hook_spawner hook_spawner;
	/* `corral exec` sessions (exec_session.h), for status. */
	struct exec_sessions *exec_sessions;
	/* Every group, for dependencies that cross groups. */
	struct group **groups;
	size_t group_count;
	unsigned dependency_walk; /* numbers the walks of task_dependencies.c */
	/* corral run --keep-running: a main task stopped on request does not
	 * end its group; `corral start` runs it again. */
	bool keep_running;
	/* `corral upgrade`'s new corral: the tasks are there already, and
	 * are not announced again ("received"). */
	bool taking_over;
	/* One-command mode (supervisor/pid1/one_command.h): the task gets corral's
	 * stdio, and the terminal on it when corral let go of one. */
	bool inherit_stdio;
	bool take_terminal;
	/* Starts put off for lack of a resource, said once a burst. */
	struct shortage_report *shortage;
	/* A rolling restart (instance_roll.h, `roll`) says a line of JSON to
	 * whoever follows it (corral restart --rolling); `last`: it is over.
	 * NULL: nobody is told. */
	void (*roll_said)(struct services *services, const void *roll, const char *line,
			  size_t length, bool last);
	/* Called once for each task that fails for good. */
	void (*task_failed_for_good)(struct services *services, struct task *task);
	/* The clients following logs (`corral logs -f`), as a sink of every
	 * task's output (output_sinks.h; the sink is the task). */
	const struct output_sink_ops *log_followers;
};
