/* The HTTP endpoint's listening socket (TCP, or a Unix socket made as the
 * control socket is), accepting under the bound on connections, and a
 * reload's rebinding. One connection's life is http_connection.c's. */
#include "supervisor/http/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "supervisor/http/http_server_internal.h"

/* How long accepting pauses when corral is out of fds. */
#define ACCEPT_PAUSE_MS 100

/* ---- listening ---- */

static int open_tcp(const struct http_config *config, char *error, size_t error_size)
{
	struct sockaddr_storage storage = {0};
	socklen_t length;
	int family = config->kind == HTTP_LISTEN_INET6 ? AF_INET6 : AF_INET;
	if (family == AF_INET6) {
		struct sockaddr_in6 *address = (struct sockaddr_in6 *)&storage;
		address->sin6_family = AF_INET6;
		address->sin6_port = htons(config->port);
		memcpy(&address->sin6_addr, config->address, 16);
		length = sizeof(*address);
	} else {
		struct sockaddr_in *address = (struct sockaddr_in *)&storage;
		address->sin_family = AF_INET;
		address->sin_port = htons(config->port);
		memcpy(&address->sin_addr, config->address, 4);
		length = sizeof(*address);
	}
	_cleanup_close_ int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int failure = -errno;
		snprintf(error, error_size, "http.listen %s: socket: %s", config->listen,
			 strerror(-failure));
		return failure;
	}
	int on = 1, off = 0;
	/* A restarted corral binds again at once, past the last run's
	 * connections in TIME_WAIT. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	/* [::] is every address, IPv4 ones too, whatever the host's
	 * net.ipv6.bindv6only says. */
	if (family == AF_INET6 && IN6_IS_ADDR_UNSPECIFIED((const struct in6_addr *)config->address))
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (bind(fd, (struct sockaddr *)&storage, length) < 0 || listen(fd, SOMAXCONN) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "http.listen %s: %s", config->listen,
			 strerror(-failure));
		return failure;
	}
	return TAKE_FD(fd);
}

/* The listening fd for `config`, or -errno with `error`. */
static int open_listener(struct http_server *server, const struct http_config *config,
			 struct unix_listener *unix_listener, char *error, size_t error_size)
{
	*unix_listener = (struct unix_listener){.fd = -1};
	if (config->kind != HTTP_LISTEN_UNIX)
		return open_tcp(config, error, error_size);
	struct unix_listener_options options = {
	    .other_listener = "another process",
	    .use_another = "set http.listen to another path",
	    .set_another = "set http.listen to another path",
	    /* Another user who can replace the socket there answers
	     * /readyz in corral's place (as log.dir refuses such a
	     * directory). */
	    .directory_must_be_trusted = true,
	};
	if (server->control_group) {
		/* Resolved when the socket is made, as the control socket's. */
		if (unix_listener_group(server->control_group, &options.group) < 0) {
			snprintf(error, error_size,
				 "http.listen %s: control.group \"%s\": no such group",
				 config->listen, server->control_group);
			return -ENOENT;
		}
		options.has_group = true;
		options.group_name = server->control_group;
	}
	char reason[512];
	int failure =
	    unix_listener_open(unix_listener, config->listen, &options, reason, sizeof(reason));
	if (failure < 0) {
		snprintf(error, error_size, "http.listen: %s", reason);
		return failure;
	}
	return unix_listener->fd;
}

static void close_listener(struct http_server *server)
{
	if (server->watch.fd < 0)
		return;
	loop_watch_remove(server->loop, &server->watch);
	loop_timer_cancel(server->loop, &server->accept_pause);
	if (server->config.kind == HTTP_LISTEN_UNIX)
		unix_listener_close(&server->unix_listener, server->config.listen);
	else
		close(server->watch.fd);
	server->watch.fd = -1;
}

/* ---- accepting ---- */

/* The connection a new one may take the place of: the one waiting
 * longest for a request (one lingering after its last response first).
 * None when every one is being answered. */
static struct http_connection *evictable(struct http_server *server)
{
	struct http_connection *oldest = NULL;
	for (struct http_connection *c = server->connections; c; c = c->next) {
		if (c->state == HTTP_WRITING)
			continue;
		if (c->state == HTTP_CLOSING)
			return c;
		if (!oldest || c->waiting_since_ms < oldest->waiting_since_ms)
			oldest = c;
	}
	return oldest;
}

