/* A connection from accept to admission: who the peer is (SO_PEERCRED,
 * SO_PEERGROUPS, control_peer.h), whether its user or task may use the
 * socket, whether it fits the caps (control_admission.h), and the idle
 * timer that closes a connection left unused. The connection itself is
 * control_server.c's from then on. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "supervisor/control/control_server_internal.h"

static bool peer_in_group(int fd, gid_t group)
{
	/* Ask with room for 64 first; ERANGE says how many there are. */
	socklen_t size = 64 * sizeof(gid_t);
	gid_t *groups = xmalloc(size);
	bool member = false;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &size) < 0) {
		if (errno != ERANGE)
			goto out;
		groups = xreallocarray(groups, size, 1);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &size) < 0)
			goto out;
	}
	for (size_t i = 0; i < size / sizeof(gid_t); i++)
		if (groups[i] == group)
			member = true;
out:
	free(groups);
	return member;
}

/* NULL when the peer's user may use the socket, else the reason. */
static const char *user_refusal(struct control_server *server, int fd, const struct ucred *peer)
{
	if (peer->uid == 0 || peer->uid == geteuid())
		return NULL;
	if (server->has_group && (peer->gid == server->group || peer_in_group(fd, server->group)))
		return NULL;
	return server->has_group ? "only root, corral's own user and members of the control "
				   "group may use this socket"
				 : "only root and corral's own user may use this socket (set "
				   "control: {group: NAME} to let a group in)";
}

/* A task, or any process corral started, is never an operator: it is
 * let in only when the config grants that task a request. false with
 * `error` set when it is refused. */
static bool confined_peer_allowed(struct control_server *server, const struct control_peer *peer,
				  char *error, size_t error_size)
{
	if (peer->gone) {
		snprintf(error, error_size,
			 "corral could not look at the connecting process to tell "
			 "whether it is a task (it exited, or corral is short of "
			 "fds): try again");
		return false;
	}
	if (!control_peer_is_confined(peer))
		return true;
	if (peer->task[0]) {
		if (server->ops.task_rights(server->ops.context, peer->task))
			return true;
		snprintf(error, error_size,
			 "%s is a task, and a task is never an operator: it may use the control "
			 "socket only for the requests a control: list in its config grants (it "
			 "has none)",
			 peer->task);
		return false;
	}
	snprintf(error, error_size,
		 "pid %d was started by corral (a task's process, a hook or a probe), and what "
		 "corral starts is never an operator",
		 (int)peer->credentials.pid);
	return false;
}

static bool is_idle(const struct control_client *client)
{
	return !client->closed && !client->cut && !client->waiting &&
	       client->follow == CONTROL_FOLLOW_NONE && control_client_pending(client) == 0;
}

/* Says why to a connection corral closes on its own, when nothing else
 * waits to be sent to it, then closes it. */
