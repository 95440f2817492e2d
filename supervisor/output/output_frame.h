/* How a task's line looks on corral's stdout: what goes before and after
 * it, in each of the formats of `log_format`.
 *
 * Lines read together share their time, name and stream, so everything
 * but the line itself (the prefix) is made once per batch; a line then
 * costs a copy of the prefix and a copy (or, in JSON, an escape) of
 * itself. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "supervisor/output/output_line.h"

/* How a line looks on corral's stdout (`corral run --log-format`, the
 * config's `log_format`). */
enum output_format {
	OUTPUT_FORMAT_PLAIN, /* web/app | line; from a separate stderr: web/app stderr | line */
	OUTPUT_FORMAT_TIMESTAMPED, /* 2026-11-24T10:00:00.123Z web/app | line */
	/* {"time":1763978400.123,"group":"web","task":"app","line":"line"}, with
	 * "stream":"stdout" or "stderr" before "line" when the streams are apart */
	OUTPUT_FORMAT_JSON,
};

struct output_frame {
	char *prefix;
	size_t prefix_length;
	bool json;
	/* The most a line of `length` bytes takes: fixed + per_byte * length. */
	size_t bound_fixed, bound_per_byte;
	char small_prefix[512];
};

void output_frame_open(struct output_frame *frame, enum output_format format, const char *name,
		       size_t name_length, enum output_stream stream, uint64_t time_ms);
void output_frame_close(struct output_frame *frame);

static inline size_t output_frame_bound(const struct output_frame *frame, size_t length)
{
	return frame->bound_fixed + frame->bound_per_byte * length;
}

/* Copies of at most this many bytes are made as one fixed-size copy (two
 * vector moves instead of a call to memcpy): the prefix and a short line,
 * when `out` has this much room past the line's bound and the line is
 * followed by this many readable bytes. */
#define OUTPUT_FRAME_SLACK 32

/* A line in JSON, escaped; output_frame_write calls it. */
size_t output_frame_write_json(const struct output_frame *frame, char *out, const char *line,
			       size_t length);

/* Writes the line (`length` bytes, then its '\n') in its frame at `out`,
 * which has room for output_frame_bound(); `slack`: and OUTPUT_FRAME_SLACK
 * more. `text_end`: where the readable text ends. Returns the bytes
 * written. */
static inline size_t output_frame_write(const struct output_frame *frame, char *out, bool slack,
					const char *line, size_t length, const char *text_end)
{
	if (frame->json)
		return output_frame_write_json(frame, out, line, length);
	size_t prefix_length = frame->prefix_length;
	if (slack && prefix_length <= OUTPUT_FRAME_SLACK)
		memcpy(out, frame->prefix,
		       OUTPUT_FRAME_SLACK); /* the bytes past it are overwritten */
	else
		memcpy(out, frame->prefix, prefix_length);
	if (slack && length < OUTPUT_FRAME_SLACK && text_end - line >= OUTPUT_FRAME_SLACK)
		memcpy(out + prefix_length, line, OUTPUT_FRAME_SLACK);
	else
		memcpy(out + prefix_length, line, length + 1); /* with its newline */
	return prefix_length + length + 1;
}
