/* tcp, http and unix probes: a non-blocking connection from corral's loop
 * (docs/config.md, "Probes"), so a probe costs a socket, not a process.
 *
 * A task with a network namespace of its own is probed from inside it:
 * the socket is made there (network_socket_in), so 127.0.0.1 is the
 * task's loopback, as in Kubernetes. A Unix socket in a task with its own
 * mount namespace is looked up inside its root (task_root_path.h), never
 * through a symlink that leads out of it. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/units.h"
#include "base/xmalloc.h"
#include "isolation/network.h"
#include "supervisor/probes/http_status.h"
#include "supervisor/probes/name_resolver.h"
#include "supervisor/probes/probe.h"
#include "supervisor/probes/task_root_path.h"

static void on_socket_event(struct loop_watch *watch, uint32_t events);

/* A name's addresses, tried in turn until one accepts ("localhost" is
 * ::1 and 127.0.0.1; a server may listen on one only). */
struct resolved_addresses {
	struct sockaddr_storage address[NAME_LOOKUP_ADDRESSES_MAX];
	size_t count, next;
};

bool net_probe_running(const struct probe *probe)
{
	return probe->socket_watch.fd >= 0 || probe->lookup || probe->candidates;
}

static void close_socket(struct probe *probe)
{
	if (probe->socket_watch.fd >= 0) {
		loop_watch_remove(probe->services->loop, &probe->socket_watch);
		close(probe->socket_watch.fd);
		probe->socket_watch.fd = -1;
	}
}

static void close_run(struct probe *probe)
{
	close_socket(probe);
	if (probe->lookup) {
		name_lookup_cancel(probe->lookup);
		probe->lookup = NULL;
	}
	free(probe->candidates);
	probe->candidates = NULL;
	free(probe->request);
	probe->request = NULL;
	probe->request_length = probe->request_sent = probe->response_length = 0;
}

void net_probe_cancel(struct probe *probe)
{
	close_run(probe);
}

static void finish(struct probe *probe, bool passed, const char *why)
{
	close_run(probe);
	loop_timer_cancel(probe->services->loop, &probe->deadline);
	probe_report(probe, passed, why);
}

void net_probe_timed_out(struct probe *probe)
{
	char timeout[32], why[96];
	format_duration_ms(probe->config->timeout_ms, timeout, sizeof(timeout));
	snprintf(why, sizeof(why), "timed out after %s%s", timeout,
		 probe->config->kind == PROBE_HTTP && probe->request_sent
		     ? " waiting for the answer"
		     : "");
	finish(probe, false, why);
}

/* "127.0.0.1:6379", "[::1]:80", "/run/app.sock": how messages name it. */
static void describe_target(const struct probe *probe, char *buffer, size_t size)
{
	const struct probe_config *config = probe->config;
	if (config->kind == PROBE_UNIX)
		snprintf(buffer, size, "%s", config->path);
	else if (strchr(config->host, ':'))
		snprintf(buffer, size, "[%s]:%u", config->host, config->port);
	else
		snprintf(buffer, size, "%s:%u", config->host, config->port);
}

static void fail_run(struct probe *probe, const char *step, int error)
{
	char target[160], why[256];
	describe_target(probe, target, sizeof(target));
	snprintf(why, sizeof(why), "%s %s: %s", step, target, strerror(error));
	finish(probe, false, why);
}

/* Whether the task has a network namespace of its own (none, bridge, or
 * its group's): the probe is made from there. */
static bool task_has_own_network(const struct task_config *task)
{
	return isolation_has_own_network(&task->isolation);
}

