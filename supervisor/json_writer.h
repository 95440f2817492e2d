/* JSON written straight as text, for replies too large to build as a
 * jansson tree first (a status of 1000 tasks: 25000 values, each a
 * malloc'd node, then dumped and freed). The output is what jansson's
 * json_dumps(JSON_COMPACT | JSON_PRESERVE_ORDER) gives for the same
 * values in the same order, except that strings which are not UTF-8 get
 * U+FFFD (json_text.h) where jansson drops them.
 *
 * Commas are the writer's: a value or key after another at the same level
 * gets one. Keys are literals of the caller, written unescaped. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_writer {
	char *text;
	size_t length, capacity;
	bool comma; /* the next key or value follows another at its level */
};

/* An empty writer with room for `capacity` bytes (grown when needed). */
void jw_init(struct json_writer *writer, size_t capacity);
/* The text with a newline at its end, for the line-based control
 * protocol; the caller frees it. The writer is empty after. */
char *jw_take_line(struct json_writer *writer, size_t *length);
void jw_free(struct json_writer *writer);

void jw_object_open(struct json_writer *writer);
void jw_object_close(struct json_writer *writer);
void jw_array_open(struct json_writer *writer);
void jw_array_close(struct json_writer *writer);
void jw_key(struct json_writer *writer, const char *key);

void jw_string(struct json_writer *writer, const char *text, size_t length);
void jw_cstring(struct json_writer *writer, const char *text); /* NULL: null */
void jw_int(struct json_writer *writer, int64_t value);
void jw_real(struct json_writer *writer, double value);
void jw_bool(struct json_writer *writer, bool value);
void jw_null(struct json_writer *writer);

/* "key": value, for the common cases. */
void jw_field_cstring(struct json_writer *writer, const char *key, const char *text);
void jw_field_int(struct json_writer *writer, const char *key, int64_t value);
void jw_field_bool(struct json_writer *writer, const char *key, bool value);
void jw_field_null(struct json_writer *writer, const char *key);
/* The integer when `present`, else null. */
void jw_field_optional_int(struct json_writer *writer, const char *key, bool present,
			   int64_t value);
