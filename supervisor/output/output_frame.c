#include "supervisor/output/output_frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json_text.h"
#include "base/xmalloc.h"

/* "2026-11-24T10:00:00.123Z ", 25 bytes. */
#define TIMESTAMP_LENGTH 25

static size_t write_timestamp(char *out, uint64_t time_ms)
{
	time_t seconds = (time_t)(time_ms / 1000);
	struct tm utc;
	char text[32];
	if (!gmtime_r(&seconds, &utc))
		memset(&utc, 0, sizeof(utc));
	size_t length = strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
	length += (size_t)snprintf(text + length, sizeof(text) - length, ".%03uZ ",
				   (unsigned)(time_ms % 1000));
	memcpy(out, text, length);
	return length;
}

/* {"time":S.mmm,"group":"G","task":"T","line":", "stream" before "line"
 * when known: the fields of `corral logs --json`, for Docker's json-file,
 * Kubernetes and shippers. The line and "}\n follow. */
static size_t write_json_prefix(char *out, const char *name, size_t name_length,
				enum output_stream stream, uint64_t time_ms)
{
	const char *slash = memchr(name, '/', name_length);
	size_t group_length = slash ? (size_t)(slash - name) : name_length;
	size_t used =
	    (size_t)sprintf(out, "{\"time\":%llu.%03u,\"group\":\"",
			    (unsigned long long)(time_ms / 1000), (unsigned)(time_ms % 1000));
	used += json_escape_into(out + used, name, group_length);
	memcpy(out + used, "\",\"task\":\"", 10);
	used += 10;
	if (slash)
		used += json_escape_into(out + used, slash + 1, name_length - group_length - 1);
	const char *stream_name = output_stream_name(stream);
	if (stream_name)
		used += (size_t)sprintf(out + used, "\",\"stream\":\"%s", stream_name);
	memcpy(out + used, "\",\"line\":\"", 10);
	return used + 10;
}

/* " stderr" after the name of a line from a separate stderr. */
#define STDERR_MARK        " stderr"
#define STDERR_MARK_LENGTH (sizeof(STDERR_MARK) - 1)

void output_frame_open(struct output_frame *frame, enum output_format format, const char *name,
		       size_t name_length, enum output_stream stream, uint64_t time_ms)
{
	frame->json = format == OUTPUT_FORMAT_JSON;
	bool marked = stream == OUTPUT_STREAM_STDERR && !frame->json;
	size_t marked_name = name_length + (marked ? STDERR_MARK_LENGTH : 0);
	/* The bounds of the per-line format, kept as they were. */
	if (frame->json) {
		frame->bound_fixed = json_escaped_max(marked_name) + 96;
		frame->bound_per_byte = json_escaped_max(1);
	} else {
		frame->bound_fixed = (format == OUTPUT_FORMAT_TIMESTAMPED ? TIMESTAMP_LENGTH : 0) +
				     marked_name + 3 + 1;
		frame->bound_per_byte = 1;
	}
	size_t bound = json_escaped_max(name_length) + 96 + TIMESTAMP_LENGTH + STDERR_MARK_LENGTH;
	frame->prefix = bound <= sizeof(frame->small_prefix) ? frame->small_prefix : xmalloc(bound);
	char *out = frame->prefix;
	if (frame->json) {
		frame->prefix_length = write_json_prefix(out, name, name_length, stream, time_ms);
		return;
	}
	if (format == OUTPUT_FORMAT_TIMESTAMPED)
		out += write_timestamp(out, time_ms);
	memcpy(out, name, name_length);
	out += name_length;
	if (marked) {
		memcpy(out, STDERR_MARK, STDERR_MARK_LENGTH);
		out += STDERR_MARK_LENGTH;
	}
	memcpy(out, " | ", 3);
	frame->prefix_length = (size_t)(out + 3 - frame->prefix);
}

void output_frame_close(struct output_frame *frame)
{
	if (frame->prefix != frame->small_prefix)
		free(frame->prefix);
}

size_t output_frame_write_json(const struct output_frame *frame, char *out, const char *line,
			       size_t length)
{
	char *start = out;
	memcpy(out, frame->prefix, frame->prefix_length);
	out += frame->prefix_length;
	out += json_escape_into(out, line, length);
	memcpy(out, "\"}\n", 3);
	return (size_t)(out + 3 - start);
}
