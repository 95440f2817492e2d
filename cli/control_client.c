/* The CLI's connection to a running corral. One request per connection;
 * replies are read as lines of any length (the status of a thousand tasks
 * is a few hundred KB on one line). */
#include "cli/control_client.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "cli/control_socket_trust.h"
#include "config/load/config_socket.h"
#include "supervisor/control/control_socket_places.h"

#define READ_CHUNK 65536

bool control_socket_option(struct control_socket_choice *choice, int option, const char *argument)
{
	if (option == 's')
		choice->socket_option = argument;
	else if (option == 'c')
		choice->config_path = argument;
	else
		return false;
	return true;
}

const char *control_socket_path(const struct control_socket_choice *choice)
{
	static struct control_socket_places places;
	static char from_config[sizeof(places.path[0])];
	const char *given = control_socket_given(choice->socket_option);

	if (given)
		return given;
	if (choice->config_path) {
		char error[PATH_MAX + 256];
		int found = config_read_socket(choice->config_path, from_config,
					       sizeof(from_config), error, sizeof(error));
		if (found < 0) {
			fprintf(stderr, "corral: cannot find the socket in %s: %s\n",
				choice->config_path, error);
			return NULL;
		}
		if (found)
			return from_config;
	}
	control_socket_places(&places);
	return control_socket_find(&places);
}

/* What a person can do about a failed connect. */
static const char *connect_advice(int error)
{
	switch (error) {
	case ENOENT:
	case ECONNREFUSED:
	case ENOTDIR:
		return " (is corral running? set --socket, CORRAL_SOCKET or -c CONFIG)";
	case EACCES:
	case EPERM:
		return " (only root, corral's own user and members of the config's control "
		       "group may connect)";
	default:
		return "";
	}
}

