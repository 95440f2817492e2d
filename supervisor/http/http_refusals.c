/* What corral's log says of connections the HTTP endpoint refuses (every
 * one of its connections busy answering): one line per peer per interval,
 * the rest summed up (base/log_throttle.h). A peer is an address for TCP,
 * a uid for a Unix socket: a flood from many ports or pids is one peer. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

#include "base/log.h"
#include "supervisor/http/http_server_internal.h"

static void describe_peer(int fd, char *buffer, size_t size)
{
	struct sockaddr_storage address;
	socklen_t length = sizeof(address);
	char text[INET6_ADDRSTRLEN] = "";
	snprintf(buffer, size, "an unknown peer");
	if (getpeername(fd, (struct sockaddr *)&address, &length) < 0)
		return;
	if (address.ss_family == AF_INET &&
	    inet_ntop(AF_INET, &((struct sockaddr_in *)&address)->sin_addr, text, sizeof(text)))
		snprintf(buffer, size, "%s", text);
	else if (address.ss_family == AF_INET6 &&
		 inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&address)->sin6_addr, text,
			   sizeof(text)))
		snprintf(buffer, size, "%s", text);
	else if (address.ss_family == AF_UNIX) {
		struct ucred credentials;
		socklen_t credentials_size = sizeof(credentials);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &credentials_size) == 0)
			snprintf(buffer, size, "uid %u", (unsigned)credentials.uid);
	}
}

static void say_refusals(void *context, const char *source, uint64_t count, const char *reason)
{
	struct http_server *server = context;
	char interval[32];
	log_throttle_describe_interval(&server->refusals, interval, sizeof(interval));
	log_message("http: refused %llu more connection%s from %s in the last %s: %s",
		    (unsigned long long)count, count == 1 ? "" : "s", source, interval, reason);
}

static void on_refusal_timer(struct loop_timer *timer)
{
	struct http_server *server = timer->data;
	uint64_t next = log_throttle_flush(&server->refusals, loop_now_ms());
	if (next)
		loop_timer_arm(server->loop, &server->refusal_timer, next);
}

void http_refusals_init(struct http_server *server)
{
	log_throttle_init(&server->refusals, HTTP_REFUSALS_INTERVAL_MS, say_refusals, server);
	loop_timer_init(&server->refusal_timer, on_refusal_timer, server);
}

void http_refusals_stop(struct http_server *server)
{
	log_throttle_flush(&server->refusals, UINT64_MAX / 2);
	loop_timer_cancel(server->loop, &server->refusal_timer);
}

void http_refusals_note(struct http_server *server, int fd, const char *why)
{
	char peer[LOG_THROTTLE_SOURCE_MAX];
	describe_peer(fd, peer, sizeof(peer));
	uint64_t now = loop_now_ms();
	if (log_throttle_note(&server->refusals, peer, why, now)) {
		log_message("http: refused a connection from %s: %s", peer, why);
		return;
	}
	if (!loop_timer_armed(&server->refusal_timer))
		loop_timer_arm(server->loop, &server->refusal_timer,
			       log_throttle_flush(&server->refusals, now));
}
