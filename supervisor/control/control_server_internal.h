/* The control server's state, shared by the files that make up one
 * connection's life: control_listener.c (the socket file: safe creation,
 * stale sockets, removal), control_connections.c (accept: who may
 * connect, caps, idle timers) and control_server.c (a client's buffers,
 * framing, fds passed both ways, back pressure, followers). Nothing else
 * includes this. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/loop.h"
#include "base/throttled_log.h"
#include "base/unix_listener.h"
#include "supervisor/control/control_admission.h"
#include "supervisor/control/control_peer.h"
#include "supervisor/control/control_server.h"

/* A whole request and its newline. */
#define CLIENT_INPUT_MAX (CONTROL_REQUEST_MAX + 1)

struct control_client {
	struct loop_watch watch;
	struct control_server *server;
	struct control_client *previous, *next;

	char *input;
	size_t input_length;
	bool skipping_long_line; /* discarding the rest of an oversize request */

	char *output;
	size_t output_start, output_length, output_capacity;
	uint32_t interest; /* the epoll events asked for now */

	bool input_ended; /* the client half-closed: answer, then close */
	bool cut;         /* fell behind: only the notice is left to send */
	/* What went out ends inside a line: a cut must send the rest of it.
	 * Kept here, as compacting the buffer forgets what was sent. */
	bool sent_mid_line;
	struct loop_timer cut_timer;

	uid_t uid; /* the peer's, at connect */
	/* Root or corral's own user, and not a task: an operator. */
	bool owner;
	/* "web/app" for a client inside a task (control_peer.h), which may
	 * make only the requests its control: list grants; else NULL. */
	char *task;
	/* When it last sent a whole request or took some of its reply: a
	 * connection that does neither for idle_timeout_ms is closed, unless
	 * it follows a stream (logs, events, an exec session). */
	uint64_t last_active_ms;
	struct loop_timer idle_timer;
	/* SCM_RIGHTS fds that came with the input, for the request they came
	 * with (exec); closed unless it takes them. */
	int passed_fds[CONTROL_PASSED_FDS_MAX];
	size_t passed_fd_count;
	/* fds for the client (an exec's pipe ends), sent with the first
	 * bytes that go out after they were queued; closed once sent. */
	int outgoing_fds[CONTROL_PASSED_FDS_MAX];
	size_t outgoing_fd_count;
	enum control_follow follow;
	const void *follow_subject;
	/* A request whose reply comes later (control_client_wait): no more
	 * input is read meanwhile, and `gone` is called should it close. */
	bool waiting;
	void (*waiting_gone)(void *data);
	void *waiting_data;
	bool closed; /* freed at the end of the current callback */
};

struct control_server {
	struct loop *loop;
	struct loop_watch watch;
	char *path;
	struct unix_listener listener; /* its fd is the watch's */
	bool has_group;
	gid_t group;
	char *group_name;
	struct control_peer_rules peer_rules;
	uint64_t idle_timeout_ms;
	struct control_admission_limits limits;
	struct control_server_ops ops;
	struct control_client *clients;
	size_t client_count;
	struct control_client *retired; /* closed, freed after the event batch */
	/* Refused connections are said once per peer per interval, the rest
	 * in a summary (control_connections.c). */
	struct throttled_log refusals;
};

/* How long a peer's refusals are summed up for in one line. */
#define CONTROL_REFUSALS_INTERVAL_MS 10000

static inline size_t control_client_pending(const struct control_client *client)
{
	return client->output_length - client->output_start;
}

/* control_connections.c: the throttle of refusal lines, ready (at
 * control_server_new) and stopped (at close). */
void control_refusals_init(struct control_server *server);
void control_refusals_stop(struct control_server *server);

/* control_server.c */

/* Out of epoll and the client list at once, freed after the event batch
 * (control_server_collect). */
void control_client_retire(struct control_client *client);
/* The loop's callbacks of a connection, which control_connections.c
 * installs at accept. */
void control_client_on_event(struct loop_watch *watch, uint32_t events);
void control_client_on_cut_grace_over(struct loop_timer *timer);

/* Queues bytes without a check of the bound and without a send. */
void control_client_send_unchecked(struct control_client *client, const char *data, size_t length);
/* The same, sent when the loop finds the socket writable: nothing is
 * written before the loop runs (an upgrade's new corral may still fall
 * back to the old one, which sends them itself). */
void control_client_send_later(struct control_client *client, const char *data, size_t length);

/* control_listener.c */

/* A server with its settings and no socket yet: 0, or -ENOENT with
 * `error` for a control group that does not exist. */
int control_server_new(struct control_server **out, struct loop *loop, const char *path,
		       const struct control_server_settings *settings,
		       const struct control_server_ops *ops, char *error, size_t error_size);

/* control_connections.c */

/* The listening socket's callback: accepts, checks and admits. */
void control_server_on_accept(struct loop_watch *watch, uint32_t events);
/* A new client's struct, in the list and the loop: NULL when epoll
 * refuses its fd (then closed). */
struct control_client *control_client_add(struct control_server *server, int fd, uid_t uid,
					  bool owner, const char *task);
