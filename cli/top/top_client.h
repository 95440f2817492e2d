/* corral top's side of the control socket: the status asked for once a
 * tick on one connection kept open, the requests the keys make (each on a
 * connection of its own, its reply said in the status line), and the
 * output pane's logs/follow stream. What the CLI's client code would
 * print on stderr (top's stderr is a pipe while the screen is up) is read
 * back and said in the status line too. */
#pragma once

#include <stdbool.h>

#include "cli/control_client.h"
#include "cli/top/top_input.h"
#include "cli/top/top_state.h"

struct top_client {
	const char *socket_path;
	struct control_connection status;
	struct control_connection logs;
	/* Readable when a wait for corral should end: a signal, or (once the
	 * screen is up) a key, so that q works while corral is slow. */
	int interrupt_fd;
	int messages_fd;      /* the read end of top's stderr, or -1 */
	bool failing;         /* the last status failed: the next that works says so */
	bool awaiting_status; /* a status request sent, its reply not all read */
};

enum top_poll_result {
	TOP_POLL_OK,
	TOP_POLL_FAILED,      /* said in the status line; tried again next tick */
	TOP_POLL_INTERRUPTED, /* a signal or a key came while waiting */
};

/* Connects (when not connected) and asks for the status of every task,
 * unless the reply to the last request is still to come. */
enum top_poll_result top_client_request_status(struct top_client *client, struct top_state *state);
/* The connection's fd while a status reply is awaited (to poll), else -1. */
int top_client_status_fd(const struct top_client *client);
/* Reads the awaited reply (its fd was readable) and puts its model into
 * `state`. INTERRUPTED: what came so far is kept, the rest is read when
 * the fd is readable again. */
enum top_poll_result top_client_read_status(struct top_client *client, struct top_state *state);
/* Both, waiting for the reply: the first status, before the screen. */
enum top_poll_result top_client_poll_status(struct top_client *client, struct top_state *state);

/* Makes the request of `action` for the selected line and says corral's
 * answer (or refusal) in the status line; FOLLOW and UNFOLLOW open and
 * close the pane and its stream. */
void top_client_act(struct top_client *client, struct top_state *state, enum top_action action);

/* The fd of the pane's stream, to poll; -1 when none. */
int top_client_logs_fd(const struct top_client *client);
/* Reads what the pane's stream has (it was readable): its lines go into
 * the pane; its end is said in the pane's title. */
void top_client_read_logs(struct top_client *client, struct top_state *state);

void top_client_close(struct top_client *client);
