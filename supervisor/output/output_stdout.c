#include "supervisor/output/output_stdout.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "base/line_scan.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "supervisor/output/output_frame.h"

/* What a slow reader of corral's stdout gets at exit before the last lines
 * are dropped: long enough for any live reader, bounded for a dead one. */
#define CLOSE_BUDGET_MS 5000

static size_t pending_bytes(const struct output_stdout *sink)
{
	return sink->end - sink->start;
}

static void drop_pending(struct output_stdout *sink)
{
	const char *cursor = sink->buffer + sink->start, *end = sink->buffer + sink->end;
	while ((cursor = memchr(cursor, '\n', (size_t)(end - cursor)))) {
		sink->dropped_lines++;
		cursor++;
	}
	sink->dropped_bytes += pending_bytes(sink);
	sink->start = sink->end = 0;
}

/* Writes what stdout takes now. */
static void write_pending(struct output_stdout *sink)
{
	while (pending_bytes(sink)) {
		ssize_t written =
		    write(sink->watch.fd, sink->buffer + sink->start, pending_bytes(sink));
		if (written < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			/* stdout is gone (EPIPE...): nobody can read task output
			 * any more; discard rather than spin or hold tasks. */
			if (!sink->broken)
				log_message("cannot write task output to stdout: %s; dropping it "
					    "from now on",
					    strerror(errno));
			sink->broken = true;
			drop_pending(sink);
			return;
		}
		sink->start += (size_t)written;
	}
	sink->start = sink->end = 0;
}

static void want_writable(struct output_stdout *sink, bool want)
{
	if (!sink->pollable || sink->waiting_for_writable == want)
		return;
	loop_watch_modify(sink->loop, &sink->watch, want ? EPOLLOUT : 0);
	sink->waiting_for_writable = want;
}

/* Readers held for room read again once half the buffer is free: stdout
 * keeps something to take while they refill it. */
static void resume_waiters(struct output_stdout *sink)
{
	struct output_stdout_waiter *waiter = sink->waiters;
	sink->waiters = NULL;
	sink->waiters_tail = &sink->waiters;
	/* In the order they waited; a waiter may queue itself again. */
	while (waiter) {
		struct output_stdout_waiter *next = waiter->next;
		waiter->next = NULL;
		waiter->queued = false;
		waiter->resume(waiter);
		waiter = next;
	}
}

static void on_writable(struct loop_watch *watch, uint32_t events)
{
	struct output_stdout *sink = watch->data;
	write_pending(sink);
	if (pending_bytes(sink) == 0)
		want_writable(sink, false);
	if (pending_bytes(sink) <= sink->capacity / 2)
		resume_waiters(sink);
}

