#include "supervisor/control/control_server.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/log.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "config/config.h"
#include "supervisor/control/control_admission.h"
#include "supervisor/control/control_peer.h"

/* Enough for the status of thousands of tasks; a follower that falls this
 * far behind is cut. */
#define CLIENT_OUTPUT_MAX (8u * 1024 * 1024)
/* How long a cut client has to read its notice before it is closed. */
#define CUT_GRACE_MS     5000
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
	bool closed; /* freed at the end of the current callback */
};

struct control_server {
	struct loop *loop;
	struct loop_watch watch;
	char *path;
	dev_t device;
	ino_t inode;
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
};

/* ---- clients ---- */

static void close_passed_fds(struct control_client *client)
{
	for (size_t i = 0; i < client->passed_fd_count; i++)
		close(client->passed_fds[i]);
	client->passed_fd_count = 0;
}

static void close_outgoing_fds(struct control_client *client)
{
	for (size_t i = 0; i < client->outgoing_fd_count; i++)
		close(client->outgoing_fds[i]);
	client->outgoing_fd_count = 0;
}

static void stop_following(struct control_client *client)
{
	struct control_server *server = client->server;
	if (client->follow == CONTROL_FOLLOW_EXEC && server->ops.exec_client_gone)
		server->ops.exec_client_gone(server->ops.context, client->follow_subject);
	if (control_follow_is_logs(client->follow) && server->ops.followers_changed)
		server->ops.followers_changed(server->ops.context, client->follow,
					      client->follow_subject, -1);
	client->follow = CONTROL_FOLLOW_NONE;
}

/* Closing happens in two steps: retire (out of epoll and the client list,
 * at once) and free (after the event batch, control_server_collect), so that
 * an event of this batch never reaches freed memory. */
static void client_retire(struct control_client *client)
{
	struct control_server *server = client->server;
	client->closed = true;
	stop_following(client);
	close_passed_fds(client);
	close_outgoing_fds(client);
	loop_timer_cancel(server->loop, &client->cut_timer);
	loop_timer_cancel(server->loop, &client->idle_timer);
	loop_watch_remove(server->loop, &client->watch);
	if (client->previous)
		client->previous->next = client->next;
	else
		server->clients = client->next;
	if (client->next)
		client->next->previous = client->previous;
	server->client_count--;
	client->previous = NULL;
	client->next = server->retired;
	server->retired = client;
}

/* Replies bigger than this (a status of hundreds of tasks) leave the heap
 * fragmented once freed: glibc keeps those pages unless asked. */
#define LARGE_REPLY_BYTES (128 * 1024)

void control_server_collect(struct control_server *server)
{
	bool large = false;
	while (server->retired) {
		struct control_client *client = server->retired;
		server->retired = client->next;
		large |= client->output_capacity >= LARGE_REPLY_BYTES;
		close(client->watch.fd);
		free(client->input);
		free(client->output);
		free(client->task);
		free(client);
	}
	/* Give back what the reply and its JSON tree took: about 4.6 MiB
	 * stayed after 20 status calls of 1000 tasks. */
	if (large)
		malloc_trim(0);
}

static size_t pending(const struct control_client *client)
{
	return client->output_length - client->output_start;
}

static void update_interest(struct control_client *client)
{
	uint32_t interest =
	    (client->input_ended || client->cut ? 0 : EPOLLIN) | (pending(client) ? EPOLLOUT : 0);
	if (interest == client->interest)
		return;
	client->interest = interest;
	loop_watch_modify(client->server->loop, &client->watch, interest);
}

/* One send of what is pending, with the queued fds on it if there are any
 * (they travel with its first byte). */
static ssize_t send_pending(struct control_client *client)
{
	union {
		struct cmsghdr header;
		char space[CMSG_SPACE(sizeof(int) * CONTROL_PASSED_FDS_MAX)];
	} control;
	struct iovec vector = {.iov_base = client->output + client->output_start,
			       .iov_len = pending(client)};
	struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1};
	size_t fd_bytes = sizeof(int) * client->outgoing_fd_count;
	if (client->outgoing_fd_count) {
		memset(&control, 0, sizeof(control));
		message.msg_control = &control;
		message.msg_controllen = CMSG_SPACE(fd_bytes);
		struct cmsghdr *header = CMSG_FIRSTHDR(&message);
		header->cmsg_level = SOL_SOCKET;
		header->cmsg_type = SCM_RIGHTS;
		header->cmsg_len = CMSG_LEN(fd_bytes);
		memcpy(CMSG_DATA(header), client->outgoing_fds, fd_bytes);
	}
	ssize_t written = sendmsg(client->watch.fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (written > 0)
		close_outgoing_fds(client); /* the client has its copies now */
	return written;
}

