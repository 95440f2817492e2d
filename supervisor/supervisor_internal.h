/* The supervisor's state, shared by the files that make up its run:
 * supervisor.c (set-up, signals, the loop), supervisor_doors.c (the
 * control socket and the HTTP endpoint), reload.c (a new config applied
 * while everything runs), scale.c, termination.c and upgrade/ (the state
 * handed to a new binary). Nothing below the supervisor includes this. */
#pragma once

#include <stddef.h>

#include "base/handover.h"
#include "base/loop.h"
#include "base/throttled_log.h"
#include "config/model/config.h"
#include "isolation/cgroup_tree.h"
#include "isolation/network.h"
#include "isolation/spawn.h"
#include "supervisor/control/control_commands.h"
#include "supervisor/control/control_peer.h"
#include "supervisor/control/control_server.h"
#include "supervisor/control/exec_session.h"
#include "supervisor/http/http_server.h"
#include "supervisor/keeper/keeper_loop_side.h"
#include "supervisor/metrics/metrics_text.h"
#include "supervisor/output/output_json_lines.h"
#include "supervisor/output/output_stdout.h"
#include "supervisor/parent/parent_notify.h"
#include "supervisor/pid1/one_command.h"
#include "supervisor/supervisor.h"
#include "supervisor/tasks/event_log.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/network_spares.h"
#include "supervisor/tasks/pid_index.h"
#include "supervisor/tasks/services.h"
#include "supervisor/tasks/shortage_report.h"
#include "supervisor/tasks/task_records.h"
#include "supervisor/termination.h"
#include "supervisor/watch/watch_set.h"

#define OUTPUT_SINK_CAPACITY (256 * 1024)

/* A config the supervisor has run: the one it started with (its caller's)
 * and each one a reload loaded (its own). Tasks and groups point into the
 * config they were made or last updated from, so an older one is freed
 * only once nothing points into it (reload_collect). */
struct config_generation {
	struct config *config;
	bool owned;
};

struct supervisor {
	const struct config *config; /* the current one */
	struct config_generation *generations;
	size_t generation_count;
	struct services services;
	struct loop *loop;
	struct spawn_slots spawn_slots;
	struct cgroup_tree cgroups;
	struct network_host network;
	struct network_spares network_spares; /* for tasks of network mode none */
	struct pid_index task_pids;           /* each running task by its main pid */
	struct task_records task_records;     /* tasks' life-long counts, handed over */
	struct keeper_loop_side keeper;       /* corral's keeper; channel -1: none */
	/* What goes to the keeper (kept_state.c): sent at the end
	 * of a turn that changed something; corral's own part again when
	 * the config or the records' chunks changed. */
	struct loop_idle keeper_flush;
	struct loop_watch keeper_watch; /* REAPED from the keeper */
	const struct config *kept_config;
	size_t kept_config_scaled, kept_chunks;
	bool keeper_gone;    /* the channel broke: nothing is sent any more */
	pid_t *kept_zombies; /* reaped once the records saying their exits are sent */
	size_t kept_zombie_count, kept_zombie_capacity;
	char *kept_groups;    /* the groups' record last sent */
	int kept_document_fd; /* corral's record in a memfd (a big config), or -1 */
	size_t kept_groups_length;
	/* The last REAPED acted on, and the last the keeper was told of
	 * (SEEN, after the records that say what came of it). */
	uint32_t keeper_reaped_number, keeper_reaped_told;
	struct host_shared_mounts shared_mounts;
	/* Every group name this run made a cgroup for, owned: what the cgroup
	 * tree removes at close. */
	char **group_names;
	size_t group_name_count;
	/* The cgroup tree's owner (cgroup_tree.h): the config's real path,
	 * NULL in one-command mode. */
	char *cgroup_owner;
	char *task_dirs_root; /* ROOT/PID, or NULL: no task has task_dirs */
	struct output_stdout sink;
	/* The JSON lines of the batch being published to followers: one
	 * buffer, kept for the next batch. */
	struct output_json_lines follower_lines;
	struct event_log events;
	struct loop_watch signal_watch;
	/* Signals from tasks are requests (signal_requests.c): how a sender
	 * is told from a task, and refusals said once per sender per
	 * interval. */
	struct control_peer_rules signal_peer_rules;
	struct throttled_log signal_refusals;
	/* The current config's groups in its order, then those a reload
	 * removed that are still stopping. */
	struct group **groups;
	size_t group_count;
	struct control_server *control;
	struct control_context control_context;
	struct http_server *http;              /* config `http`; NULL: off */
	struct http_sources http_sources;      /* what it answers from */
	const struct one_command *one_command; /* NULL: a config's run */
	int log_format_option;                 /* --log-format, -1: the config's log_format */
	struct hook_limiter hook_limiter;
	struct exec_sessions exec_sessions;
	struct shortage_report shortage; /* starts put off for lack of a resource */
	struct watch_set watches;        /* the tasks' `watch:` entries */

