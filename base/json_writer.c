#include "base/json_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_text.h"
#include "base/xmalloc.h"

void jw_init(struct json_writer *writer, size_t capacity)
{
	*writer = (struct json_writer){.capacity = capacity ? capacity : 256};
	writer->text = xmalloc(writer->capacity);
}

static void reserve(struct json_writer *writer, size_t more)
{
	if (writer->length + more <= writer->capacity)
		return;
	size_t capacity = writer->capacity ? writer->capacity : 256;
	while (capacity < writer->length + more)
		capacity *= 2;
	writer->text = xreallocarray(writer->text, capacity, 1);
	writer->capacity = capacity;
}

static void put(struct json_writer *writer, const char *bytes, size_t length)
{
	reserve(writer, length);
	memcpy(writer->text + writer->length, bytes, length);
	writer->length += length;
}

static void put_char(struct json_writer *writer, char c)
{
	reserve(writer, 1);
	writer->text[writer->length++] = c;
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
	char *text = writer->text;
	*length = writer->length;
	if (capacity)
		*capacity = writer->capacity;
	*writer = (struct json_writer){0};
	return text;
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
	reserve(writer, length + 1);
	if (writer->comma)
		writer->text[writer->length++] = ',';
	memcpy(writer->text + writer->length, quoted, length);
	writer->length += length;
	writer->comma = false;
}

void jw_string(struct json_writer *writer, const char *text, size_t length)
{
	value_begins(writer);
	reserve(writer, json_escaped_max(length) + 2);
	writer->text[writer->length++] = '"';
	writer->length += json_escape_into(writer->text + writer->length, text, length);
	writer->text[writer->length++] = '"';
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
	char digits[24];
	size_t used = sizeof(digits);
	/* Through the unsigned magnitude: -INT64_MIN does not fit. */
	uint64_t magnitude = value < 0 ? -(uint64_t)value : (uint64_t)value;
	do {
		digits[--used] = (char)('0' + magnitude % 10);
		magnitude /= 10;
	} while (magnitude);
	if (value < 0)
		digits[--used] = '-';
	value_begins(writer);
	put(writer, digits + used, sizeof(digits) - used);
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
