#include "config/text/env_file.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static bool name_char(char c, bool first)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

/* The value after '=' up to `end` (the line's end): into `out`, its length
 * returned; -1 with `error`. */
static long read_value(const char *start, const char *end, char *out, char *error,
		       size_t error_size)
{
	const char *p = start;
	while (p < end && is_space(*p))
		p++;
	size_t used = 0;
	if (p < end && (*p == '\'' || *p == '"')) {
		char quote = *p++;
		for (;; p++) {
			if (p >= end) {
				snprintf(error, error_size, "unclosed %c quote", quote);
				return -1;
			}
			if (*p == quote)
				break;
			if (quote == '"' && *p == '\\' && p + 1 < end) {
				char next = *++p;
				out[used++] = next == 'n' ? '\n' : next == 't' ? '\t' : next;
				continue;
			}
			out[used++] = *p;
		}
		/* After the closing quote: nothing but blanks or a comment. */
		for (p++; p < end && is_space(*p); p++)
			;
		if (p < end && *p != '#') {
			snprintf(error, error_size, "text after the closing quote");
			return -1;
		}
		return (long)used;
	}
	const char *value_end = end;
	for (const char *q = p; q < end; q++)
		if (*q == '#' && (q == p || is_space(q[-1]))) {
			value_end = q;
			break;
		}
	while (value_end > p && is_space(value_end[-1]))
		value_end--;
	memcpy(out, p, (size_t)(value_end - p));
	return (long)(value_end - p);
}

int env_file_parse(const char *text, size_t length, env_file_add add, void *context,
		   unsigned *error_line, char *error, size_t error_size)
{
	char *value = xmalloc(length + 1);
	unsigned line = 0;
	const char *cursor = text, *text_end = text + length;
	int result = 0;
	while (cursor < text_end && result == 0) {
		line++;
		const char *newline = memchr(cursor, '\n', (size_t)(text_end - cursor));
		const char *end = newline ? newline : text_end;
		const char *p = cursor;
		cursor = newline ? newline + 1 : text_end;
		while (p < end && is_space(*p))
			p++;
		if (p == end || *p == '#')
			continue;
		if ((size_t)(end - p) > 7 && strncmp(p, "export", 6) == 0 && is_space(p[6]))
			for (p += 7; p < end && is_space(*p); p++)
				;
		const char *name = p;
		while (p < end && name_char(*p, p == name))
			p++;
		size_t name_length = (size_t)(p - name);
		while (p < end && is_space(*p))
			p++;
		if (!name_length || p >= end || *p != '=') {
			snprintf(error, error_size,
				 name_length
				     ? "expected NAME=VALUE: no = after %.*s"
				     : "expected NAME=VALUE, a name of letters, digits and _%.*s",
				 (int)(name_length > 64 ? 64 : name_length), name);
			result = -1;
			break;
		}
		long value_length = read_value(p + 1, end, value, error, error_size);
		if (value_length < 0) {
			result = -1;
			break;
		}
		add(context, name, name_length, value, (size_t)value_length);
	}
	if (result < 0)
		*error_line = line;
	free(value);
	return result;
}