	bool shutting_down;
	bool killing;
	struct loop_timer shutdown_timer;
	/* --shutdown-timeout or CORRAL_SHUTDOWN_TIMEOUT, over the config's
	 * (and every reloaded one's); source NULL: the config's. */
	uint64_t shutdown_timeout_ms;
	const char *shutdown_timeout_source;

	struct corral_counters counters; /* for GET /metrics */
	uint64_t started_wall_ms;        /* wall clock, for GET /metrics */
	struct parent_notify parent;     /* sd_notify to corral's own parent */

	/* `corral upgrade`: the document this corral takes over (NULL for
	 * an ordinary start), and the client that asked, answered once the
	 * tasks are taken over. */
	const struct handover_reader *handover;
	struct control_client *upgrade_requester;
	/* `corral upgrade` while its new binary is checked (upgrade.c). */
	struct upgrade_request *upgrade;

	bool have_failure;
	bool failure_is_secondary; /* from a task that never started */
	/* A group with `on_failure: exit` lost a task: corral shuts down
	 * once the groups have settled (never from within a settle). "" for
	 * none. */
	char exit_for_failure[192];
	int exit_code;
	struct termination_record termination; /* why it exits, for the termination log */
};

/* After a change of the group list: the control socket's and the tasks'
 * views of it follow. */
void supervisor_groups_changed(struct supervisor *supervisor);

/* GET /metrics' text in `format` (metrics_text.h), of every group;
 * the caller frees it. */
char *supervisor_metrics_text(struct supervisor *supervisor, enum metrics_format format,
			      size_t *length);

/* What the current config's global keys set and a reload may change:
 * the format of task lines on stdout (--log-format over the config's),
 * the bound on hook processes. */
void supervisor_apply_settings(struct supervisor *supervisor);

/* supervisor.c's shutdown: graceful, bounded by the shutdown timeout.
 * `reason` for the log ("SIGTERM"), `by` for the termination message. */
void supervisor_begin_shutdown(struct supervisor *supervisor, const char *reason, const char *by);

/* ---- supervisor_doors.c: the control socket and the HTTP endpoint ---- */

/* The control socket (in its place, or handed over by an upgrade), then
 * the HTTP endpoint when the config has one. 0, or -errno after saying why. */
int supervisor_open_doors(struct supervisor *supervisor, const struct run_options *options);
/* Before anything is made or said: another corral listens where this one's
 * socket would go (said, and this one ends). */
bool supervisor_control_socket_taken(const struct config *config,
				     const struct run_options *options);
/* SIGHUP: as `corral reload` of the same files. */
void supervisor_reload_on_hangup(struct supervisor *supervisor);

/* signal_requests.c: its throttle ready before anything can fail; the
 * rest once the loop and the cgroup tree are open; at close. */
void signal_requests_prepare(struct supervisor *supervisor);
void signal_requests_open(struct supervisor *supervisor);
void signal_requests_close(struct supervisor *supervisor);
/* A signal but SIGCHLD, in a config's run: judged, said, acted on. */
struct signalfd_siginfo;
void signal_requests_handle(struct supervisor *supervisor, const struct signalfd_siginfo *info);
/* A `watch:` entry's action `reload` (the supervisor is `pointer`): as SIGHUP. */
void supervisor_reload_from_watch(void *pointer);
/* Each event of the event log, to the followers of `corral events -f`. */
void supervisor_publish_event(void *pointer, const char *json, size_t length);
/* The followers of `corral logs -f`, a sink of every task's lines. */
extern const struct output_sink_ops supervisor_log_followers_sink;
/* A rolling restart's lines, to the client that asked for it. */
void supervisor_tell_roll_followers(struct services *services, const void *roll, const char *line,
				    size_t length, bool last);

#define SUPERVISOR_FROM_SERVICES(pointer)                                                          \
	((struct supervisor *)((char *)(pointer)-offsetof(struct supervisor, services)))