void output_stdout_open(struct output_stdout *sink, struct loop *loop, int fd, size_t capacity)
{
	memset(sink, 0, sizeof(*sink));
	sink->loop = loop;
	sink->capacity = capacity;
	sink->buffer = xmalloc(capacity);
	sink->waiters_tail = &sink->waiters;
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

void output_stdout_adopt(struct output_stdout *sink, const char *pending, size_t length,
			 int saved_flags)
{
	sink->saved_flags = saved_flags;
	if (length > sink->capacity) {
		sink->buffer = xreallocarray(sink->buffer, length, 1);
		sink->capacity = length;
	}
	memcpy(sink->buffer, pending, length);
	sink->start = 0;
	sink->end = length;
	if (length)
		want_writable(sink, true);
}

void output_stdout_flush(struct output_stdout *sink)
{
	if (sink->waiting_for_writable || !pending_bytes(sink))
		return; /* EPOLLOUT will take it, in order */
	write_pending(sink);
	if (pending_bytes(sink))
		want_writable(sink, true);
}

static void compact(struct output_stdout *sink)
{
	if (sink->start == 0)
		return;
	memmove(sink->buffer, sink->buffer + sink->start, pending_bytes(sink));
	sink->end -= sink->start;
	sink->start = 0;
}

/* Waits until stdout takes something, within the close budget. */
static bool wait_at_close(struct output_stdout *sink)
{
	uint64_t now = loop_now_ms();
	if (now >= sink->close_deadline_ms)
		return false;
	struct pollfd poll_fd = {.fd = sink->watch.fd, .events = POLLOUT};
	if (poll(&poll_fd, 1, (int)(sink->close_deadline_ms - now)) < 0 && errno != EINTR)
		return false;
	write_pending(sink);
	return true;
}

/* Makes room for `record` bytes: true when there is. */
static bool make_room(struct output_stdout *sink, size_t record)
{
	if (sink->capacity - pending_bytes(sink) >= record)
		return true;
	/* Full: stdout may take some now. A file or /dev/null always does
	 * (the write may block a moment, but never on a reader). */
	write_pending(sink);
	while (sink->closing && !sink->broken && sink->capacity - pending_bytes(sink) < record)
		if (!wait_at_close(sink))
			break;
	return sink->capacity - pending_bytes(sink) >= record;
}

enum room { ROOM, LINE_DROPPED, FULL };

/* The buffer's end has no room for `record` bytes, or stdout is gone. */
static enum room find_room(struct output_stdout *sink, size_t record)
{
	if (!make_room(sink, record)) {
		if (!sink->broken && !sink->closing && record <= sink->capacity)
			return FULL;
	} else if (!sink->broken) {
		if (sink->capacity - sink->end < record)
			compact(sink);
		return ROOM;
	}
	sink->dropped_bytes += record;
	sink->dropped_lines++;
	return LINE_DROPPED;
}

/* Adds the lines of `batch` to the buffer, "name | line\n" or as
 * sink->format says, and cuts `batch` to those it took: all, unless a line
 * is longer than batch->line_max, or the buffer is full and stdout takes
 * nothing now (never once stdout is gone or closing: then lines are
 * dropped, and count as taken). The reader keeps the rest and waits
 * (output_stdout_wait). */
static void take_lines(void *pointer, struct output_batch *batch)
{
	struct output_stdout *sink = pointer;
	struct output_frame frame;
	output_frame_open(&frame, sink->format, batch->name, batch->name_length, batch->stream,
			  batch->time_ms);
	struct line_scan scan = {0};
	const char *text = batch->text;
	const char *cursor = text, *end = text + batch->length;
	/* Kept in locals: stores through `out` could otherwise alias the
	 * sink's fields and have them read again for every line. */
	char *buffer = sink->buffer;
	size_t capacity = sink->capacity, used_end = sink->end, taken = 0;
	size_t line_max = batch->line_max;
	bool broken = sink->broken;
	while (cursor < end) {
		const char *newline = line_scan_next(&scan, cursor, end);
		size_t line_length = (size_t)(newline - cursor);
		if (line_length > line_max)
			break;
		size_t record = output_frame_bound(&frame, line_length);
		bool slack = capacity - used_end >= record + OUTPUT_FRAME_SLACK;
		if (broken || (!slack && capacity - used_end < record)) {
			sink->end = used_end;
			enum room room = find_room(sink, record);
			used_end = sink->end;
			broken = sink->broken;
			if (room == FULL)
				break;
			if (room == LINE_DROPPED) {
				cursor = newline + 1;
				taken++;
				continue;
			}
			slack = capacity - used_end >= record + OUTPUT_FRAME_SLACK;
		}
		used_end +=
		    output_frame_write(&frame, buffer + used_end, slack, cursor, line_length, end);
		cursor = newline + 1;
		taken++;
	}
	sink->end = used_end;
	output_frame_close(&frame);
	batch->lines = taken;
	batch->length = (size_t)(cursor - text);
}

const struct output_sink_ops output_stdout_sink_ops = {.lines = take_lines};

void output_stdout_wait(struct output_stdout *sink, struct output_stdout_waiter *waiter)
{
	if (waiter->queued)
		return;
	waiter->queued = true;
	waiter->next = NULL;
	*sink->waiters_tail = waiter;
	sink->waiters_tail = &waiter->next;
	/* Room comes when stdout drains: make sure that is watched. */
	if (pending_bytes(sink))
		want_writable(sink, true);
}

void output_stdout_cancel_wait(struct output_stdout *sink, struct output_stdout_waiter *waiter)
{
	if (!waiter->queued)
		return;
	struct output_stdout_waiter **link = &sink->waiters;
	while (*link != waiter)
		link = &(*link)->next;
	*link = waiter->next;
	if (sink->waiters_tail == &waiter->next)
		sink->waiters_tail = link;
	waiter->next = NULL;
	waiter->queued = false;
}

void output_stdout_begin_close(struct output_stdout *sink)
{
	sink->closing = true;
	sink->close_deadline_ms = loop_now_ms() + CLOSE_BUDGET_MS;
}

void output_stdout_close(struct output_stdout *sink)
{
	if (!sink->buffer)
		return;
	if (!sink->closing)
		output_stdout_begin_close(sink);
	/* Give a slow reader a bounded last chance, rather than losing the
	 * final lines or hanging forever on a reader that went away. */
	write_pending(sink);
	while (pending_bytes(sink) && !sink->broken && wait_at_close(sink))
		;
	drop_pending(sink);
	if (sink->dropped_bytes)
		log_message("%s: dropped %llu lines (%llu bytes) of task output",
			    sink->broken ? "stdout was gone"
					 : "stdout did not take the last task output in time",
			    (unsigned long long)sink->dropped_lines,
			    (unsigned long long)sink->dropped_bytes);
	if (sink->pollable) {
		loop_watch_remove(sink->loop, &sink->watch);
		fcntl(sink->watch.fd, F_SETFL, sink->saved_flags);
	}
	free(sink->buffer);
	sink->buffer = NULL;
}