static void refuse_connection(struct http_server *server, int fd)
{
	char error[96];
	snprintf(error, sizeof(error), "all %d connections were being answered (503)",
		 HTTP_CONNECTIONS_MAX);
	http_refusals_note(server, fd, error);
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
				   "Content-Length: 0\r\nConnection: close\r\n\r\n";
	send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

static void on_accept_pause_over(struct loop_timer *timer)
{
	struct http_server *server = timer->data;
	if (server->watch.fd >= 0)
		loop_watch_modify(server->loop, &server->watch, EPOLLIN);
}

static void on_accept(struct loop_watch *watch, uint32_t events)
{
	struct http_server *server = watch->data;
	uint64_t started = monotonic_us();
	for (unsigned i = 0; i < HTTP_ACCEPTS_PER_TURN; i++) {
		if (i % 16 == 15 && monotonic_us() - started > HTTP_ACCEPT_BUDGET_US)
			return;
		int fd = accept4(watch->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* The connection stays queued; the loop must not
				 * spin on it meanwhile. */
				loop_watch_modify(server->loop, &server->watch, 0);
				loop_timer_arm(server->loop, &server->accept_pause,
					       loop_now_ms() + ACCEPT_PAUSE_MS);
				return;
			}
			if (errno == EINTR || errno == ECONNABORTED || errno == EPERM)
				continue;
			return; /* EAGAIN: no more */
		}
		if (server->connection_count >= HTTP_CONNECTIONS_MAX) {
			struct http_connection *victim = evictable(server);
			if (!victim) {
				refuse_connection(server, fd);
				continue;
			}
			http_connection_retire(victim);
		}
		http_connection_start(server, fd);
	}
}

/* ---- the server ---- */

/* `fd` listening where `config` says becomes the server's. */
static int take_listener(struct http_server *server, const struct http_config *config, int fd,
			 const struct unix_listener *unix_listener, char *error, size_t error_size)
{
	close_listener(server);
	char *listen = xstrdup(config->listen);
	free(server->config.listen);
	server->config = *config;
	server->config.listen = listen;
	server->unix_listener = *unix_listener;
	server->watch = (struct loop_watch){.fd = fd, .callback = on_accept, .data = server};
	if (loop_watch_add(server->loop, &server->watch, EPOLLIN) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "http.listen %s: epoll: %s", config->listen,
			 strerror(-failure));
		close_listener(server);
		return failure;
	}
	return 0;
}

static int listen_on(struct http_server *server, const struct http_config *config, char *error,
		     size_t error_size)
{
	struct unix_listener unix_listener;
	int fd = open_listener(server, config, &unix_listener, error, error_size);
	if (fd < 0)
		return fd;
	return take_listener(server, config, fd, &unix_listener, error, error_size);
}

static struct http_server *server_new(struct loop *loop, const char *control_group,
				      const struct http_sources *sources)
{
	struct http_server *server = xcalloc(1, sizeof(*server));
	server->loop = loop;
	server->sources = sources;
	server->watch.fd = -1;
	server->control_group = control_group ? xstrdup(control_group) : NULL;
	loop_timer_init(&server->accept_pause, on_accept_pause_over, server);
	http_refusals_init(server);
	return server;
}

int http_server_listening_fd(const struct http_server *server)
{
	return server ? server->watch.fd : -1;
}

