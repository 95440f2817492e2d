#include "cli/exec_relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "base/xmalloc.h"

#define STREAM_BUFFER (64 * 1024)

struct stream {
	int from, to;
	bool reading;             /* `from` may still give bytes */
	bool close_to_at_end;     /* the command's stdin pipe: EOF goes on as EOF */
	bool close_from_on_error; /* its stdout or stderr pipe: EPIPE goes on */
	size_t start, end;        /* what `buffer` holds for `to` */
	char buffer[STREAM_BUFFER];
};

enum { INPUT, OUTPUT, ERRORS, STREAM_COUNT };

static void set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void stop_reading(struct stream *stream)
{
	stream->reading = false;
	if (stream->end == stream->start && stream->close_to_at_end)
		close_fd(&stream->to);
}

/* `to` takes nothing more. Where the other side is a pipe of ours alone,
 * closing it tells the command as the same error would have. */
static void stop_writing(struct stream *stream)
{
	stream->start = stream->end = 0;
	stream->reading = false;
	if (stream->close_to_at_end)
		close_fd(&stream->to);
	if (stream->close_from_on_error)
		close_fd(&stream->from);
}

static void fill(struct stream *stream)
{
	ssize_t got = read(stream->from, stream->buffer, sizeof(stream->buffer));
	if (got > 0) {
		stream->start = 0;
		stream->end = (size_t)got;
	} else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
		stop_reading(stream); /* EOF; EIO from a pty whose side closed */
	}
}

static void drain(struct stream *stream)
{
	ssize_t written =
	    write(stream->to, stream->buffer + stream->start, stream->end - stream->start);
	if (written < 0) {
		if (errno != EINTR && errno != EAGAIN)
			stop_writing(stream);
		return;
	}
	stream->start += (size_t)written;
	if (stream->start == stream->end) {
		stream->start = stream->end = 0;
		if (!stream->reading)
			stop_reading(stream);
	}
}

static bool has_bytes(const struct stream *stream)
{
	return stream->end > stream->start && stream->to >= 0;
}

/* What the command wrote before its exit is in the pipe (a write that
 * returned is there): read until nothing more comes now. */
static void flush_output(struct stream *stream)
{
	while (stream->from >= 0 && stream->to >= 0) {
		while (has_bytes(stream)) {
			struct pollfd ready = {stream->to, POLLOUT, 0};
			if (poll(&ready, 1, -1) < 0 && errno != EINTR)
				return;
			drain(stream);
		}
		if (!stream->reading || stream->to < 0)
			return;
		ssize_t got = read(stream->from, stream->buffer, sizeof(stream->buffer));
		if (got <= 0 && !(got < 0 && errno == EINTR))
			return;
		stream->start = 0;
		stream->end = got > 0 ? (size_t)got : 0;
	}
}

static void pass_window_size(int tty)
{
	struct winsize window;
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &window) == 0 ||
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &window) == 0)
		ioctl(tty, TIOCSWINSZ, &window);
}

void exec_relay_run(int socket_fd, struct exec_relay_fds *fds, volatile int *window_changed)
{
	struct stream *streams = xcalloc(STREAM_COUNT, sizeof(*streams));
	if (fds->tty >= 0) {
		streams[INPUT] = (struct stream){.from = STDIN_FILENO, .to = fds->tty};
		streams[OUTPUT] = (struct stream){.from = fds->tty, .to = STDOUT_FILENO};
		streams[ERRORS] = (struct stream){.from = -1, .to = -1};
	} else {
		streams[INPUT] = (struct stream){.from = fds->stdin_pipe >= 0 ? STDIN_FILENO : -1,
						 .to = fds->stdin_pipe,
						 .close_to_at_end = true};
		streams[OUTPUT] = (struct stream){
		    .from = fds->stdout_pipe, .to = STDOUT_FILENO, .close_from_on_error = true};
		streams[ERRORS] = (struct stream){
		    .from = fds->stderr_pipe, .to = STDERR_FILENO, .close_from_on_error = true};
	}
	for (int i = 0; i < STREAM_COUNT; i++) {
		streams[i].reading = streams[i].from >= 0 && streams[i].to >= 0;
		/* Ours alone (not our stdio, which we share with our parent). */
		if (i != INPUT && streams[i].from >= 0)
			set_nonblocking(streams[i].from);
	}
	if (streams[INPUT].to >= 0)
		set_nonblocking(streams[INPUT].to);

	for (;;) {
		if (fds->tty >= 0 && *window_changed) {
			*window_changed = 0;
			pass_window_size(fds->tty);
		}
		struct pollfd polled[1 + STREAM_COUNT] = {{socket_fd, POLLIN, 0}};
		for (int i = 0; i < STREAM_COUNT; i++) {
			struct stream *stream = &streams[i];
			polled[1 + i].fd = -1;
			if (has_bytes(stream))
				polled[1 + i] = (struct pollfd){stream->to, POLLOUT, 0};
			else if (stream->reading)
				polled[1 + i] = (struct pollfd){stream->from, POLLIN, 0};
		}
		if (poll(polled, 1 + STREAM_COUNT, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < STREAM_COUNT; i++) {
			if (!polled[1 + i].revents)
				continue;
			if (polled[1 + i].events == POLLOUT)
				drain(&streams[i]);
			else
				fill(&streams[i]);
		}
		if (polled[0].revents)
			break;
	}
	flush_output(&streams[OUTPUT]);
	flush_output(&streams[ERRORS]);
	/* The fds that are ours: the pipes still open, or the pty (one fd,
	 * two streams, never closed by them). */
	if (fds->tty >= 0) {
		close(fds->tty);
	} else {
		close_fd(&streams[INPUT].to);
		close_fd(&streams[OUTPUT].from);
		close_fd(&streams[ERRORS].from);
	}
	fds->stdin_pipe = fds->stdout_pipe = fds->stderr_pipe = fds->tty = -1;
	free(streams);
}
