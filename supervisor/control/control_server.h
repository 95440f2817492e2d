/* The control socket: a Unix stream socket served by the event loop.
 *
 * Safe creation (docs/control-protocol.md): the directory is made 0700
 * (0750 for a control group) when corral creates it; the socket is 0600
 * (0660 for a control group); a stale socket is replaced, anything else at
 * the path is refused. Each connection is checked with SO_PEERCRED, and
 * its process is looked at (control_peer.h): a task, or a process in other
 * namespaces than corral's, is never an operator, and a task makes only
 * the requests its config's control: list grants.
 *
 * Connections are capped in all, per user, with room kept for root and
 * corral's own user (control_admission.h); one that sends no request for
 * control.idle_timeout, and follows no stream, is closed.
 *
 * Never blocks: requests are framed from a bounded input buffer, replies go
 * out through a bounded output buffer per client, and a client that lets it
 * fill is cut with a final notice. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/loop.h"
#include "supervisor/control/control_protocol.h"

struct control_server;
struct control_client;

/* What a client streams after its reply, if anything. */
enum control_follow {
	CONTROL_FOLLOW_NONE,
	CONTROL_FOLLOW_LOGS,       /* subject: the task */
	CONTROL_FOLLOW_LOGS_GROUP, /* subject: the group: every task of it */
	CONTROL_FOLLOW_LOGS_ALL,   /* subject: NULL: every task */
	CONTROL_FOLLOW_EVENTS,     /* subject: NULL */
	CONTROL_FOLLOW_EXEC,       /* subject: an exec session; its exit line follows */
	CONTROL_FOLLOW_ROLL,       /* subject: a rolling restart; its last line follows */
};

/* One of the three kinds of logs follower. */
bool control_follow_is_logs(enum control_follow kind);

struct control_server_ops {
	/* Runs one parsed request; replies with control_client_send. */
	void (*handle)(void *context, struct control_client *client,
		       const struct control_request *request);
	/* A client following the logs of `subject` appeared or went away:
	 * the task counts its followers so that unwatched output costs
	 * nothing. */
	void (*followers_changed)(void *context, enum control_follow kind, const void *subject,
				  int delta);
	/* A client following CONTROL_FOLLOW_EXEC went away: its session
	 * ends (exec_session.h). */
	void (*exec_client_gone)(void *context, const void *subject);
	/* The control: rights (enum control_right bits) of task `task`
	 * ("web/app") in the running config; 0 for none, or no such task. */
	unsigned (*task_rights)(void *context, const char *task);
	void *context;
};

struct control_server_settings {
	const char *control_group; /* NULL: only root and corral's own user */
	/* Where tasks' cgroups are, as /proc/PID/cgroup shows it
	 * (control_peer.h); NULL when tasks have no cgroups. */
	const char *task_cgroup_root;
	uint64_t idle_timeout_ms;      /* config control.idle_timeout */
	unsigned connections_per_user; /* config control.connections_per_user */
};

/* Returns 0 when listening; 1 when `path_is_default` (one of the places of
 * control_socket_places.h) and corral may not use it (not root, a
 * read-only file system, a directory not its own: `error` says why, and the
 * next place may be tried); -errno on an error that must stop corral (`error`
 * says what). */
int control_server_open(struct control_server **out, struct loop *loop, const char *path,
			bool path_is_default, const struct control_server_settings *settings,
			const struct control_server_ops *ops, char *error, size_t error_size);

/* Where it listens; NULL for no server. */
const char *control_server_path(const struct control_server *server);
void control_server_close(struct control_server *server);

/* Whether a server (another corral) listens on `path` now, and if so says
 * what to do about it in `error` ("another corral is already listening on
 * PATH: ..."); when not, the connect's errno in *connect_errno
 * (ECONNREFUSED: a socket left behind, ENOENT: none). */
bool control_server_listener_at(const char *path, int *connect_errno, char *error,
				size_t error_size);

/* Frees the clients that closed during the last event batch. */
void control_server_collect(struct control_server *server);

/* Queues `length` bytes (whole lines with their newline) to the client. */
void control_client_send(struct control_client *client, const char *data, size_t length);

/* The same for a malloc'd `data` of `capacity` bytes, which the client
 * takes over: when nothing else waits to be sent, a large reply goes out
 * from where it was written instead of being copied into a buffer that
 * grows by doubling (1000 tasks: 550 KB, 8 reallocations). Such a reply
 * is sent whole even above the 8 MiB a client may leave unread. */
void control_client_send_owned(struct control_client *client, char *data, size_t length,
			       size_t capacity);

/* After the reply: stream what is published for `kind` and `subject`. */
void control_client_follow(struct control_client *client, enum control_follow kind,
			   const void *subject);

/* The request being handled is answered later (an upgrade's check of
 * the new binary runs for up to seconds): until control_client_resume,
 * the client's further requests wait unread and it is not idle. Should it
 * close meanwhile, `gone(data)` is called, once. */
void control_client_wait(struct control_client *client, void (*gone)(void *data), void *data);
/* The reply went out (control_client_send): the client's next requests
 * are served again. */
void control_client_resume(struct control_client *client);

/* The client is root or corral's own user, not only a member of the
 * control group, and not a task: what reads files as corral may need it. */
bool control_client_is_owner(const struct control_client *client);

/* "web/app" for a client inside a task (let in for its control: rights
 * alone, which the server checks before each request), else NULL. */
const char *control_client_task(const struct control_client *client);

/* The fds (SCM_RIGHTS) that came with the request being handled, up to
 * CONTROL_PASSED_FDS_MAX: taken over by the caller (else closed once the
 * request is handled). Returns their number. */
#define CONTROL_PASSED_FDS_MAX 3
size_t control_client_take_fds(struct control_client *client, int *fds);

/* control_client_send, with `fds` (at most CONTROL_PASSED_FDS_MAX in all)
 * going to the client with the first byte of `data` (SCM_RIGHTS): taken
 * over, closed once sent or when the client goes. */
void control_client_send_with_fds(struct control_client *client, const char *data, size_t length,
				  const int *fds, size_t fd_count);

/* Sends `line` (with its newline), then closes the connection once it is
 * out: the end of an exec session. */
void control_client_finish(struct control_client *client, const char *line, size_t length);

/* `subject` is going away (a task or group a reload removed): its
 * followers' streams end, and their connections close once flushed. */
void control_server_forget(struct control_server *server, enum control_follow kind,
			   const void *subject);

/* Sends a line to every client following `kind` and `subject`. */
void control_server_publish(struct control_server *server, enum control_follow kind,
			    const void *subject, const char *line, size_t length);

/* A task's lines (`lines`, `length` bytes of whole JSON lines) to those
 * who follow the task, its group or every task: one walk of the clients,
 * whichever way each follows, and to each the lines one by one. */
void control_server_publish_logs(struct control_server *server, const void *task, const void *group,
				 const char *lines, size_t length);