static int open_socket(struct probe *probe, int domain, pid_t pid, char *error, size_t error_size)
{
	int type = SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC;
	if (domain == AF_UNIX || probe->outside || !task_has_own_network(probe->task)) {
		int fd = socket(domain, type, 0);
		if (fd < 0) {
			int failure = -errno;
			snprintf(error, error_size, "socket: %s", strerror(-failure));
			return failure;
		}
		return fd;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	int netns = open(path, O_RDONLY | O_CLOEXEC);
	if (netns < 0) {
		int failure = -errno;
		snprintf(error, error_size, "the task's network namespace (%s): %s", path,
			 strerror(-failure));
		return failure;
	}
	struct network_failure failure = {0};
	int fd = network_socket_in(probe->services->network, netns, domain, type, &failure);
	close(netns);
	if (fd < 0)
		snprintf(error, error_size, "%s: %s", failure.step, strerror(failure.error));
	return fd;
}

/* The address to connect to; its size, or 0 with `error`. A Unix socket of
 * a task with its own root is opened inside that root first (*path_fd,
 * to close once connect() is called) and reached through /proc/self/fd. */
static socklen_t target_address(const struct probe *probe, pid_t pid,
				struct sockaddr_storage *address, int *path_fd, char *error,
				size_t error_size)
{
	const struct probe_config *config = probe->config;
	memset(address, 0, sizeof(*address));
	*path_fd = -1;
	if (config->kind == PROBE_UNIX) {
		struct sockaddr_un *unix_address = (struct sockaddr_un *)address;
		unix_address->sun_family = AF_UNIX;
		bool own_root = probe->task->isolation.enabled &&
				(probe->task->isolation.namespaces & ISOLATION_NS_MOUNT);
		if (own_root) {
			int opened = task_root_open_path(pid, config->path, error, error_size);
			if (opened < 0)
				return 0;
			*path_fd = opened;
			snprintf(unix_address->sun_path, sizeof(unix_address->sun_path),
				 "/proc/self/fd/%d", *path_fd);
			return (socklen_t)sizeof(*unix_address);
		}
		int length = snprintf(unix_address->sun_path, sizeof(unix_address->sun_path), "%s",
				      config->path);
		if (length < 0 || (size_t)length >= sizeof(unix_address->sun_path)) {
			snprintf(error, error_size, "%s: too long for a Unix socket address",
				 config->path);
			return 0;
		}
		return (socklen_t)sizeof(*unix_address);
	}
	struct sockaddr_in *v4 = (struct sockaddr_in *)address;
	if (inet_pton(AF_INET, config->host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(config->port);
		return (socklen_t)sizeof(*v4);
	}
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)address;
	inet_pton(AF_INET6, config->host, &v6->sin6_addr); /* checked at load */
	v6->sin6_family = AF_INET6;
	v6->sin6_port = htons(config->port);
	return (socklen_t)sizeof(*v6);
}

static void build_request(struct probe *probe)
{
	const struct probe_config *config = probe->config;
	size_t headers = 0;
	for (char **header = config->headers; header && *header; header++)
		headers += strlen(*header) + 2;
	char host[160];
	describe_target(probe, host, sizeof(host));
	size_t capacity = strlen(config->path) + strlen(host) + headers + 128;
	probe->request = xmalloc(capacity);
	size_t used = (size_t)snprintf(probe->request, capacity,
				       "GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: corral-probe\r\n"
				       "Connection: close\r\n",
				       config->path, host);
	for (char **header = config->headers; header && *header; header++)
		used += (size_t)snprintf(probe->request + used, capacity - used, "%s\r\n", *header);
	used += (size_t)snprintf(probe->request + used, capacity - used, "\r\n");
	probe->request_length = used;
}

/* A connection that failed: the next address of a name, if any, else the
 * run's failure. */
static void connect_failed(struct probe *probe, int error);

static void connect_to(struct probe *probe, const struct sockaddr_storage *address,
		       socklen_t length, int path_fd, pid_t pid)
{
	char error[PATH_MAX + 96];
	int fd = open_socket(probe, address->ss_family, pid, error, sizeof(error));
	if (fd < 0) {
		if (path_fd >= 0)
			close(path_fd);
		finish(probe, false, error);
		return;
	}
	probe->socket_watch =
	    (struct loop_watch){.fd = fd, .callback = on_socket_event, .data = probe};
	if (probe->config->kind == PROBE_HTTP && !probe->request)
		build_request(probe);
	int connected = connect(fd, (const struct sockaddr *)address, length);
	int connect_error = errno;
	if (path_fd >= 0)
		close(path_fd);
	if (connected < 0 && connect_error != EINPROGRESS) {
		connect_failed(probe, connect_error);
		return;
	}
	/* Writable once connected (or failed): SO_ERROR says which. */
	loop_watch_add(probe->services->loop, &probe->socket_watch, EPOLLOUT);
}

static void connect_next_candidate(struct probe *probe)
{
	struct resolved_addresses *candidates = probe->candidates;
	const struct sockaddr_storage *address = &candidates->address[candidates->next++];
	socklen_t length = address->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							  : sizeof(struct sockaddr_in);
	connect_to(probe, address, length, -1, 0);
}

static void connect_failed(struct probe *probe, int error)
{
	if (probe->candidates && probe->candidates->next < probe->candidates->count) {
		close_socket(probe);
		connect_next_candidate(probe);
		return;
	}
	fail_run(probe, "connect", error);
}

static void on_name_resolved(void *context, const struct sockaddr_storage *addresses, size_t count,
			     const char *error)
{
	struct probe *probe = context;
	probe->lookup = NULL;
	if (!count) {
		char why[256];
		snprintf(why, sizeof(why), "resolve %s: %s", probe->config->host, error);
		finish(probe, false, why);
		return;
	}
	probe->candidates = xcalloc(1, sizeof(*probe->candidates));
	memcpy(probe->candidates->address, addresses, count * sizeof(*addresses));
	probe->candidates->count = count;
	connect_next_candidate(probe);
}

/* A wait_for target named by host name: resolved from the loop first. */
static void resolve_then_connect(struct probe *probe)
{
	struct probe_services *services = probe->services;
	char error[256];
	if (!services->resolver &&
	    !(services->resolver = name_resolver_create(services->loop, error, sizeof(error)))) {
		char message[320];
		snprintf(message, sizeof(message), "resolve %s: %s", probe->config->host, error);
		finish(probe, false, message);
		return;
	}
	probe->lookup = name_lookup_start(services->resolver, probe->config->host,
					  probe->config->port, on_name_resolved, probe);
}

void net_probe_run(struct probe *probe)
{
	const struct probe_config *config = probe->config;
	uint64_t now = loop_now_ms();
	loop_timer_arm(probe->services->loop, &probe->next_run, now + probe_interval_ms(probe));
	loop_timer_arm(probe->services->loop, &probe->deadline, now + config->timeout_ms);
	if (config->host_is_name) {
		resolve_then_connect(probe);
		return;
	}
	pid_t pid = probe->target_pid ? probe->target_pid(probe->context) : 0;
	char error[PATH_MAX + 96];
	struct sockaddr_storage address;
	int path_fd;
	socklen_t length = target_address(probe, pid, &address, &path_fd, error, sizeof(error));
	if (!length) {
		finish(probe, false, error);
		return;
	}
	connect_to(probe, &address, length, path_fd, pid);
}

/* http: send the GET, then read until the status line is there. */
static void exchange(struct probe *probe, uint32_t events)
{
	int fd = probe->socket_watch.fd;
	if (probe->request_sent < probe->request_length) {
		ssize_t sent =
		    send(fd, probe->request + probe->request_sent,
			 probe->request_length - probe->request_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (sent < 0 && errno != EAGAIN && errno != EINTR) {
			fail_run(probe, "send to", errno);
			return;
		}
		if (sent > 0)
			probe->request_sent += (size_t)sent;
		if (probe->request_sent == probe->request_length)
			loop_watch_modify(probe->services->loop, &probe->socket_watch, EPOLLIN);
		return;
	}
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	size_t room = sizeof(probe->response) - probe->response_length;
	ssize_t got = recv(fd, probe->response + probe->response_length, room, MSG_DONTWAIT);
	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (got < 0) {
		fail_run(probe, "read from", errno);
		return;
	}
	probe->response_length += (size_t)got;
	int status;
	int parsed = http_status_parse(probe->response, probe->response_length, &status);
	if (parsed == 0 && got > 0 && probe->response_length < sizeof(probe->response))
		return;
	char error[160] = "";
	if (parsed <= 0) {
		snprintf(error, sizeof(error),
			 got == 0 && probe->response_length == 0 ? "closed without an answer"
								 : "not an HTTP answer");
		finish(probe, false, error);
		return;
	}
	/* Kubernetes' rule: 200 to 399 pass. */
	bool passed = status >= 200 && status < 400;
	if (!passed)
		snprintf(error, sizeof(error), "HTTP %d", status);
	finish(probe, passed, error);
}

static void on_socket_event(struct loop_watch *watch, uint32_t events)
{
	struct probe *probe = watch->data;
	if (probe->request_sent == 0 && probe->response_length == 0) {
		int failure = 0;
		socklen_t size = sizeof(failure);
		if (getsockopt(watch->fd, SOL_SOCKET, SO_ERROR, &failure, &size) == 0 && failure) {
			connect_failed(probe, failure);
			return;
		}
		if (probe->config->kind != PROBE_HTTP) {
			finish(probe, true, "");
			return;
		}
	}
	exchange(probe, events);
}
