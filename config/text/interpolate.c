#include "config/text/interpolate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

struct builder {
	char *data;
	size_t length, capacity;
};

static void add(struct builder *builder, const char *text, size_t length)
{
	if (builder->length + length + 1 > builder->capacity) {
		builder->capacity = (builder->length + length + 1) * 2;
		builder->data = xreallocarray(builder->data, builder->capacity, 1);
	}
	memcpy(builder->data + builder->length, text, length);
	builder->length += length;
	builder->data[builder->length] = '\0';
}

static bool name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

__attribute__((format(printf, 3, 4))) static int fail(struct interpolate_error *error,
						      size_t offset, const char *format, ...)
{
	va_list arguments;
	va_start(arguments, format);
	error->offset = offset;
	vsnprintf(error->message, sizeof(error->message), format, arguments);
	va_end(arguments);
	return -1;
}

/* The end of a `${...}` opened at text[start] ("${"): its closing brace,
 * nested ones counted; 0 when it never closes. */
static size_t closing_brace(const char *text, size_t length, size_t start)
{
	int depth = 0;
	for (size_t i = start; i < length; i++) {
		if (text[i] == '$' && i + 1 < length && text[i + 1] == '{') {
			depth++;
			i++;
		} else if (text[i] == '}' && --depth == 0) {
			return i;
		}
	}
	return 0;
}

static int expand(const char *text, size_t length, size_t base, interpolate_lookup lookup,
		  void *context, struct builder *out, struct interpolate_error *error, int depth);

/* ${NAME...} at text[at], closing at text[end]. */
static int braced(const char *text, size_t at, size_t end, size_t base, interpolate_lookup lookup,
		  void *context, struct builder *out, struct interpolate_error *error, int depth)
{
	size_t i = at + 2, name_end = i;
	if (name_end < end && name_start(text[name_end]))
		while (name_end < end && name_char(text[name_end]))
			name_end++;
	char name[128];
	size_t name_length = name_end - i;
	if (name_length == 0 || name_length >= sizeof(name)) {
		char shown[64];
		snprintf(shown, sizeof(shown), "%.*s", (int)(end - at + 1 > 60 ? 60 : end - at + 1),
			 text + at);
		return fail(error, base + at,
			    "invalid variable %s: a name is [A-Za-z_][A-Za-z0-9_]*", shown);
	}
	memcpy(name, text + i, name_length);
	name[name_length] = '\0';
	const char *value = lookup(context, name);
	if (name_end == end) {
		if (!value)
			return fail(
			    error, base + at,
			    "variable %s is not set (write ${%s:-default} for a default, or "
			    "$$ for a literal $)",
			    name, name);
		add(out, value, strlen(value));
		return 0;
	}
	/* An operator: -, :-, ?, :?, +, :+ and the text up to the brace. */
	bool colon = text[name_end] == ':';
	char operator= text[name_end + (colon ? 1 : 0)];
	size_t word = name_end + (colon ? 2 : 1);
	if ((colon && name_end + 1 >= end) || (operator!= '-' && operator!= '?' && operator!= '+'))
		return fail(
		    error, base + at,
		    "invalid variable ${%s...}: after the name comes }, :-, -, :?, ?, :+ or +",
		    name);
	bool set = value && (!colon || *value);
	if (operator== '-') {
		if (set)
			add(out, value, strlen(value));
		else
			return expand(text + word, end - word, base + word, lookup, context, out,
				      error, depth + 1);
	} else if (operator== '+') {
		if (set)
			return expand(text + word, end - word, base + word, lookup, context, out,
				      error, depth + 1);
	} else if (!set) {
		error->offset = base + at;
		snprintf(error->message, sizeof(error->message), "variable %s is %s: %.*s", name,
			 value ? "empty" : "not set", (int)(end - word), text + word);
		if (end == word)
			snprintf(error->message, sizeof(error->message), "variable %s is %s", name,
				 value ? "empty" : "not set");
		return -1;
	} else {
		add(out, value, strlen(value));
	}
	return 0;
}

static int expand(const char *text, size_t length, size_t base, interpolate_lookup lookup,
		  void *context, struct builder *out, struct interpolate_error *error, int depth)
{
	if (depth > 8)
		return fail(error, base, "variables nested too deep");
	size_t i = 0;
	while (i < length) {
		const char *dollar = memchr(text + i, '$', length - i);
		if (!dollar) {
			add(out, text + i, length - i);
			break;
		}
		size_t at = (size_t)(dollar - text);
		add(out, text + i, at - i);
		if (at + 1 < length && text[at + 1] == '$') {
			add(out, "$", 1);
			i = at + 2;
		} else if (at + 1 < length && text[at + 1] == '{') {
			size_t end = closing_brace(text, length, at);
			if (!end)
				return fail(error, base + at, "unclosed ${: a } is missing");
			if (braced(text, at, end, base, lookup, context, out, error, depth) < 0)
				return -1;
			i = end + 1;
		} else if (at + 1 < length && name_start(text[at + 1])) {
			size_t end = at + 1;
			while (end < length && name_char(text[end]))
				end++;
			char name[128];
			size_t name_length = end - at - 1;
			if (name_length >= sizeof(name))
				return fail(error, base + at, "variable name too long");
			memcpy(name, text + at + 1, name_length);
			name[name_length] = '\0';
			const char *value = lookup(context, name);
			if (!value)
				return fail(error, base + at,
					    "variable %s is not set (write ${%s:-default} for a "
					    "default, or $$ for a literal $)",
					    name, name);
			add(out, value, strlen(value));
			i = end;
		} else {
			/* A lone $ (before a space, a digit, the end): compose
			 * refuses it too, as a typo more often than not. */
			return fail(error, base + at,
				    "a $ that starts no variable: write $$ for a literal $");
		}
	}
	return 0;
}

int interpolate(const char *text, size_t length, interpolate_lookup lookup, void *context,
		char **out, size_t *out_length, struct interpolate_error *error)
{
	struct builder builder = {0};
	add(&builder, "", 0);
	if (expand(text, length, 0, lookup, context, &builder, error, 0) < 0) {
		free(builder.data);
		return -1;
	}
	*out = builder.data;
	*out_length = builder.length;
	return 0;
}
