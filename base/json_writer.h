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

#include "base/text_buffer.h"

struct json_writer {
	struct text_buffer out;
	bool comma; /* the next key or value follows another at its level */
};

/* An empty writer with room for `capacity` bytes (grown when needed). */
void jw_init(struct json_writer *writer, size_t capacity);
/* The text with a newline at its end, for the line-based control
 * protocol, and the size of its buffer (`capacity`, may be NULL); the
 * caller frees it. The writer is empty after. */
char *jw_take_line(struct json_writer *writer, size_t *length, size_t *capacity);

void jw_object_open(struct json_writer *writer);
void jw_object_close(struct json_writer *writer);
void jw_array_open(struct json_writer *writer);
void jw_array_close(struct json_writer *writer);
/* `key` is a string literal: its quotes and colon are added at compile
 * time, and it is copied without a strlen (a status of 1000 tasks writes
 * 40000 keys). */
#define jw_key(writer, key) jw_key_text((writer), "\"" key "\":", sizeof(key) + 2)
void jw_key_text(struct json_writer *writer, const char *quoted, size_t length);

void jw_string(struct json_writer *writer, const char *text, size_t length);
void jw_cstring(struct json_writer *writer, const char *text); /* NULL: null */
void jw_int(struct json_writer *writer, int64_t value);
void jw_real(struct json_writer *writer, double value);
void jw_bool(struct json_writer *writer, bool value);
void jw_null(struct json_writer *writer);

/* "key": value, for the common cases (`key` a literal, as for jw_key). */
#define jw_field_cstring(writer, key, text) (jw_key(writer, key), jw_cstring(writer, text))
#define jw_field_int(writer, key, value)    (jw_key(writer, key), jw_int(writer, value))
#define jw_field_bool(writer, key, value)   (jw_key(writer, key), jw_bool(writer, value))
#define jw_field_null(writer, key)          (jw_key(writer, key), jw_null(writer))
/* The integer when `present`, else null. */
#define jw_field_optional_int(writer, key, present, value)                                         \
	(jw_key(writer, key), jw_optional_int(writer, present, value))
void jw_optional_int(struct json_writer *writer, bool present, int64_t value);