int control_socket_connect(const char *path)
{
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	if (!path)
		return -EINVAL; /* control_socket_path said why */
	size_t length = strlen(path);
	uid_t caller = geteuid();
	char error[PATH_MAX + 160];

	if (length == 0 || length >= sizeof(address.sun_path)) {
		fprintf(stderr,
			"corral: cannot connect to %s: a socket path must be 1 to %zu bytes\n",
			path, sizeof(address.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	int refused = control_socket_check_place(path, control_socket_is_default_place(path),
						 caller, error, sizeof(error));
	if (refused < 0) {
		fprintf(stderr, "corral: refusing %s: %s\n", path, error);
		return refused;
	}
	memcpy(address.sun_path, path, length + 1);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int failure = -errno;
		fprintf(stderr, "corral: cannot create a socket: %s\n", strerror(-failure));
		return failure;
	}
	while (connect(fd, (struct sockaddr *)&address, sizeof(address)) < 0) {
		if (errno == EINTR)
			continue;
		int failure = errno;
		fprintf(stderr, "corral: cannot connect to %s: %s%s\n", path, strerror(failure),
			connect_advice(failure));
		return -failure;
	}
	/* Before a byte is sent: the place may have been swapped since the
	 * check above, the server's credentials cannot. */
	refused = control_socket_check_peer(fd, caller, error, sizeof(error));
	if (refused < 0) {
		fprintf(stderr, "corral: refusing %s: %s\n", path, error);
		return refused;
	}
	return TAKE_FD(fd);
}

/* Returns 0 or -errno. MSG_NOSIGNAL: a server gone away is an error to
 * report, not a SIGPIPE to die of. */
static int send_all(int fd, const char *data, size_t length)
{
	while (length > 0) {
		ssize_t sent = send(fd, data, length, MSG_NOSIGNAL);

		if (sent < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += sent;
		length -= (size_t)sent;
	}
	return 0;
}

int control_connection_open(struct control_connection *connection, const char *path,
			    const struct control_request *request)
{
	char *line = control_request_encode(request);
	int result;

	*connection = (struct control_connection){.fd = -1, .interrupt_fd = -1, .output_fd = -1};
	if (!line) {
		fprintf(stderr, "corral: cannot encode the %s request\n",
			control_command_name(request->command));
		return -EINVAL;
	}
	int fd = control_socket_connect(path);
	if (fd < 0) {
		free(line);
		return fd;
	}
	connection->fd = fd;
	result = send_all(connection->fd, line, strlen(line));
	free(line);
	/* A server that refuses us (SO_PEERCRED) says why in one line and
	 * closes, perhaps before our request is even written: the reply is
	 * still worth reading, so only report the send error when there is
	 * none (control_connection_call). */
	if (result < 0) {
		connection->send_error = -result;
		shutdown(connection->fd, SHUT_WR);
	}
	return 0;
}

int control_connection_send(struct control_connection *connection,
			    const struct control_request *request)
{
	char *line = control_request_encode(request);
	if (!line)
		return -EINVAL;
	int result = send_all(connection->fd, line, strlen(line));
	free(line);
	return result;
}

void control_connection_close(struct control_connection *connection)
{
	if (connection->fd >= 0)
		close(connection->fd);
	free(connection->buffer);
	*connection = (struct control_connection){.fd = -1, .interrupt_fd = -1, .output_fd = -1};
}

/* Room for at least one more chunk after `end`: reclaims the lines already
 * handed out first, grows only for a line longer than the buffer. */
static int make_room(struct control_connection *connection)
{
	if (connection->start > 0) {
		memmove(connection->buffer, connection->buffer + connection->start,
			connection->end - connection->start);
		connection->end -= connection->start;
		connection->start = 0;
	}
	if (connection->capacity - connection->end >= READ_CHUNK)
		return 0;
	size_t capacity = connection->capacity ? connection->capacity * 2 : 2 * READ_CHUNK;
	char *grown = realloc(connection->buffer, capacity);

	if (!grown)
		return -ENOMEM;
	connection->buffer = grown;
	connection->capacity = capacity;
	return 0;
}

/* Waits for data, the interrupt fd, or the reader of output_fd going
 * away (`corral events -f | head -1` ends with head, not at the next
 * event). Returns 1 for data, 0 for an interrupt, -errno. */
static int wait_readable(struct control_connection *connection)
{
	/* Events 0 on the output: a pipe whose reader is gone still reports
	 * POLLERR, and a file or terminal reports nothing. */
	struct pollfd fds[3] = {
	    {.fd = connection->fd, .events = POLLIN},
	    {.fd = connection->interrupt_fd, .events = POLLIN},
	    {.fd = connection->output_fd, .events = 0},
	};

	if (connection->interrupt_fd < 0)
		return 1;
	for (;;) {
		if (poll(fds, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (fds[1].revents || (fds[2].revents & (POLLERR | POLLHUP)))
			return 0;
		if (fds[0].revents)
			return 1;
	}
}

/* Reads more bytes. Returns 1 for data, 0 at the end of the stream, or a
 * read result to pass on. */
static int fill(struct control_connection *connection, enum control_read_result *stop)
{
	int result = make_room(connection);
	ssize_t got;

	if (result == 0)
		result = wait_readable(connection);
	if (result == 0) {
		*stop = CONTROL_READ_INTERRUPTED;
		return -1;
	}
	if (result < 0) {
		fprintf(stderr, "corral: reading from corral: %s\n", strerror(-result));
		*stop = CONTROL_READ_FAILED;
		return -1;
	}
	do
		got = read(connection->fd, connection->buffer + connection->end,
			   connection->capacity - connection->end);
	while (got < 0 && errno == EINTR);
	/* A reset after the last reply (the server closed with our request
	 * unread) ends the stream like a close: the kernel hands out all the
	 * data before the error. */
	if (got == 0 || (got < 0 && errno == ECONNRESET)) {
		connection->closed = true;
		return 0;
	}
	if (got < 0) {
		fprintf(stderr, "corral: reading from corral: %m\n");
		*stop = CONTROL_READ_FAILED;
		return -1;
	}
	connection->end += (size_t)got;
	return 1;
}

/* The next line in the buffer, NUL-terminated in place. Returns its length
 * via *length, or NULL when the stream ended or stopped (*stop says how). */
static char *next_line(struct control_connection *connection, size_t *length,
		       enum control_read_result *stop)
{
	size_t scanned = connection->start; /* no need to look at a byte twice */

	for (;;) {
		char *newline = connection->buffer ? memchr(connection->buffer + scanned, '\n',
							    connection->end - scanned)
						   : NULL;

		if (newline) {
			char *line = connection->buffer + connection->start;

			*newline = '\0';
			*length = (size_t)(newline - line);
			connection->start = (size_t)(newline - connection->buffer) + 1;
			return line;
		}
		if (connection->closed) {
			/* A last line without its newline is still a line. */
			if (connection->start == connection->end) {
				*stop = CONTROL_READ_CLOSED;
				return NULL;
			}
			char *line = connection->buffer + connection->start;

			*length = connection->end - connection->start;
			connection->buffer[connection->end] = '\0'; /* make_room left space */
			connection->start = connection->end;
			return line;
		}
		scanned = connection->end - connection->start;
		int result = fill(connection, stop);

		if (result < 0)
			return NULL;
		scanned += connection->start; /* make_room may have moved the lines */
	}
}

enum control_read_result control_connection_read(struct control_connection *connection,
						 json_t **reply, const char **raw)
{
	enum control_read_result stop = CONTROL_READ_FAILED;
	json_error_t error;
	size_t length;
	char *line;

	*reply = NULL;
	do
		line = next_line(connection, &length, &stop);
	while (line && length == 0); /* blank lines carry nothing */
	if (!line)
		return stop;
	static const char accepted[] = "{\"ok\":true";
	if (connection->raw_when_ok && raw && length >= sizeof(accepted) - 1 &&
	    memcmp(line, accepted, sizeof(accepted) - 1) == 0) {
		*raw = line;
		return CONTROL_READ_LINE;
	}
	/* A task's output may hold NUL bytes, which the server sends as
	 * \u0000: taken, and printed by length. */
	*reply = json_loadb(line, length, JSON_ALLOW_NUL, &error);
	if (!*reply || !json_is_object(*reply)) {
		fprintf(stderr, "corral: corral sent a line that is not a JSON object: %s\n",
			*reply ? "another JSON value" : error.text);
		json_decref(*reply);
		*reply = NULL;
		return CONTROL_READ_FAILED;
	}
	if (raw)
		*raw = line;
	return CONTROL_READ_LINE;
}

void control_connection_print_refusal(const json_t *reply)
{
	const char *error = json_string_value(json_object_get(reply, "error"));

	fprintf(stderr, "corral: %s\n", error ? error : "refused, without saying why");
}

static int call(struct control_connection *connection, const char *path,
		const struct control_request *request, json_t **reply, const char **raw,
		bool raw_when_ok)
{
	const json_t *ok;

	*reply = NULL;
	if (control_connection_open(connection, path, request) < 0)
		return -1;
	connection->raw_when_ok = raw_when_ok;
	switch (control_connection_read(connection, reply, raw)) {
	case CONTROL_READ_LINE:
		break;
	case CONTROL_READ_CLOSED:
		if (connection->send_error)
			fprintf(stderr, "corral: cannot send the request to %s: %s\n", path,
				strerror(connection->send_error));
		else
			fprintf(stderr,
				"corral: %s: corral closed the connection without replying\n",
				path);
		goto fail;
	case CONTROL_READ_INTERRUPTED:
	case CONTROL_READ_FAILED:
		goto fail;
	}
	if (!*reply)
		return 0; /* raw_when_ok: accepted, not parsed */
	ok = json_object_get(*reply, "ok");
	if (json_is_true(ok))
		return 0;
	if (json_is_false(ok))
		control_connection_print_refusal(*reply);
	else
		fprintf(stderr, "corral: corral's reply has no \"ok\": is %s a corral socket?\n",
			path);
fail:
	json_decref(*reply);
	*reply = NULL;
	control_connection_close(connection);
	return -1;
}

int control_connection_call(struct control_connection *connection, const char *path,
			    const struct control_request *request, json_t **reply, const char **raw)
{
	return call(connection, path, request, reply, raw, false);
}

int control_connection_call_raw(struct control_connection *connection, const char *path,
				const struct control_request *request, json_t **reply,
				const char **raw)
{
	return call(connection, path, request, reply, raw, true);
}