/* Sends what the socket takes now. A client that half-closed, or was cut,
 * is closed once everything it is owed went out. */
static void flush(struct control_client *client)
{
	while (pending(client)) {
		ssize_t written = send_pending(client);
		if (written < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			client->closed = true;
			return;
		}
		if (written == 0)
			break;
		client->output_start += (size_t)written;
		client->sent_mid_line = client->output[client->output_start - 1] != '\n';
		client->last_active_ms = loop_now_ms();
	}
	if (pending(client) == 0) {
		client->output_start = client->output_length = 0;
		if (client->input_ended || client->cut) {
			client->closed = true;
			return;
		}
	}
	update_interest(client);
}

static void control_client_send_unchecked(struct control_client *client, const char *data,
					  size_t length);

static void on_cut_grace_over(struct loop_timer *timer)
{
	struct control_client *client = timer->data;
	client_retire(client);
}

/* A client that let its buffer fill: what it did not read is dropped (but
 * the line being sent stays whole), and a last line tells it why. It has
 * CUT_GRACE_MS to read that line; other clients are never held up. */
static void cut_client(struct control_client *client)
{
	static const char notice[] =
	    "{\"ok\":false,\"error\":\"stream cut: the client did not read fast enough\"}\n";
	size_t keep = client->output_start;
	if (client->sent_mid_line) {
		char *end = memchr(client->output + keep, '\n', pending(client));
		keep = end ? (size_t)(end - client->output) + 1 : client->output_length;
	}
	client->output_length = keep;
	stop_following(client);
	client->cut = true;
	control_client_send_unchecked(client, notice, sizeof(notice) - 1);
	loop_timer_arm(client->server->loop, &client->cut_timer, loop_now_ms() + CUT_GRACE_MS);
	flush(client);
}

static void control_client_send_unchecked(struct control_client *client, const char *data,
					  size_t length)
{
	if (client->output_length + length > client->output_capacity) {
		/* Compact first; grow only when that is not enough. */
		if (client->output_start) {
			memmove(client->output, client->output + client->output_start,
				pending(client));
			client->output_length = pending(client);
			client->output_start = 0;
		}
		if (client->output_length + length > client->output_capacity) {
			size_t capacity = client->output_capacity ? client->output_capacity : 4096;
			while (capacity < client->output_length + length)
				capacity *= 2;
			client->output = xreallocarray(client->output, capacity, 1);
			client->output_capacity = capacity;
		}
	}
	memcpy(client->output + client->output_length, data, length);
	client->output_length += length;
}

void control_client_send(struct control_client *client, const char *data, size_t length)
{
	if (client->closed || client->cut)
		return;
	if (pending(client) + length > CLIENT_OUTPUT_MAX) {
		cut_client(client);
		return;
	}
	control_client_send_unchecked(client, data, length);
	if (!(client->interest & EPOLLOUT))
		flush(client);
}

void control_client_send_with_fds(struct control_client *client, const char *data, size_t length,
				  const int *fds, size_t fd_count)
{
	if (client->closed || client->cut || length == 0 ||
	    client->outgoing_fd_count + fd_count > CONTROL_PASSED_FDS_MAX) {
		for (size_t i = 0; i < fd_count; i++)
			close(fds[i]);
		control_client_send(client, data, length);
		return;
	}
	memcpy(client->outgoing_fds + client->outgoing_fd_count, fds, fd_count * sizeof(int));
	client->outgoing_fd_count += fd_count;
	control_client_send(client, data, length);
}

void control_client_send_owned(struct control_client *client, char *data, size_t length,
			       size_t capacity)
{
	/* A reply made whole is handed over as it is, even above
	 * CLIENT_OUTPUT_MAX (a status of 20,000 tasks is 11 MB): the bound is
	 * for what piles up unread, and this memory is spent already. */
	if (client->closed || client->cut || pending(client) ||
	    (capacity < client->output_capacity && length <= CLIENT_OUTPUT_MAX)) {
		control_client_send(client, data, length);
		free(data);
		return;
	}
	free(client->output);
	client->output = data;
	client->output_capacity = capacity;
	client->output_start = 0;
	client->output_length = length;
	if (!(client->interest & EPOLLOUT))
		flush(client);
}

