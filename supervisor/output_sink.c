#include "supervisor/output_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "supervisor/log.h"
#include "config/xmalloc.h"

static size_t pending_bytes(const struct output_sink *sink)
{
	return sink->end - sink->start;
}

static void report_drops(struct output_sink *sink)
{
	if (!sink->dropped_bytes)
		return;
	log_message("stdout could not keep up: dropped %llu lines (%llu bytes) of task output",
		    (unsigned long long)sink->dropped_lines,
		    (unsigned long long)sink->dropped_bytes);
	sink->dropped_bytes = 0;
	sink->dropped_lines = 0;
}

/* Writes what stdout takes now; returns false on a hard error. */
static bool write_pending(struct output_sink *sink)
{
	while (pending_bytes(sink)) {
		ssize_t written = write(sink->watch.fd, sink->buffer + sink->start,
					pending_bytes(sink));
		if (written < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return true;
			/* stdout is gone (EPIPE...): nobody can read task output
			 * any more; discard rather than spin. */
			sink->dropped_bytes += pending_bytes(sink);
			sink->start = sink->end = 0;
			return false;
		}
		sink->start += (size_t)written;
	}
	sink->start = sink->end = 0;
	return true;
}

static void want_writable(struct output_sink *sink, bool want)
{
	if (!sink->pollable || sink->waiting_for_writable == want)
		return;
	loop_watch_modify(sink->loop, &sink->watch, want ? EPOLLOUT : 0);
	sink->waiting_for_writable = want;
}

static void on_writable(struct loop_watch *watch, uint32_t events)
{
	struct output_sink *sink = watch->data;
	write_pending(sink);
	if (pending_bytes(sink) == 0) {
		want_writable(sink, false);
		report_drops(sink);
	}
}

void output_sink_open(struct output_sink *sink, struct loop *loop, int fd, size_t capacity)
{
	memset(sink, 0, sizeof(*sink));
	sink->loop = loop;
	sink->capacity = capacity;
	sink->buffer = xmalloc(capacity);
	sink->watch.fd = fd;
	sink->watch.callback = on_writable;
	sink->watch.data = sink;
	sink->saved_flags = fcntl(fd, F_GETFL);
	/* epoll refuses regular files with EPERM: those never block. */
	if (sink->saved_flags >= 0 && loop_watch_add(loop, &sink->watch, 0) == 0) {
		sink->pollable = true;
		fcntl(fd, F_SETFL, sink->saved_flags | O_NONBLOCK);
	}
}

static void compact(struct output_sink *sink)
{
	if (sink->start == 0)
		return;
	memmove(sink->buffer, sink->buffer + sink->start, pending_bytes(sink));
	sink->end -= sink->start;
	sink->start = 0;
}

void output_sink_write_line(struct output_sink *sink, const char *name, const char *text,
			    size_t length)
{
	size_t name_length = strlen(name);
	size_t record = name_length + 3 + length + 1;
	if (sink->capacity - pending_bytes(sink) < record) {
		sink->dropped_bytes += record;
		sink->dropped_lines++;
		return;
	}
	if (sink->capacity - sink->end < record)
		compact(sink);
	char *out = sink->buffer + sink->end;
	memcpy(out, name, name_length);
	memcpy(out + name_length, " | ", 3);
	memcpy(out + name_length + 3, text, length);
	out[record - 1] = '\n';
	sink->end += record;

	if (sink->waiting_for_writable)
		return; /* EPOLLOUT will take it, in order */
	write_pending(sink);
	if (pending_bytes(sink))
		want_writable(sink, true);
}

void output_sink_close(struct output_sink *sink)
{
	if (!sink->buffer)
		return;
	/* Give a slow reader a bounded last chance, rather than losing the
	 * final lines or hanging forever on a reader that went away. */
	for (int tries = 0; pending_bytes(sink) && tries < 50; tries++) {
		struct pollfd poll_fd = {.fd = sink->watch.fd, .events = POLLOUT};
		if (poll(&poll_fd, 1, 100) < 0 && errno != EINTR)
			break;
		if (!write_pending(sink))
			break;
	}
	sink->dropped_bytes += pending_bytes(sink);
	report_drops(sink);
	if (sink->pollable) {
		loop_watch_remove(sink->loop, &sink->watch);
		fcntl(sink->watch.fd, F_SETFL, sink->saved_flags);
	}
	free(sink->buffer);
	sink->buffer = NULL;
}
