/* The HTTP server's state, shared by http_server.c (listening sockets,
 * accepting, the bound on connections, rebinding) and http_connection.c
 * (one connection: reading a request, answering it, its deadlines).
 * Nothing else includes this. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "base/loop.h"
#include "base/throttled_log.h"
#include "base/unix_listener.h"
#include "config/model/config.h"
#include "supervisor/http/http_request.h"
#include "supervisor/http/http_response.h"
#include "supervisor/http/http_server.h"

enum http_connection_state {
	HTTP_READING, /* waiting for, or reading, a request head */
	HTTP_WRITING, /* sending a response; input waits in the kernel */
	/* The last response is out and our side shut: what the client still
	 * sends is read and dropped until it closes, so that closing with
	 * unread input (a reset) cannot destroy the response before it is
	 * read (RFC 9112, 9.6). Briefly: HTTP_LINGER_MS. */
	HTTP_CLOSING,
};

#define HTTP_LINGER_MS 2000

struct http_connection {
	struct loop_watch watch;
	struct loop_timer deadline;
	struct http_server *server;
	struct http_connection *previous, *next;
	enum http_connection_state state;
	uint32_t interest; /* the epoll events asked for now */

	char *input; /* HTTP_REQUEST_HEAD_MAX bytes */
	size_t input_length;
	size_t scanned; /* http_head_end's */
	/* Since when a request is awaited: the accept, or the end of the last
	 * response. Eviction takes the one waiting longest. */
	uint64_t waiting_since_ms;
	/* The request's deadline runs: from the accept for the first one,
	 * from its first byte for a later one (before: the idle timeout). */
	bool request_started;
	bool processing;  /* in process_input's loop */
	bool input_ended; /* the client shut its side: close after answering */

	/* The response: its head and body go out with one sendmsg. */
	char head[HTTP_RESPONSE_HEAD_MAX];
	struct http_response response;
	struct iovec out[2];
	bool keep_alive;

	bool closed; /* freed after the event batch */
};

struct http_server {
	struct loop *loop;
	const struct http_sources *sources;
	struct loop_watch watch; /* the listening socket */
	struct unix_listener unix_listener;
	/* Where it listens (its own copy of the listen text), and the
	 * idle_timeout in force. */
	struct http_config config;
	char *control_group;
	/* accept() failed for want of fds: listening resumes after a pause,
	 * rather than the loop spinning on a socket it cannot empty. */
	struct loop_timer accept_pause;
	struct http_connection *connections;
	size_t connection_count;
	struct http_connection *retired;
	/* Refused connections, said once per peer per interval
	 * (http_refusals.c). */
	struct throttled_log refusals;
};

#define HTTP_REFUSALS_INTERVAL_MS 10000

/* http_refusals.c */

void http_refusals_init(struct http_server *server);
/* Says what is held back; at close. */
void http_refusals_stop(struct http_server *server);
/* The connection `fd`, about to be refused for `why`. */
void http_refusals_note(struct http_server *server, int fd, const char *why);

/* http_connection.c */

/* A connection for an accepted `fd`, which it owns from now on; its
 * request may be there already: it is read at once. */
void http_connection_start(struct http_server *server, int fd);
/* Out of epoll and the server's list at once, freed after the event
 * batch (http_server_collect). */
void http_connection_retire(struct http_connection *connection);
