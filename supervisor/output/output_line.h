#pragma once

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Which of a task's streams a line came from. MERGED: both share one pipe
 * (the default), so it cannot be told; log.streams: separate gives each
 * its own. */
enum output_stream {
	OUTPUT_STREAM_MERGED,
	OUTPUT_STREAM_STDOUT,
	OUTPUT_STREAM_STDERR,
};

/* "stdout", "stderr", or NULL for a merged line. */
static inline const char *output_stream_name(enum output_stream stream)
{
	return stream == OUTPUT_STREAM_STDOUT   ? "stdout"
	       : stream == OUTPUT_STREAM_STDERR ? "stderr"
						: NULL;
}

/* {"time": SECONDS, "task": NAME, "stream": "stdout"|"stderr", "text":
 * TEXT}: a line of a task's output, as `logs` replies and streams carry it;
 * "stream" only when the task's streams are kept apart. */
json_t *output_line_json(uint64_t time_ms, const char *task, enum output_stream stream,
			 const char *text, size_t length);
