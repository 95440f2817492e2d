#include "base/json_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_text.h"

void jw_init(struct json_writer *writer, size_t capacity)
{
	*writer = (struct json_writer){0};
	text_buffer_init(&writer->out, capacity);
}

static void put(struct json_writer *writer, const char *bytes, size_t length)
{
	text_buffer_put(&writer->out, bytes, length);
}

static void put_char(struct json_writer *writer, char c)
{
	text_buffer_put_char(&writer->out, c);
}

/* Before a value: its comma, when it follows another. */
static void value_begins(struct json_writer *writer)
{
	if (writer->comma)
		put_char(writer, ',');
	writer->comma = true;
}

char *jw_take_line(struct json_writer *writer, size_t *length, size_t *capacity)
{
	put_char(writer, '\n');
	writer->comma = false;
	return text_buffer_take(&writer->out, length, capacity);
}

void jw_object_open(struct json_writer *writer)
{
	value_begins(writer);
	put_char(writer, '{');
	writer->comma = false;
}

void jw_object_close(struct json_writer *writer)
{
	put_char(writer, '}');
	writer->comma = true;
}

void jw_array_open(struct json_writer *writer)
{
	value_begins(writer);
	put_char(writer, '[');
	writer->comma = false;
}

void jw_array_close(struct json_writer *writer)
{
	put_char(writer, ']');
	writer->comma = true;
}

void jw_key_text(struct json_writer *writer, const char *quoted, size_t length)
{
	struct text_buffer *out = &writer->out;
	text_buffer_reserve(out, length + 1);
	if (writer->comma)
		out->text[out->length++] = ',';
	memcpy(out->text + out->length, quoted, length);
	out->length += length;
	writer->comma = false;
}

void jw_string(struct json_writer *writer, const char *text, size_t length)
{
	value_begins(writer);
	struct text_buffer *out = &writer->out;
	text_buffer_reserve(out, json_escaped_max(length) + 2);
	out->text[out->length++] = '"';
	out->length += json_escape_into(out->text + out->length, text, length);
	out->text[out->length++] = '"';
}

void jw_cstring(struct json_writer *writer, const char *text)
{
	if (text)
		jw_string(writer, text, strlen(text));
	else
		jw_null(writer);
}

void jw_int(struct json_writer *writer, int64_t value)
{
	value_begins(writer);
	text_buffer_put_int(&writer->out, value);
}

/* As jansson writes a real: 17 significant digits, and ".0" when that
 * reads as an integer. */
void jw_real(struct json_writer *writer, double value)
{
	if (!isfinite(value)) { /* jansson refuses these; null is what JSON has */
		jw_null(writer);
		return;
	}
	char text[40];
	int length = snprintf(text, sizeof(text) - 2, "%.17g", value);
	if (length < 0)
		length = 0;
	char *exponent = strchr(text, 'e');
	if (!exponent && !strchr(text, '.')) {
		memcpy(text + length, ".0", 3);
		length += 2;
	}
	if (exponent) { /* "e+07" -> "e7", "e-07" -> "e-7" */
		char *digits = exponent + 1, *from = digits + 1;
		if (*digits == '-')
			digits++;
		while (*from == '0')
			from++;
		memmove(digits, from, strlen(from) + 1);
		length = (int)strlen(text);
	}
	value_begins(writer);
	put(writer, text, (size_t)length);
}

void jw_bool(struct json_writer *writer, bool value)
{
	value_begins(writer);
	if (value)
		put(writer, "true", 4);
	else
		put(writer, "false", 5);
}

void jw_null(struct json_writer *writer)
{
	value_begins(writer);
	put(writer, "null", 4);
}

void jw_optional_int(struct json_writer *writer, bool present, int64_t value)
{
	if (present)
		jw_int(writer, value);
	else
		jw_null(writer);
}
