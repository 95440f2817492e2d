/* What each control request does to the running groups, and its reply.
 * The socket side is control_server.c; this file knows the supervisor. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/loop.h"
#include "supervisor/control/control_server.h"
#include "supervisor/control/corral_counters.h"
#include "supervisor/control/status_reply.h"
#include "supervisor/tasks/event_log.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task_usage.h"

/* A reload request's options, for the reload (supervisor/reload.h). */
struct reload_options {
	const char *path;     /* NULL: the path the current config came from */
	bool dry_run;         /* the plan only */
	bool rerun_completed; /* a changed task that is dead runs again */
};

struct control_context {
	struct group **groups;
	size_t group_count;
	struct event_log *events;
	/* The same graceful shutdown as SIGTERM. */
	void (*shutdown)(void *supervisor, const char *reason);
	/* True once a shutdown began: nothing may be started any more. */
	bool (*shutting_down)(void *supervisor);
	/* A reload (supervisor/reload.h): its reply. */
	json_t *(*reload)(void *supervisor, const struct reload_options *options);
	/* corral scale (supervisor/scale.h): its reply. */
	json_t *(*scale)(void *supervisor, const struct control_request *request);
	struct exec_sessions *exec_sessions;
	/* control.exec: the control group's members may exec. */
	bool (*group_may_exec)(void *supervisor);
	/* Whether `path` is the file the running config was loaded from
	 * (the same device and inode): a control group member may reload
	 * that one by its name. */
	bool (*is_running_config)(void *supervisor, const char *path);
	/* `corral upgrade`: starts the check of `binary` ("": corral's own),
	 * after which it is exec'd with the state handed over and `client`
	 * answered (supervisor/upgrade.h). 0, or -errno with `why`
	 * when refused at once. */
	int (*upgrade)(void *supervisor, struct control_client *client, const char *binary,
		       char *error, size_t error_size);
	void *supervisor;
	/* Status replies of many tasks serve cached usage; the missing and
	 * stale readings are read again shortly after the reply is out
	 * (when usage_refresh_due fires), a batch per idle turn of the loop,
	 * from where the cursor says. */
	struct loop *loop;
	struct loop_timer usage_refresh_due;
	struct loop_idle usage_refresh;
	struct task_usage_cursor usage_cursor;
	/* Replies about many tasks: the size of the last one. */
	struct status_reply status_many;
	struct corral_counters *counters; /* the requests are counted there */
	/* When corral started (the wall clock, ms), for status' "corral"
	 * object; an upgrade's new corral takes the old one's. */
	const uint64_t *started_wall_ms;
};

/* A reply about many tasks found usage readings missing or stale (GET
 * /metrics' too): they are read again shortly after, a batch per idle
 * turn of the loop (task_usage.h). */
void control_commands_refresh_usage(struct control_context *context);

/* control_server_ops.handle */
void control_commands_handle(void *context, struct control_client *client,
			     const struct control_request *request);

/* control_server_ops.exec_client_gone */
void control_commands_exec_client_gone(void *context, const void *session);

/* control_server_ops.task_rights */
unsigned control_commands_task_rights(void *context, const char *task);

/* control_server_ops.followers_changed */
void control_commands_followers_changed(void *context, enum control_follow kind,
					const void *subject, int delta);
