/* corral's stdout, where task output goes as "group/task | line".
 *
 * Lossless and never blocking the loop: when stdout is a pipe, socket or
 * terminal it is made non-blocking and fed from a bounded buffer as it
 * drains (EPOLLOUT). When the buffer is full, a line is refused: its task's
 * output stops being read (output_stdout_wait) until stdout takes the buffer,
 * so the task blocks in write() as under any slow pipe, and only the tasks
 * whose lines wait are held. A regular file or /dev/null cannot stall, so
 * it is written directly when the buffer fills. Lines are gathered and
 * written in one write() per batch (output_stdout_flush), not one per line.
 *
 * Lines are dropped (and counted, and reported) only once stdout is gone
 * (EPIPE), or when corral exits and stdout does not take its last lines
 * within a bounded time. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/loop.h"
#include "supervisor/output/output_frame.h"
#include "supervisor/output/output_line.h"
#include "supervisor/output/output_sinks.h"

/* A reader of task output that waits for room (task_output.c). */
struct output_stdout_waiter {
	struct output_stdout_waiter *next;
	bool queued;
	void (*resume)(struct output_stdout_waiter *waiter);
};

struct output_stdout {
	struct loop *loop;
	enum output_format format;
	struct loop_watch watch;
	bool pollable; /* epoll accepts the fd: buffer and wait for EPOLLOUT */
	bool waiting_for_writable;
	bool broken;  /* stdout is gone: lines are dropped and counted */
	bool closing; /* corral exits: wait (bounded) instead of refusing */
	uint64_t close_deadline_ms;
	int saved_flags; /* fd flags to restore at close */
	char *buffer;
	size_t capacity;
	size_t start, end; /* pending bytes are buffer[start..end) */
	struct output_stdout_waiter *waiters, **waiters_tail;
	uint64_t dropped_bytes;
	uint64_t dropped_lines;
};

void output_stdout_open(struct output_stdout *sink, struct loop *loop, int fd, size_t capacity);

/* corral's stdout as the first of a task's sinks (output_sinks.h): it
 * takes the lines of a batch as "name | line\n" (or as sink->format says)
 * while the buffer has room, stops before a line longer than the batch's
 * line_max, and cuts the batch to what it took; the reader keeps the rest
 * and waits (output_stdout_wait). Never refused once stdout is gone (the
 * lines are dropped, and counted) or corral is closing (it waits, bounded). */
extern const struct output_sink_ops output_stdout_sink_ops;

/* `corral upgrade`: the bytes the corral before the exec had not written
 * yet go first, once stdout is writable (nothing is written before the
 * loop runs); `saved_flags` are stdout's flags from before either. */
void output_stdout_adopt(struct output_stdout *sink, const char *pending, size_t length,
			 int saved_flags);

/* Writes what the buffer holds, as far as stdout takes it now. */
void output_stdout_flush(struct output_stdout *sink);

/* `waiter->resume` is called, from the loop, once the buffer has room. */
void output_stdout_wait(struct output_stdout *sink, struct output_stdout_waiter *waiter);
void output_stdout_cancel_wait(struct output_stdout *sink, struct output_stdout_waiter *waiter);

/* corral is exiting: from now on lines are not refused, but waited for
 * (at most a few seconds in all), then dropped and counted. */
void output_stdout_begin_close(struct output_stdout *sink);

/* At exit: waits for stdout to take what is buffered, reports drops,
 * restores the fd's flags. */
void output_stdout_close(struct output_stdout *sink);
