/* The lines of one read of a task's pipe, framed once: when they were read,
 * which stream they came from, whose they are, and the whole lines
 * themselves (each ending in '\n', where the read left them). Every sink
 * of the task (output_sinks.h) is handed the same batch: nothing is copied
 * or formatted per sink until the sink writes its own form of it. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "supervisor/output/output_line.h"

struct output_batch {
	uint64_t time_ms; /* when read (CLOCK_REALTIME): one time for the batch */
	enum output_stream stream;
	const char *name; /* "web/app" */
	size_t name_length;
	const char *text; /* whole lines, each ending in '\n' */
	size_t length;
	/* The lines `text` holds. Counted by the sink that takes them first
	 * (corral's stdout, which may take fewer: output_sinks.h), so that a
	 * read of short lines is scanned once, not once more to count. */
	size_t lines;
	/* A line longer than this is not taken: the reader cuts it first. */
	size_t line_max;
};

/* The next line of `batch` from `*cursor` (the batch's text to begin
 * with): its start, `*length` without the '\n'; NULL after the last. */
static inline const char *output_batch_next_line(const struct output_batch *batch,
						 const char **cursor, size_t *length)
{
	const char *start = *cursor, *end = batch->text + batch->length;
	if (start >= end)
		return NULL;
	const char *newline = memchr(start, '\n', (size_t)(end - start));
	if (!newline)
		newline = end; /* not a batch's: every line ends in '\n' */
	*length = (size_t)(newline - start);
	*cursor = newline < end ? newline + 1 : end;
	return start;
}