static void close_with_notice(struct control_client *client, const char *message)
{
	if (control_client_pending(client) == 0) {
		char *reply = control_reply_error(message);
		send(client->watch.fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
		free(reply);
	}
	control_client_retire(client);
}

static void on_idle_timeout(struct loop_timer *timer)
{
	struct control_client *client = timer->data;
	struct control_server *server = client->server;
	if (client->closed || client->waiting || client->follow != CONTROL_FOLLOW_NONE)
		return;
	uint64_t deadline = client->last_active_ms + server->idle_timeout_ms;
	if (loop_now_ms() < deadline) {
		loop_timer_arm(server->loop, &client->idle_timer, deadline);
		return;
	}
	char message[160], duration[32];
	format_duration_ms(server->idle_timeout_ms, duration, sizeof(duration));
	snprintf(message, sizeof(message),
		 "idle for %s without a request: connection closed (control.idle_timeout)",
		 duration);
	close_with_notice(client, message);
}

/* Whether a connection of `peer` fits, closing the longest idle one when
 * an owner needs room; false with `error` set when it does not. */
static bool admit(struct control_server *server, const struct control_peer *peer, bool owner,
		  char *error, size_t error_size)
{
	struct control_admission_counts counts = {.total = server->client_count};
	struct control_client *longest_idle = NULL;
	for (struct control_client *client = server->clients; client; client = client->next) {
		counts.of_this_user += !client->owner && client->uid == peer->credentials.uid;
		if (is_idle(client) &&
		    (!longest_idle || client->last_active_ms < longest_idle->last_active_ms))
			longest_idle = client;
	}
	counts.any_idle = longest_idle != NULL;
	switch (control_admission_decide(&server->limits, &counts, owner)) {
	case CONTROL_ADMIT:
		return true;
	case CONTROL_ADMIT_AFTER_CLOSING_IDLE:
		log_message(
		    "control socket: %zu connections open: closing the one idle the longest "
		    "(uid %u) to let root or corral's own user in",
		    counts.total, (unsigned)longest_idle->uid);
		close_with_notice(longest_idle,
				  "connection closed to make room for root or "
				  "corral's own user: it was the one idle the longest");
		return true;
	case CONTROL_REFUSE_USER_LIMIT:
		snprintf(error, error_size,
			 "uid %u has %zu control connections open already, the most one user may "
			 "(control.connections_per_user)",
			 (unsigned)peer->credentials.uid, counts.of_this_user);
		return false;
	case CONTROL_REFUSE_FULL:
		break;
	}
	snprintf(error, error_size,
		 "too many control clients connected (%zu; the last %zu are kept for root and "
		 "corral's own user)",
		 counts.total, server->limits.reserved_for_owners);
	return false;
}

/* Who a refusal is counted against: a task by its name, anything else
 * corral started, or a user (a flood from many pids is one peer). */
static void refused_peer(const struct control_peer *peer, char *buffer, size_t size)
{
	if (peer->task[0])
		snprintf(buffer, size, "task %s", peer->task);
	else if (peer->descends_from_corral)
		snprintf(buffer, size, "processes corral started (uid %u)",
			 (unsigned)peer->credentials.uid);
	else
		snprintf(buffer, size, "uid %u", (unsigned)peer->credentials.uid);
}

void control_refusals_init(struct control_server *server)
{
	throttled_log_init(&server->refusals, CONTROL_REFUSALS_INTERVAL_MS,
			   "control socket: refused", "connection");
	throttled_log_start(&server->refusals, server->loop);
}

void control_refusals_stop(struct control_server *server)
{
	throttled_log_stop(&server->refusals);
}

/* Tells the peer why and closes; says it in corral's log once per peer
 * per interval, the rest in one summary line (a task that connects in a
 * loop must not flood corral's stderr). */
static void refuse(struct control_server *server, int fd, const struct control_peer *peer,
		   const char *why)
{
	char *reply = control_reply_error(why);
	send(fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
	free(reply);
	close(fd);
	char source[LOG_THROTTLE_SOURCE_MAX];
	refused_peer(peer, source, sizeof(source));
	if (!throttled_log_note(&server->refusals, source, why))
		return;
	if (peer->task[0])
		log_message("control socket: refused task %s (pid %d, uid %u): %s", peer->task,
			    (int)peer->credentials.pid, (unsigned)peer->credentials.uid, why);
	else
		log_message("control socket: refused pid %d (uid %u): %s",
			    (int)peer->credentials.pid, (unsigned)peer->credentials.uid, why);
}

/* Connections taken in one turn of the loop: a client that connects as
 * fast as it is refused must not keep the loop here (the listening socket
 * is level-triggered: the rest wait for the next turn, after the others). */
#define CONTROL_ACCEPTS_PER_TURN 16

void control_server_on_accept(struct loop_watch *watch, uint32_t events)
{
	struct control_server *server = watch->data;
	for (unsigned i = 0; i < CONTROL_ACCEPTS_PER_TURN; i++) {
		int fd = accept4(watch->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return; /* EAGAIN, or a client that left before we looked */
		struct control_peer peer;
		char reason[512];
		const char *why = NULL;
		if (control_peer_identify(fd, &server->peer_rules, &peer) < 0)
			why = "cannot read the peer's credentials";
		else if (!(why = user_refusal(server, fd, &peer.credentials)) &&
			 !confined_peer_allowed(server, &peer, reason, sizeof(reason)))
			why = reason;
		bool owner = (peer.credentials.uid == 0 || peer.credentials.uid == geteuid()) &&
			     !control_peer_is_confined(&peer);
		if (!why && !admit(server, &peer, owner, reason, sizeof(reason)))
			why = reason;
		if (why) {
			refuse(server, fd, &peer, why);
			continue;
		}
		control_client_add(server, fd, peer.credentials.uid, owner,
				   peer.task[0] ? peer.task : NULL);
	}
}

struct control_client *control_client_add(struct control_server *server, int fd, uid_t uid,
					  bool owner, const char *task)
{
	struct control_client *client = xcalloc(1, sizeof(*client));
	client->server = server;
	client->uid = uid;
	client->owner = owner;
	client->task = task ? xstrdup(task) : NULL;
	client->input = xmalloc(CLIENT_INPUT_MAX);
	client->watch =
	    (struct loop_watch){.fd = fd, .callback = control_client_on_event, .data = client};
	client->interest = EPOLLIN;
	loop_timer_init(&client->cut_timer, control_client_on_cut_grace_over, client);
	loop_timer_init(&client->idle_timer, on_idle_timeout, client);
	if (loop_watch_add(server->loop, &client->watch, EPOLLIN) < 0) {
		close(fd);
		free(client->task);
		free(client->input);
		free(client);
		return NULL;
	}
	client->last_active_ms = loop_now_ms();
	loop_timer_arm(server->loop, &client->idle_timer,
		       client->last_active_ms + server->idle_timeout_ms);
	client->next = server->clients;
	if (server->clients)
		server->clients->previous = client;
	server->clients = client;
	server->client_count++;
	return client;
}
