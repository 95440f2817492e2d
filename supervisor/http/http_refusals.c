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

void http_refusals_init(struct http_server *server)
{
	throttled_log_init(&server->refusals, HTTP_REFUSALS_INTERVAL_MS, "http: refused",
			   "connection");
	throttled_log_start(&server->refusals, server->loop);
}

void http_refusals_stop(struct http_server *server)
{
	throttled_log_stop(&server->refusals);
}

void http_refusals_note(struct http_server *server, int fd, const char *why)
{
	char peer[LOG_THROTTLE_SOURCE_MAX];
	describe_peer(fd, peer, sizeof(peer));
	if (throttled_log_note(&server->refusals, peer, why))
		log_message("http: refused a connection from %s: %s", peer, why);
}