int http_server_adopt(struct http_server **out, struct loop *loop, const struct http_config *config,
		      const char *control_group, const struct http_sources *sources, int fd,
		      char *error, size_t error_size)
{
	struct http_server *server = server_new(loop, control_group, sources);
	struct unix_listener unix_listener = {.fd = fd};
	struct stat status;
	if (config->kind == HTTP_LISTEN_UNIX && stat(config->listen, &status) == 0) {
		unix_listener.device = status.st_dev;
		unix_listener.inode = status.st_ino;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	int failure = take_listener(server, config, fd, &unix_listener, error, error_size);
	if (failure < 0) {
		http_server_close(server);
		*out = NULL;
		return failure;
	}
	*out = server;
	return 0;
}

int http_server_open(struct http_server **out, struct loop *loop, const struct http_config *config,
		     const char *control_group, const struct http_sources *sources, char *error,
		     size_t error_size)
{
	struct http_server *server = server_new(loop, control_group, sources);
	int failure = listen_on(server, config, error, error_size);
	if (failure < 0) {
		http_server_close(server);
		*out = NULL;
		return failure;
	}
	*out = server;
	return 0;
}

int http_server_rebind(struct http_server *server, const struct http_config *config, char *error,
		       size_t error_size)
{
	if (server->watch.fd >= 0 && http_listen_equal(&server->config, config)) {
		server->config.idle_timeout_ms = config->idle_timeout_ms;
		return 0;
	}
	int failure = listen_on(server, config, error, error_size);
	if (failure != -EADDRINUSE || server->config.kind == HTTP_LISTEN_UNIX ||
	    config->kind == HTTP_LISTEN_UNIX || server->config.port != config->port)
		return failure;
	/* 127.0.0.1:9090 -> 0.0.0.0:9090: the old socket holds the port the
	 * new one wants. Let it go, and take it back if the new one still
	 * cannot be had. */
	struct http_config old = server->config;
	old.listen = xstrdup(old.listen);
	close_listener(server);
	failure = listen_on(server, config, error, error_size);
	if (failure < 0) {
		char again[256];
		if (listen_on(server, &old, again, sizeof(again)) < 0)
			snprintf(error + strlen(error), error_size - strlen(error),
				 "; and the old address could not be had again: %s: the endpoint "
				 "is off",
				 again);
	}
	free(old.listen);
	return failure;
}

static void describe_listen(const struct http_config *config, char *text, size_t size)
{
	if (config->kind == HTTP_LISTEN_OFF)
		snprintf(text, size, "off");
	else
		snprintf(text, size, "listening on %s", config->listen);
}

int http_server_reconfigure(struct http_server **server, struct loop *loop,
			    const struct http_config *old, const struct http_config *new,
			    const char *control_group, const struct http_sources *sources,
			    bool dry_run, char *change, size_t change_size, char *error,
			    size_t error_size)
{
	change[0] = '\0';
	bool listening = http_server_listen(*server) != NULL;
	bool same_place =
	    http_listen_equal(old, new) && (listening || new->kind == HTTP_LISTEN_OFF);
	if (same_place && old->idle_timeout_ms == new->idle_timeout_ms)
		return 0;
	char was[160], now[160];
	describe_listen(old, was, sizeof(was));
	describe_listen(new, now, sizeof(now));
	if (same_place) {
		char from[32], to[32];
		format_duration_ms(old->idle_timeout_ms, from, sizeof(from));
		format_duration_ms(new->idle_timeout_ms, to, sizeof(to));
		snprintf(change, change_size, "%sidle_timeout %s (was %s)",
			 dry_run ? "would set " : "", to, from);
	} else {
		snprintf(change, change_size, "%s%s (was %s)", dry_run ? "would be " : "", now,
			 listening ? was : "off");
	}
	if (dry_run)
		return 0;
	if (new->kind == HTTP_LISTEN_OFF) {
		http_server_close(*server);
		*server = NULL;
		return 0;
	}
	if (!*server)
		return http_server_open(server, loop, new, control_group, sources, error,
					error_size);
	return http_server_rebind(*server, new, error, error_size);
}

const char *http_server_listen(const struct http_server *server)
{
	return server && server->watch.fd >= 0 ? server->config.listen : NULL;
}

void http_server_collect(struct http_server *server)
{
	if (!server)
		return;
	while (server->retired) {
		struct http_connection *connection = server->retired;
		server->retired = connection->next;
		close(connection->watch.fd);
		http_response_free(&connection->response);
		free(connection->input);
		free(connection);
	}
}

void http_server_close(struct http_server *server)
{
	if (!server)
		return;
	while (server->connections)
		http_connection_retire(server->connections);
	http_server_collect(server);
	close_listener(server);
	http_refusals_stop(server);
	free(server->config.listen);
	free(server->control_group);
	free(server);
}
