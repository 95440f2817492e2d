/* A bounded ring of recent lines with their times: a task's recent output
 * (`corral logs`) and the recent events (`corral events`). Oldest lines are
 * dropped to make room; memory is allocated on the first line only, so
 * silent tasks cost nothing. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "supervisor/output/output_sinks.h"

struct line_ring {
	/* records: [uint64 time_ms][uint32 tag << 30 | several << 29 | length]
	 * then [text] for one line, or [uint32 lines][lines joined by '\n'] */
	char *bytes;
	size_t capacity;
	size_t head; /* offset of the oldest record */
	size_t used;
	size_t count; /* lines held */
};

void line_ring_init(struct line_ring *ring, size_t capacity);
void line_ring_free(struct line_ring *ring);

/* A new capacity, keeping the newest lines that fit (reload). */
void line_ring_resize(struct line_ring *ring, size_t capacity);

/* A line's tag: a number from 0 to 3 kept with it (a task's output
 * stream). */
#define LINE_RING_TAG_MAX 3

/* Longer lines are cut to a quarter of the capacity. */
void line_ring_append(struct line_ring *ring, uint64_t time_ms, unsigned tag, const char *text,
		      size_t length);

/* `lines` lines read together, each ending in '\n' in `text`: one record
 * for them all (up to a quarter of the capacity; more are split at line
 * boundaries). They come back one by one, as if appended one by one. */
void line_ring_append_lines(struct line_ring *ring, uint64_t time_ms, unsigned tag,
			    const char *text, size_t length, size_t lines);

/* A task's ring as one of its sinks (output_sinks.h): each batch is one
 * record, tagged with its stream. */
extern const struct output_sink_ops line_ring_sink_ops;

typedef void line_ring_visit_fn(void *context, uint64_t time_ms, unsigned tag, const char *text,
				size_t length);

/* Calls `visit` for the last `tail` lines (0: all), oldest first. */
void line_ring_visit(const struct line_ring *ring, size_t tail, line_ring_visit_fn *visit,
		     void *context);