bool control_follow_is_logs(enum control_follow kind)
{
	return kind == CONTROL_FOLLOW_LOGS || kind == CONTROL_FOLLOW_LOGS_GROUP ||
	       kind == CONTROL_FOLLOW_LOGS_ALL;
}

void control_client_follow(struct control_client *client, enum control_follow kind,
			   const void *subject)
{
	client->follow = kind;
	client->follow_subject = subject;
	struct control_server *server = client->server;
	/* A stream may be quiet for hours: that is not idleness. */
	loop_timer_cancel(server->loop, &client->idle_timer);
	if (control_follow_is_logs(kind) && server->ops.followers_changed)
		server->ops.followers_changed(server->ops.context, kind, subject, +1);
}

void control_server_publish(struct control_server *server, enum control_follow kind,
			    const void *subject, const char *line, size_t length)
{
	struct control_client *next;
	for (struct control_client *client = server->clients; client; client = next) {
		next = client->next;
		if (client->follow != kind || client->follow_subject != subject)
			continue;
		control_client_send(client, line, length);
		if (client->closed)
			client_retire(client);
	}
}

bool control_client_is_owner(const struct control_client *client)
{
	return client->owner;
}

const char *control_client_task(const struct control_client *client)
{
	return client->task;
}

const char *control_server_path(const struct control_server *server)
{
	return server ? server->path : NULL;
}

void control_server_forget(struct control_server *server, enum control_follow kind,
			   const void *subject)
{
	struct control_client *next;
	for (struct control_client *client = server->clients; client; client = next) {
		next = client->next;
		if (client->follow != kind || client->follow_subject != subject)
			continue;
		/* The stream ends as at a half-close: what it is owed goes
		 * out, then the connection closes (the CLI exits 0). */
		stop_following(client);
		client->input_ended = true;
		flush(client);
		if (client->closed)
			client_retire(client);
	}
}

static void reply_error(struct control_client *client, const char *message)
{
	char *reply = control_reply_error(message);
	control_client_send(client, reply, strlen(reply));
	free(reply);
}

/* A task's request: only what its control: list grants, looked up at
 * each request, so that a reload that changes the list applies at once.
 * false after refusing it. */
static bool task_may_make(struct control_client *client, const struct control_request *request)
{
	struct control_server *server = client->server;
	unsigned rights = server->ops.task_rights(server->ops.context, client->task);
	if (rights & control_command_right(request->command))
		return true;
	char granted[256], message[512];
	control_rights_describe(rights, granted, sizeof(granted));
	snprintf(message, sizeof(message),
		 "%s is a task: it may make only the control requests its control: list grants "
		 "(%s), not %s",
		 client->task, granted, control_command_name(request->command));
	log_message("control socket: refused %s from task %s (uid %u): its control: list "
		    "grants %s",
		    control_command_name(request->command), client->task, (unsigned)client->uid,
		    granted);
	reply_error(client, message);
	return false;
}

static void handle_line(struct control_client *client, const char *line, size_t length)
{
	struct control_request request;
	char error[512];
	client->last_active_ms = loop_now_ms();
	if (control_request_parse(line, length, &request, error, sizeof(error)) < 0) {
		reply_error(client, error);
		return;
	}
	if (client->task && !task_may_make(client, &request)) {
		control_request_free(&request);
		close_passed_fds(client);
		return;
	}
	client->server->ops.handle(client->server->ops.context, client, &request);
	control_request_free(&request);
	close_passed_fds(client);
}

/* Frames requests from the input buffer; an oversize line gets one error
 * and is skipped up to its newline, and the connection goes on. */
static void process_input(struct control_client *client)
{
	size_t start = 0;
	while (!client->closed && client->follow == CONTROL_FOLLOW_NONE) {
		char *newline = memchr(client->input + start, '\n', client->input_length - start);
		if (!newline)
			break;
		size_t length = (size_t)(newline - (client->input + start));
		if (client->skipping_long_line)
			client->skipping_long_line = false;
		else if (length > 0)
			handle_line(client, client->input + start, length);
		start += length + 1;
	}
	memmove(client->input, client->input + start, client->input_length - start);
	client->input_length -= start;
	/* The buffer holds a whole request and its newline; full without a
	 * newline means longer than allowed. */
	if (client->input_length > CONTROL_REQUEST_MAX) {
		if (!client->skipping_long_line) {
			char message[96];
			snprintf(message, sizeof(message), "request longer than %d KiB: refused",
				 CONTROL_REQUEST_MAX / 1024);
			reply_error(client, message);
		}
		client->skipping_long_line = true;
		client->input_length = 0;
	}
}

