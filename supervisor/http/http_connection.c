/* One connection of the HTTP endpoint: a request head read into a buffer
 * of HTTP_REQUEST_HEAD_MAX bytes, answered, the response sent without
 * blocking, then the next request (keep-alive) or the end. One timer holds
 * the deadline of whatever the connection waits for: its request
 * (HTTP_REQUEST_DEADLINE_MS from its first byte, or from the accept), the
 * next request (http.idle_timeout), the response's last byte
 * (HTTP_WRITE_DEADLINE_MS). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "supervisor/http/http_routes.h"
#include "supervisor/http/http_server_internal.h"

static void process_input(struct http_connection *connection);

static void set_interest(struct http_connection *connection, uint32_t interest)
{
	if (interest == connection->interest)
		return;
	connection->interest = interest;
	loop_watch_modify(connection->server->loop, &connection->watch, interest);
}

static void arm_deadline(struct http_connection *connection, uint64_t deadline_ms)
{
	loop_timer_arm(connection->server->loop, &connection->deadline, deadline_ms);
}

void http_connection_retire(struct http_connection *connection)
{
	struct http_server *server = connection->server;
	if (connection->closed)
		return;
	connection->closed = true;
	loop_timer_cancel(server->loop, &connection->deadline);
	loop_watch_remove(server->loop, &connection->watch);
	if (connection->previous)
		connection->previous->next = connection->next;
	else
		server->connections = connection->next;
	if (connection->next)
		connection->next->previous = connection->previous;
	server->connection_count--;
	connection->previous = NULL;
	connection->next = server->retired;
	server->retired = connection;
}

/* Our side shut, the client's input dropped until it closes (see
 * HTTP_CLOSING). */
static void begin_closing(struct http_connection *connection)
{
	if (connection->input_ended) {
		http_connection_retire(connection);
		return;
	}
	shutdown(connection->watch.fd, SHUT_WR);
	connection->state = HTTP_CLOSING;
	connection->input_length = 0;
	set_interest(connection, EPOLLIN);
	arm_deadline(connection, loop_now_ms() + HTTP_LINGER_MS);
}

/* Waiting for the next request (keep-alive), which may have come with
 * the last one already. */
static void await_request(struct http_connection *connection)
{
	uint64_t now = loop_now_ms();
	connection->state = HTTP_READING;
	connection->waiting_since_ms = now;
	connection->request_started = connection->input_length > 0;
	arm_deadline(connection, now + (connection->request_started
					    ? HTTP_REQUEST_DEADLINE_MS
					    : connection->server->config.idle_timeout_ms));
	set_interest(connection, connection->input_ended ? 0 : EPOLLIN);
	process_input(connection);
}

static void response_sent(struct http_connection *connection)
{
	http_response_free(&connection->response);
	if (connection->keep_alive)
		await_request(connection);
	else
		begin_closing(connection);
}

/* Sends what the socket takes now; the rest when it is writable again. */
static void write_output(struct http_connection *connection)
{
	while (connection->out[0].iov_len || connection->out[1].iov_len) {
		struct iovec *first =
		    connection->out[0].iov_len ? &connection->out[0] : &connection->out[1];
		struct msghdr message = {.msg_iov = first,
					 .msg_iovlen = first == connection->out ? 2 : 1};
		ssize_t written =
		    sendmsg(connection->watch.fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (written < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				set_interest(connection, EPOLLOUT);
				return;
			}
			http_connection_retire(connection);
			return;
		}
		for (size_t i = 0; i < 2 && written > 0; i++) {
			size_t taken = (size_t)written < connection->out[i].iov_len
					   ? (size_t)written
					   : connection->out[i].iov_len;
			connection->out[i].iov_base = (char *)connection->out[i].iov_base + taken;
			connection->out[i].iov_len -= taken;
			written -= (ssize_t)taken;
		}
	}
	response_sent(connection);
}

/* Answers with `response` (taken over); HEAD gets its head alone. */
static void respond(struct http_connection *connection, struct http_response *response,
		    bool head_only, bool keep_alive)
{
	connection->response = *response;
	connection->keep_alive = keep_alive;
	size_t head_length = http_response_head(response, keep_alive, time(NULL), connection->head,
						sizeof(connection->head));
	connection->out[0] = (struct iovec){connection->head, head_length};
	connection->out[1] = (struct iovec){response->body, head_only ? 0 : response->body_length};
	connection->state = HTTP_WRITING;
	arm_deadline(connection, loop_now_ms() + HTTP_WRITE_DEADLINE_MS);
	write_output(connection);
}

/* A request that cannot be answered as asked: the error, then the end
 * (what follows it in the input cannot be trusted to be a request). */
static void refuse(struct http_connection *connection, int status, const char *why)
{
	struct http_response response;
	http_response_error(&response, status, why);
	respond(connection, &response, false, false);
}

