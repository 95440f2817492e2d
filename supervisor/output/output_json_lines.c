#include "supervisor/output/output_json_lines.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_text.h"
#include "base/xmalloc.h"

#define DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER)

static void reserve(struct output_json_lines *lines, size_t more)
{
	if (lines->capacity - lines->length >= more)
		return;
	lines->capacity = (lines->length + more) * 2;
	lines->text = xreallocarray(lines->text, lines->capacity, 1);
}

static void append(struct output_json_lines *lines, const char *text, size_t length)
{
	reserve(lines, length);
	memcpy(lines->text + lines->length, text, length);
	lines->length += length;
}

/* jansson writes the value itself, so that its escapes and number forms
 * stay those of output_line_json(). */
static void append_dump(struct output_json_lines *lines, json_t *value, size_t flags)
{
	size_t room = lines->capacity - lines->length;
	size_t needed = json_dumpb(value, lines->text + lines->length, room, flags);
	if (needed > room) {
		reserve(lines, needed);
		json_dumpb(value, lines->text + lines->length, needed, flags);
	}
	lines->length += needed;
}

void output_json_lines_build(struct output_json_lines *lines, const struct output_batch *batch)
{
	lines->length = 0;
	/* {"time":T,"task":"N","stream":"S","text":""} without its last
	 * three bytes: what every line of the batch begins with. */
	json_t *shared = output_line_json(batch->time_ms, "", batch->stream, "", 0);
	json_object_set_new(shared, "task", json_stringn(batch->name, batch->name_length));
	char *fields = json_dumps(shared, DUMP_FLAGS);
	json_decref(shared);
	size_t fields_length = strlen(fields) - 3; /* `""}` */
	const char *cursor = batch->text, *line;
	size_t length;
	while ((line = output_batch_next_line(batch, &cursor, &length))) {
		append(lines, fields, fields_length);
		json_t *text = json_string_lossy(line, length);
		append_dump(lines, text, DUMP_FLAGS | JSON_ENCODE_ANY);
		json_decref(text);
		append(lines, "}\n", 2);
	}
	free(fields);
}

void output_json_lines_free(struct output_json_lines *lines)
{
	free(lines->text);
	*lines = (struct output_json_lines){0};
}