/* Reads input, and the fds that come with it (at most
 * CONTROL_PASSED_FDS_MAX in all; more are closed at once). */
static ssize_t receive(struct control_client *client)
{
	union {
		struct cmsghdr header;
		char space[CMSG_SPACE(sizeof(int) * CONTROL_PASSED_FDS_MAX)];
	} control;
	struct iovec vector = {.iov_base = client->input + client->input_length,
			       .iov_len = CLIENT_INPUT_MAX - client->input_length};
	struct msghdr message = {.msg_iov = &vector,
				 .msg_iovlen = 1,
				 .msg_control = &control,
				 .msg_controllen = sizeof(control)};
	ssize_t got = recvmsg(client->watch.fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (got < 0)
		return got;
	for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header;
	     header = CMSG_NXTHDR(&message, header)) {
		if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS)
			continue;
		size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int fds[CONTROL_PASSED_FDS_MAX];
		memcpy(fds, CMSG_DATA(header), count * sizeof(int));
		for (size_t i = 0; i < count; i++) {
			if (client->passed_fd_count < CONTROL_PASSED_FDS_MAX)
				client->passed_fds[client->passed_fd_count++] = fds[i];
			else
				close(fds[i]);
		}
	}
	return got;
}

size_t control_client_take_fds(struct control_client *client, int *fds)
{
	size_t count = client->passed_fd_count;
	memcpy(fds, client->passed_fds, count * sizeof(int));
	client->passed_fd_count = 0;
	return count;
}

void control_client_finish(struct control_client *client, const char *line, size_t length)
{
	client->follow = CONTROL_FOLLOW_NONE;
	control_client_send(client, line, length);
	client->input_ended = true;
	flush(client);
	if (client->closed)
		client_retire(client);
}

static void read_input(struct control_client *client)
{
	ssize_t got = receive(client);
	if (got < 0) {
		if (errno != EAGAIN && errno != EINTR)
			client->closed = true;
		return;
	}
	if (got == 0) {
		/* Half-closed: the requests already sent still get their
		 * replies (flush closes once they are out). A follower's
		 * stream simply ends. */
		client->input_ended = true;
		if (client->follow != CONTROL_FOLLOW_NONE)
			client->closed = true;
		else
			flush(client);
		return;
	}
	client->input_length += (size_t)got;
	/* A follower's further input is ignored; it ends the stream by
	 * closing. */
	if (client->follow == CONTROL_FOLLOW_NONE)
		process_input(client);
	else
		client->input_length = 0;
}

static void on_client_event(struct loop_watch *watch, uint32_t events)
{
	struct control_client *client = watch->data;
	if (client->closed)
		return;
	if (events & EPOLLOUT)
		flush(client);
	if (!client->closed && (events & EPOLLIN))
		read_input(client);
	/* Hung up while we still had something to say: nobody will read it. */
	if (!client->closed && (events & (EPOLLHUP | EPOLLERR)) && !(events & EPOLLIN))
		client->closed = true;
	if (client->closed)
		client_retire(client);
}

/* ---- who may connect ---- */

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
	return !client->closed && !client->cut && client->follow == CONTROL_FOLLOW_NONE &&
	       pending(client) == 0;
}

/* Says why to a connection corral closes on its own, when nothing else
 * waits to be sent to it, then closes it. */
