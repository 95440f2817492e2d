#include "base/json_text.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

/* utf8_sequence_size (json_text.h), on bytes. */
static size_t valid_sequence(const unsigned char *text, size_t length)
{
	unsigned char lead = text[0];
	size_t size;
	unsigned char low = 0x80, high = 0xBF; /* bounds of the second byte */
	if (lead < 0x80)
		return 1;
	if (lead >= 0xC2 && lead <= 0xDF)
		size = 2;
	else if (lead >= 0xE0 && lead <= 0xEF) {
		size = 3;
		if (lead == 0xE0)
			low = 0xA0;
		else if (lead == 0xED)
			high = 0x9F;
	} else if (lead >= 0xF0 && lead <= 0xF4) {
		size = 4;
		if (lead == 0xF0)
			low = 0x90;
		else if (lead == 0xF4)
			high = 0x8F;
	} else
		return 0;
	if (length < size || text[1] < low || text[1] > high)
		return 0;
	for (size_t i = 2; i < size; i++)
		if (text[i] < 0x80 || text[i] > 0xBF)
			return 0;
	return size;
}

size_t utf8_sequence_size(const char *text, size_t length)
{
	return length ? valid_sequence((const unsigned char *)text, length) : 0;
}

bool utf8_is_valid(const char *text, size_t length)
{
	const unsigned char *bytes = (const unsigned char *)text;
	for (size_t i = 0; i < length;) {
		size_t size = valid_sequence(bytes + i, length - i);
		if (!size)
			return false;
		i += size;
	}
	return true;
}

size_t json_escape_into(char *out, const char *text, size_t length)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *bytes = (const unsigned char *)text;
	size_t used = 0;
	for (size_t i = 0; i < length;) {
		unsigned char c = bytes[i];
		if (c == '"' || c == '\\') {
			out[used++] = '\\';
			out[used++] = (char)c;
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(out + used, "\\u00", 4);
			out[used + 4] = hex[c >> 4];
			out[used + 5] = hex[c & 15];
			used += 6;
			i++;
		} else if (c < 0x80) {
			out[used++] = (char)c;
			i++;
		} else {
			size_t size = valid_sequence(bytes + i, length - i);
			if (size) {
				memcpy(out + used, text + i, size);
				used += size;
				i += size;
			} else {
				memcpy(out + used, "\\ufffd", 6);
				used += 6;
				i++;
			}
		}
	}
	return used;
}

json_t *json_string_lossy(const char *text, size_t length)
{
	if (utf8_is_valid(text, length))
		return json_stringn(text, length);
	static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */
	const unsigned char *bytes = (const unsigned char *)text;
	char *clean = xmalloc(length * 3 + 1);
	size_t used = 0;
	for (size_t i = 0; i < length;) {
		size_t size = valid_sequence(bytes + i, length - i);
		if (size) {
			memcpy(clean + used, text + i, size);
			used += size;
			i += size;
		} else {
			memcpy(clean + used, replacement, 3);
			used += 3;
			i++;
		}
	}
	json_t *string = json_stringn(clean, used);
	free(clean);
	return string;
}

char *json_line_take(json_t *value, size_t *length)
{
	char *text = json_dumps(value, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(value);
	if (!text)
		return NULL;
	/* json_dumps' NUL becomes the newline: the length says where it ends. */
	*length = strlen(text);
	text[(*length)++] = '\n';
	return text;
}

const char *json_kind(const json_t *value)
{
	switch (json_typeof(value)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "something else";
}

char *json_dumps_timed(uint64_t time_ms, const json_t *fields)
{
	char *rest = json_dumps(fields, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!rest)
		return NULL;
	char time_text[48];
	int time_length =
	    snprintf(time_text, sizeof(time_text), "{\"time\":%llu.%03u",
		     (unsigned long long)(time_ms / 1000), (unsigned)(time_ms % 1000));
	/* rest is "{}" or "{...}": its fields follow the time after a comma. */
	bool empty = rest[1] == '}';
	size_t rest_length = strlen(rest);
	char *text = xmalloc((size_t)time_length + rest_length + 1);
	memcpy(text, time_text, (size_t)time_length);
	if (empty)
		memcpy(text + time_length, "}", 2);
	else {
		text[time_length] = ',';
		memcpy(text + time_length + 1, rest + 1, rest_length);
	}
	free(rest);
	return text;
}
