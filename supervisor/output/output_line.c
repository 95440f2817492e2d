/* A task's line as JSON, for `logs` replies and followers. */
#include "supervisor/output/output_line.h"

#include "base/json_text.h"

json_t *output_line_json(uint64_t time_ms, const char *task, enum output_stream stream,
			 const char *text, size_t length)
{
	json_t *line = json_object();
	const char *stream_name = output_stream_name(stream);
	json_object_set_new(line, "time", json_real((double)time_ms / 1000.0));
	json_object_set_new(line, "task", json_string(task));
	if (stream_name)
		json_object_set_new(line, "stream", json_string(stream_name));
	json_object_set_new(line, "text", json_string_lossy(text, length));
	return line;
}
