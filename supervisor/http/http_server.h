/* corral's HTTP endpoint (config `http`, docs/http.md): /livez, /readyz and
 * /metrics, read-only, served from corral's own event loop.
 *
 * Bounded whatever the clients do: a request head of at most 8 KiB (431),
 * read within HTTP_REQUEST_DEADLINE_MS of its first byte (a slowloris is
 * closed); no request body; a response written within
 * HTTP_WRITE_DEADLINE_MS from a buffer of its own, never by a blocking
 * call; at most HTTP_CONNECTIONS_MAX connections, a new one taking the
 * place of the one that has waited longest for a request, or refused at
 * once when every one is being answered; a kept-alive connection idle for
 * http.idle_timeout closed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/loop.h"
#include "config/model/config.h"
#include "supervisor/http/http_routes.h"

#define HTTP_CONNECTIONS_MAX     64
#define HTTP_REQUEST_DEADLINE_MS 5000
#define HTTP_WRITE_DEADLINE_MS   10000
/* Accepted in one turn of the loop: at most this many, and no more once
 * this long has passed. A flood of connections neither holds up the
 * loop's other work nor fills the listen backlog, where a probe's SYN
 * would wait for the kernel's retransmission, a second (bench_loop: 16
 * a turn gave /livez answers of a second under a flood beside other
 * load; this, under 170 ms at the worst, turns of 15 ms). */
#define HTTP_ACCEPTS_PER_TURN 256
#define HTTP_ACCEPT_BUDGET_US 1000

struct http_server;

/* Listens where `config` says (its kind must not be HTTP_LISTEN_OFF). A
 * socket path is made as the control socket is (base/unix_listener.h):
 * 0600, or 0660 for `control_group` (config control.group; NULL for none).
 * `sources` must outlive the server. 0, or -errno with `error`. */
int http_server_open(struct http_server **out, struct loop *loop, const struct http_config *config,
		     const char *control_group, const struct http_sources *sources, char *error,
		     size_t error_size);

/* A reload's `http`: listens where `config` says from now on, its open
 * connections served to their end. The old listening socket is kept when
 * the new one cannot be had. 0, or -errno with `error`. */
int http_server_rebind(struct http_server *server, const struct http_config *config, char *error,
		       size_t error_size);

/* A reload's `http` (`old` the running config's, `new` the reloaded
 * one's), applied to *server: opened, rebound, closed or kept. What
 * changed into `change` ("listening on 127.0.0.1:9091 (was
 * 127.0.0.1:9090)"; empty for nothing); with `dry_run`, what would
 * ("would listen on ..."), and nothing is done. 0, or -errno with `error`
 * and *server as it was (listening where it did, if it can). */
int http_server_reconfigure(struct http_server **server, struct loop *loop,
			    const struct http_config *old, const struct http_config *new,
			    const char *control_group, const struct http_sources *sources,
			    bool dry_run, char *change, size_t change_size, char *error,
			    size_t error_size);

/* `corral upgrade`: the listening socket, which goes over the exec (-1
 * for no server); and a server made from it in the new corral, listening
 * where `config` says (connections open during the exec are not carried:
 * their clients ask again). 0, or -errno with `error`. */
int http_server_listening_fd(const struct http_server *server);
int http_server_adopt(struct http_server **out, struct loop *loop, const struct http_config *config,
		      const char *control_group, const struct http_sources *sources, int fd,
		      char *error, size_t error_size);

/* Where it listens, as config http.listen wrote it. */
const char *http_server_listen(const struct http_server *server);

/* Frees the connections that closed during the last event batch. */
void http_server_collect(struct http_server *server);

void http_server_close(struct http_server *server);
