/* corral's stdout, where task output goes as "group/task | line".
 *
 * Never blocks the loop: when stdout is a pipe, socket or terminal it is made
 * non-blocking and fed from a bounded buffer as it drains (EPOLLOUT); when
 * the buffer is full, whole lines are dropped and counted, and the count is
 * reported on stderr once the reader catches up (and at exit). A regular
 * file or /dev/null cannot stall, so it is written directly. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervisor/loop.h"

struct output_sink {
	struct loop *loop;
	struct loop_watch watch;
	bool pollable;       /* epoll accepts the fd: buffer and wait for EPOLLOUT */
	bool waiting_for_writable;
	int saved_flags;     /* fd flags to restore at close */
	char *buffer;
	size_t capacity;
	size_t start, end;   /* pending bytes are buffer[start..end) */
	uint64_t dropped_bytes;
	uint64_t dropped_lines;
};

void output_sink_open(struct output_sink *sink, struct loop *loop, int fd, size_t capacity);

/* Writes "name | text\n" as one record, or drops it whole. */
void output_sink_write_line(struct output_sink *sink, const char *name, const char *text,
			    size_t length);

/* At exit: waits for stdout to take what is buffered, reports drops,
 * restores the fd's flags. */
void output_sink_close(struct output_sink *sink);