static void close_with_notice(struct control_client *client, const char *message)
{
	if (pending(client) == 0) {
		char *reply = control_reply_error(message);
		send(client->watch.fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
		free(reply);
	}
	client_retire(client);
}

static void on_idle_timeout(struct loop_timer *timer)
{
	struct control_client *client = timer->data;
	struct control_server *server = client->server;
	if (client->closed || client->follow != CONTROL_FOLLOW_NONE)
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

static void refuse(int fd, const struct control_peer *peer, const char *why)
{
	char *reply = control_reply_error(why);
	send(fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
	free(reply);
	close(fd);
	if (peer->task[0])
		log_message("control socket: refused task %s (pid %d, uid %u): %s", peer->task,
			    (int)peer->credentials.pid, (unsigned)peer->credentials.uid, why);
	else
		log_message("control socket: refused pid %d (uid %u): %s",
			    (int)peer->credentials.pid, (unsigned)peer->credentials.uid, why);
}

static void on_accept(struct loop_watch *watch, uint32_t events)
{
	struct control_server *server = watch->data;
	for (;;) {
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
			refuse(fd, &peer, why);
			continue;
		}
		struct control_client *client = xcalloc(1, sizeof(*client));
		client->server = server;
		client->uid = peer.credentials.uid;
		client->owner = owner;
		client->task = peer.task[0] ? xstrdup(peer.task) : NULL;
		client->input = xmalloc(CLIENT_INPUT_MAX);
		client->watch =
		    (struct loop_watch){.fd = fd, .callback = on_client_event, .data = client};
		client->interest = EPOLLIN;
		loop_timer_init(&client->cut_timer, on_cut_grace_over, client);
		loop_timer_init(&client->idle_timer, on_idle_timeout, client);
		if (loop_watch_add(server->loop, &client->watch, EPOLLIN) < 0) {
			close(fd);
			free(client->task);
			free(client->input);
			free(client);
			continue;
		}
		client->last_active_ms = loop_now_ms();
		loop_timer_arm(server->loop, &client->idle_timer,
			       client->last_active_ms + server->idle_timeout_ms);
		client->next = server->clients;
		if (server->clients)
			server->clients->previous = client;
		server->clients = client;
		server->client_count++;
	}
}

/* ---- the socket file ---- */

/* mkdir -p, giving the directories corral creates `mode`. */
static int make_directories(const char *path, mode_t mode, gid_t group, bool has_group)
{
	char buffer[PATH_MAX];
	snprintf(buffer, sizeof(buffer), "%s", path);
	for (char *slash = buffer + 1;; slash++) {
		bool last = *slash == '\0';
		if (*slash != '/' && !last)
			continue;
		*slash = '\0';
		if (mkdir(buffer, mode) == 0) {
			if (has_group && chown(buffer, (uid_t)-1, group) < 0)
				return -errno;
			chmod(buffer, mode); /* not reduced by the umask */
		} else if (errno != EEXIST) {
			return -errno;
		}
		if (last)
			return 0;
		*slash = '/';
	}
}

/* A default place's directory, when it was there before us (/tmp is
 * everyone's): corral's own, or someone could swap the socket the CLI
 * connects to. -EPERM when not, so that the next place is tried. */
static int check_own_directory(const char *directory, char *error, size_t error_size)
{
	struct stat status;
	if (lstat(directory, &status) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "%s: %s", directory, strerror(-failure));
		return failure;
	}
	if (!S_ISDIR(status.st_mode) || status.st_uid != geteuid() || (status.st_mode & 022)) {
		snprintf(error, error_size,
			 "%s is not corral's own directory (owner uid %u, mode %04o): not used",
			 directory, (unsigned)status.st_uid, (unsigned)(status.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

bool control_server_listener_at(const char *path, int *connect_errno)
{
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0) {
		*connect_errno = errno;
		return false;
	}
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
	int connected = connect(probe, (struct sockaddr *)&address, sizeof(address));
	*connect_errno = connected == 0 ? 0 : errno;
	close(probe);
	return connected == 0;
}

/* What is at `path` already: nothing, a stale socket (removed), or
 * something we must not touch (-ENOTSOCK, -EADDRINUSE, -EBUSY), so that
 * only a failure to look (-EACCES) lets the caller try another place. */
static int clear_stale_socket(const char *path, char *error, size_t error_size)
{
	struct stat status;
	if (lstat(path, &status) < 0) {
		int failure = -errno;
		if (failure == -ENOENT)
			return 0;
		snprintf(error, error_size, "%s: %s", path, strerror(-failure));
		return failure;
	}
	if (!S_ISSOCK(status.st_mode)) {
		snprintf(error, error_size,
			 "%s exists and is not a socket: refusing to replace it (remove it, or "
			 "set socket: to another path)",
			 path);
		return -ENOTSOCK;
	}
	int connect_errno = 0;
	if (control_server_listener_at(path, &connect_errno)) {
		snprintf(error, error_size,
			 "another corral is already listening on %s: stop it, or give this one "
			 "another socket (--socket, CORRAL_SOCKET or socket:)",
			 path);
		return -EADDRINUSE;
	}
	if (connect_errno != ECONNREFUSED) {
		snprintf(error, error_size, "%s: cannot tell whether it is in use: %s", path,
			 strerror(connect_errno));
		return -EBUSY;
	}
	/* Left behind by a corral that died: nobody listens. */
	unlink(path);
	return 0;
}

/* The listening socket's fd, or -errno with `error`. */
static int open_listener(struct control_server *server, const char *path, char *error,
			 size_t error_size)
{
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(address.sun_path)) {
		snprintf(error, error_size, "%s: path too long for a socket", path);
		return -ENAMETOOLONG;
	}
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		int failure = -errno;
		snprintf(error, error_size, "socket: %s", strerror(-failure));
		return failure;
	}
	/* The umask makes it 0600 from birth: no window where others could
	 * connect before the chmod. */
	mode_t old_umask = umask(0177);
	int bound = bind(fd, (struct sockaddr *)&address, sizeof(address));
	int bind_errno = errno;
	umask(old_umask);
	if (bound < 0) {
		snprintf(error, error_size, "bind %s: %s", path, strerror(bind_errno));
		return -bind_errno;
	}
	if (server->has_group &&
	    (chown(path, (uid_t)-1, server->group) < 0 || chmod(path, 0660) < 0)) {
		int failure = -errno;
		snprintf(error, error_size, "%s: giving it to group %s: %s", path,
			 server->group_name, strerror(-failure));
		unlink(path);
		return failure;
	}
	struct stat status;
	if (listen(fd, SOMAXCONN) < 0 || fstat(fd, &status) < 0 || stat(path, &status) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "listen %s: %s", path, strerror(-failure));
		unlink(path);
		return failure;
	}
	server->device = status.st_dev;
	server->inode = status.st_ino;
	return TAKE_FD(fd);
}

int control_server_open(struct control_server **out, struct loop *loop, const char *path,
			bool path_is_default, const struct control_server_settings *settings,
			const struct control_server_ops *ops, char *error, size_t error_size)
{
	*out = NULL;
	const char *control_group = settings->control_group;
	struct control_server *server = xcalloc(1, sizeof(*server));
	server->loop = loop;
	server->ops = *ops;
	server->path = xstrdup(path);
	server->watch.fd = -1;
	control_peer_rules_init(&server->peer_rules, settings->task_cgroup_root);
	server->idle_timeout_ms = settings->idle_timeout_ms;
	server->limits = (struct control_admission_limits){
	    .total = CONTROL_CONNECTIONS_MAX,
	    .reserved_for_owners = CONTROL_CONNECTIONS_RESERVED,
	    .per_user = settings->connections_per_user,
	};
	int failure = 0;
	if (control_group) {
		struct group *entry = getgrnam(control_group);
		if (!entry) {
			snprintf(error, error_size, "control.group \"%s\": no such group",
				 control_group);
			control_server_close(server);
			return -ENOENT;
		}
		server->has_group = true;
		server->group = entry->gr_gid;
		server->group_name = xstrdup(control_group);
	}

	char buffer[PATH_MAX];
	snprintf(buffer, sizeof(buffer), "%s", path);
	const char *directory = dirname(buffer);
	failure = make_directories(directory, server->has_group ? 0750 : 0700, server->group,
				   server->has_group);
	if (failure < 0)
		snprintf(error, error_size, "cannot create the directory of %s: %s", path,
			 strerror(-failure));
	if (failure == 0 && path_is_default)
		failure = check_own_directory(directory, error, error_size);
	if (failure == 0)
		failure = clear_stale_socket(path, error, error_size);
	int fd = failure == 0 ? open_listener(server, path, error, error_size) : failure;
	if (fd < 0) {
		control_server_close(server);
		/* The default path is a convenience: a corral that may not
		 * write /run still supervises, without a control socket. */
		if (path_is_default && (fd == -EACCES || fd == -EROFS || fd == -EPERM))
			return 1;
		return fd;
	}
	server->watch = (struct loop_watch){.fd = fd, .callback = on_accept, .data = server};
	loop_watch_add(loop, &server->watch, EPOLLIN);
	*out = server;
	return 0;
}

void control_server_close(struct control_server *server)
{
	if (!server)
		return;
	while (server->clients)
		client_retire(server->clients);
	control_server_collect(server);
	if (server->watch.fd >= 0) {
		loop_watch_remove(server->loop, &server->watch);
		close(server->watch.fd);
		/* Only our own socket: another corral may have replaced it. */
		struct stat status;
		if (stat(server->path, &status) == 0 && status.st_dev == server->device &&
		    status.st_ino == server->inode)
			unlink(server->path);
	}
	free(server->path);
	free(server->group_name);
	control_peer_rules_free(&server->peer_rules);
	free(server);
}
