/* One connection's buffers: requests framed from a bounded input buffer,
 * replies out through a bounded output buffer, fds passed both ways
 * (SCM_RIGHTS), a client that falls behind cut, and the streams clients
 * follow. The socket file is control_listener.c; accepting, who may
 * connect and idle timers are control_connections.c. */
#include "supervisor/control/control_server.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "config/model/config.h"
#include "supervisor/control/control_server_internal.h"

/* Enough for the status of thousands of tasks; a follower that falls this
 * far behind is cut. */
#define CLIENT_OUTPUT_MAX (8u * 1024 * 1024)
/* How long a cut client has to read its notice before it is closed. */
#define CUT_GRACE_MS 5000

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
void control_client_retire(struct control_client *client)
{
	struct control_server *server = client->server;
	client->closed = true;
	stop_following(client);
	if (client->waiting && client->waiting_gone) {
		client->waiting = false;
		client->waiting_gone(client->waiting_data);
	}
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

static void update_interest(struct control_client *client)
{
	uint32_t interest = (client->input_ended || client->cut || client->waiting ? 0 : EPOLLIN) |
			    (control_client_pending(client) ? EPOLLOUT : 0);
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
			       .iov_len = control_client_pending(client)};
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
	while (control_client_pending(client)) {
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
	if (control_client_pending(client) == 0) {
		client->output_start = client->output_length = 0;
		if (client->input_ended || client->cut) {
			client->closed = true;
			return;
		}
	}
	update_interest(client);
}

void control_client_send_later(struct control_client *client, const char *data, size_t length)
{
	control_client_send_unchecked(client, data, length);
	update_interest(client);
}

void control_client_on_cut_grace_over(struct loop_timer *timer)
{
	struct control_client *client = timer->data;
	control_client_retire(client);
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
		char *end = memchr(client->output + keep, '\n', control_client_pending(client));
		keep = end ? (size_t)(end - client->output) + 1 : client->output_length;
	}
	client->output_length = keep;
	stop_following(client);
	client->cut = true;
	control_client_send_unchecked(client, notice, sizeof(notice) - 1);
	loop_timer_arm(client->server->loop, &client->cut_timer, loop_now_ms() + CUT_GRACE_MS);
	flush(client);
}

void control_client_send_unchecked(struct control_client *client, const char *data, size_t length)
{
	if (client->output_length + length > client->output_capacity) {
		/* Compact first; grow only when that is not enough. */
		if (client->output_start) {
			memmove(client->output, client->output + client->output_start,
				control_client_pending(client));
			client->output_length = control_client_pending(client);
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
	if (control_client_pending(client) + length > CLIENT_OUTPUT_MAX) {
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
	if (client->closed || client->cut || control_client_pending(client) ||
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
			control_client_retire(client);
	}
}

void control_server_publish_logs(struct control_server *server, const void *task, const void *group,
				 const char *lines, size_t length)
{
	struct control_client *next;
	for (struct control_client *client = server->clients; client; client = next) {
		next = client->next;
		bool follows =
		    (client->follow == CONTROL_FOLLOW_LOGS && client->follow_subject == task) ||
		    (client->follow == CONTROL_FOLLOW_LOGS_GROUP &&
		     client->follow_subject == group) ||
		    client->follow == CONTROL_FOLLOW_LOGS_ALL;
		if (!follows)
			continue;
		/* Line by line: a follower that falls behind is cut at a line
		 * (cut_client), never in a batch it had room for in part. */
		for (const char *line = lines, *end = lines + length, *after;
		     line < end && !client->cut && !client->closed; line = after) {
			after = (const char *)memchr(line, '\n', (size_t)(end - line));
			after = after ? after + 1 : end;
			control_client_send(client, line, (size_t)(after - line));
		}
		if (client->closed)
			control_client_retire(client);
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

#define ENDED_LINE "{\"ok\":true,\"ended\":true}\n"

void control_server_forget(struct control_server *server, enum control_follow kind,
			   const void *subject)
{
	struct control_client *next;
	for (struct control_client *client = server->clients; client; client = next) {
		next = client->next;
		if (client->follow != kind || client->follow_subject != subject)
			continue;
		/* The stream ends as at a half-close: what it is owed goes
		 * out, then the connection closes (the CLI exits 0). A logs
		 * follower is told it ended so: a stream that ends without
		 * it is a corral that died, which the CLI follows again
		 * once it is back (cli/command_stream.c). */
		if (control_follow_is_logs(kind))
			control_client_send(client, ENDED_LINE, sizeof(ENDED_LINE) - 1);
		stop_following(client);
		client->input_ended = true;
		flush(client);
		if (client->closed)
			control_client_retire(client);
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
	while (!client->closed && !client->waiting && client->follow == CONTROL_FOLLOW_NONE) {
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
		control_client_retire(client);
}

void control_client_wait(struct control_client *client, void (*gone)(void *data), void *data)
{
	client->waiting = true;
	client->waiting_gone = gone;
	client->waiting_data = data;
	loop_timer_cancel(client->server->loop, &client->idle_timer);
	update_interest(client);
}

void control_client_resume(struct control_client *client)
{
	if (client->closed || !client->waiting)
		return;
	struct control_server *server = client->server;
	client->waiting = false;
	client->waiting_gone = NULL;
	client->last_active_ms = loop_now_ms();
	loop_timer_arm(server->loop, &client->idle_timer,
		       client->last_active_ms + server->idle_timeout_ms);
	/* Requests that came with the one answered now. */
	process_input(client);
	if (client->closed)
		control_client_retire(client);
	else
		update_interest(client);
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

void control_client_on_event(struct loop_watch *watch, uint32_t events)
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
		control_client_retire(client);
}