/* Answers the request at the head of the input, if it has all come. */
static void answer_one(struct http_connection *connection)
{
	size_t end =
	    http_head_end(connection->input, connection->input_length, &connection->scanned);
	if (!end) {
		if (connection->input_length >= HTTP_REQUEST_HEAD_MAX) {
			int status =
			    http_head_too_large_status(connection->input, connection->input_length);
			refuse(connection, status,
			       status == 414 ? "the request line is longer than 8 KiB"
					     : "the request head is longer than 8 KiB");
		} else if (connection->input_ended) {
			http_connection_retire(connection);
		}
		return;
	}
	struct http_request request;
	char error[128];
	if (http_request_parse(connection->input, end, &request, error, sizeof(error)) < 0) {
		refuse(connection, request.refusal, error);
		return;
	}
	struct http_response response;
	http_route(&request, connection->server->sources, loop_now_ms(), &response);
	/* The request is answered: its bytes go (the response was built
	 * from them, and holds its own). */
	connection->input_length -= end;
	memmove(connection->input, connection->input + end, connection->input_length);
	connection->scanned = 0;
	bool more = connection->input_length > 0 || !connection->input_ended;
	respond(connection, &response, request.method == HTTP_METHOD_HEAD,
		request.keep_alive && more);
}

/* The requests that have come whole, one after another (pipelined ones
 * too), each once the response before it is out. A loop, not a
 * recursion through response_sent: up to 8 KiB of tiny requests could
 * come at once. */
static void process_input(struct http_connection *connection)
{
	if (connection->processing)
		return; /* the loop below goes on */
	connection->processing = true;
	size_t before;
	do {
		before = connection->input_length;
		if (connection->closed || connection->state != HTTP_READING)
			break;
		answer_one(connection);
	} while (connection->input_length != before || connection->state != HTTP_READING);
	connection->processing = false;
}

static void read_input(struct http_connection *connection)
{
	for (;;) {
		size_t room = HTTP_REQUEST_HEAD_MAX - connection->input_length;
		if (!room)
			break;
		ssize_t got =
		    recv(connection->watch.fd, connection->input + connection->input_length, room,
			 MSG_DONTWAIT);
		if (got > 0) {
			connection->input_length += (size_t)got;
			continue;
		}
		if (got == 0) {
			connection->input_ended = true;
			set_interest(connection, 0);
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			break;
		http_connection_retire(connection);
		return;
	}
	/* The first byte of a request after an idle wait: the request's
	 * deadline starts. */
	if (!connection->request_started && connection->input_length) {
		connection->request_started = true;
		arm_deadline(connection, loop_now_ms() + HTTP_REQUEST_DEADLINE_MS);
	}
	process_input(connection);
}

/* HTTP_CLOSING: what the client still sends is dropped. */
static void drain_input(struct http_connection *connection)
{
	char discard[4096];
	for (;;) {
		ssize_t got = recv(connection->watch.fd, discard, sizeof(discard), MSG_DONTWAIT);
		if (got > 0)
			continue;
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == EAGAIN)
			return;
		http_connection_retire(connection);
		return;
	}
}

static void on_event(struct loop_watch *watch, uint32_t events)
{
	struct http_connection *connection = watch->data;
	if (events & EPOLLERR) {
		http_connection_retire(connection);
		return;
	}
	switch (connection->state) {
	case HTTP_READING:
		if (events & (EPOLLIN | EPOLLHUP))
			read_input(connection);
		break;
	case HTTP_WRITING:
		if (events & (EPOLLOUT | EPOLLHUP))
			write_output(connection);
		break;
	case HTTP_CLOSING:
		drain_input(connection);
		break;
	}
}

/* A deadline passed: a request that did not come whole in time is told
 * so (408) on its way out, anything else just closed. */
static void on_deadline(struct loop_timer *timer)
{
	struct http_connection *connection = timer->data;
	if (connection->state == HTTP_READING && connection->input_length) {
		static const char timeout[] = "HTTP/1.1 408 Request Timeout\r\n"
					      "Content-Length: 0\r\nConnection: close\r\n\r\n";
		send(connection->watch.fd, timeout, sizeof(timeout) - 1,
		     MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	http_connection_retire(connection);
}

void http_connection_start(struct http_server *server, int fd)
{
	struct http_connection *connection = xcalloc(1, sizeof(*connection));
	connection->server = server;
	connection->input = xmalloc(HTTP_REQUEST_HEAD_MAX);
	connection->watch = (struct loop_watch){.fd = fd, .callback = on_event, .data = connection};
	loop_timer_init(&connection->deadline, on_deadline, connection);
	if (loop_watch_add(server->loop, &connection->watch, EPOLLIN) < 0) {
		close(fd);
		free(connection->input);
		free(connection);
		return;
	}
	connection->interest = EPOLLIN;
	connection->next = server->connections;
	if (server->connections)
		server->connections->previous = connection;
	server->connections = connection;
	server->connection_count++;
	/* The first request must come whole within the deadline from the
	 * accept, as any later one must from its first byte. */
	connection->state = HTTP_READING;
	connection->request_started = true;
	connection->waiting_since_ms = loop_now_ms();
	arm_deadline(connection, connection->waiting_since_ms + HTTP_REQUEST_DEADLINE_MS);
	/* A client sends its request with its connect: read it now, before a
	 * flood of later connections could push this one out. */
	read_input(connection);
}
