#include "cli/json_view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

/* Deeper than any reply corral writes; bounds the recursion. */
#define DEPTH_MAX 64

struct parser {
	struct json_view *view;
	char *at, *end; /* in view->text, which ends with a NUL */
	char *error;
	size_t error_size;
};

static int fail(struct parser *parser, const char *what)
{
	snprintf(parser->error, parser->error_size, "at byte %zu: %s",
		 (size_t)(parser->at - parser->view->text), what);
	return -1;
}

static void skip_space(struct parser *parser)
{
	while (parser->at < parser->end && (*parser->at == ' ' || *parser->at == '\t' ||
					    *parser->at == '\n' || *parser->at == '\r'))
		parser->at++;
}

static size_t new_value(struct parser *parser, enum json_view_kind kind, const char *key)
{
	struct json_view *view = parser->view;
	if (view->count == view->capacity) {
		view->capacity = view->capacity ? view->capacity * 2 : 1024;
		view->values = xreallocarray(view->values, view->capacity, sizeof(*view->values));
	}
	view->values[view->count] = (struct jv){.kind = kind, .span = 1, .key = key};
	return view->count++;
}

static int hex4(const char *text, unsigned *out)
{
	unsigned value = 0;
	for (int i = 0; i < 4; i++) {
		char c = text[i];
		value <<= 4;
		if (c >= '0' && c <= '9')
			value |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			value |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			value |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = value;
	return 0;
}

static char *put_utf8(char *out, unsigned code)
{
	if (code < 0x80) {
		*out++ = (char)code;
	} else if (code < 0x800) {
		*out++ = (char)(0xc0 | code >> 6);
		*out++ = (char)(0x80 | (code & 0x3f));
	} else if (code < 0x10000) {
		*out++ = (char)(0xe0 | code >> 12);
		*out++ = (char)(0x80 | (code >> 6 & 0x3f));
		*out++ = (char)(0x80 | (code & 0x3f));
	} else {
		*out++ = (char)(0xf0 | code >> 18);
		*out++ = (char)(0x80 | (code >> 12 & 0x3f));
		*out++ = (char)(0x80 | (code >> 6 & 0x3f));
		*out++ = (char)(0x80 | (code & 0x3f));
	}
	return out;
}

/* At the opening quote: the string decoded where it was written (never
 * longer), NUL-terminated; *decoded points at it. A \u0000 ends it there. */
static int parse_string(struct parser *parser, const char **decoded)
{
	char *in = ++parser->at, *out = in;
	*decoded = out;
	/* Most strings have no escape: found where they are, nothing moved.
	 * A control character (the text's closing NUL too) stops this, for
	 * the loop below to judge. */
	unsigned char c0;
	while ((c0 = (unsigned char)*in) != '"' && c0 != '\\' && c0 >= 0x20)
		in++;
	out = in;
	while (in < parser->end && *in != '"') {
		unsigned char c = (unsigned char)*in;
		if (c < 0x20) {
			parser->at = in;
			return fail(parser, "a control character in a string");
		}
		if (c != '\\') {
			*out++ = *in++;
			continue;
		}
		if (in + 1 >= parser->end)
			break;
		char escape = in[1];
		in += 2;
		switch (escape) {
		case '"':
		case '\\':
		case '/':
			*out++ = escape;
			break;
		case 'b':
			*out++ = '\b';
			break;
		case 'f':
			*out++ = '\f';
			break;
		case 'n':
			*out++ = '\n';
			break;
		case 'r':
			*out++ = '\r';
			break;
		case 't':
			*out++ = '\t';
			break;
		case 'u': {
			unsigned code, low;
			if (parser->end - in < 4 || hex4(in, &code) < 0) {
				parser->at = in;
				return fail(parser, "a bad \\u escape");
			}
			in += 4;
			if (code >= 0xd800 && code < 0xdc00 && parser->end - in >= 6 &&
			    in[0] == '\\' && in[1] == 'u' && hex4(in + 2, &low) == 0 &&
			    low >= 0xdc00 && low < 0xe000) {
				code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
				in += 6;
			} else if (code >= 0xd800 && code < 0xe000) {
				code = 0xfffd; /* a lone surrogate */
			}
			out = put_utf8(out, code);
			break;
		}
		default:
			parser->at = in - 1;
			return fail(parser, "a bad escape");
		}
	}
	if (in >= parser->end) {
		parser->at = in;
		return fail(parser, "a string without its closing quote");
	}
	*out = '\0'; /* out <= in: the quote's place at the latest */
	parser->at = in + 1;
	return 0;
}

static int parse_number(struct parser *parser, size_t index)
{
	char *start = parser->at, *p = start;
	bool integer = true;
	if (*p == '-')
		p++;
	if (!(*p >= '0' && *p <= '9'))
		return fail(parser, "expected a value");
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.' || *p == 'e' || *p == 'E')
		integer = false;
	struct jv *value = &parser->view->values[index];
	char *stop;
	/* Up to 18 digits cannot overflow: summed here, not by strtoll. */
	size_t digits = (size_t)(p - start) - (*start == '-');
	if (integer && digits <= 18) {
		int64_t number = 0;
		for (const char *d = start + (*start == '-'); d < p; d++)
			number = number * 10 + (*d - '0');
		value->kind = JSON_VIEW_INTEGER;
		value->integer = *start == '-' ? -number : number;
		parser->at = p;
		return 0;
	}
	errno = 0;
	if (integer) {
		long long number = strtoll(start, &stop, 10);
		if (errno == 0) {
			value->kind = JSON_VIEW_INTEGER;
			value->integer = number;
			parser->at = stop;
			return 0;
		}
	}
	errno = 0;
	double real = strtod(start, &stop);
	if (stop == start || errno == ERANGE)
		return fail(parser, "a number out of range");
	value->kind = JSON_VIEW_REAL;
	value->real = real;
	parser->at = stop;
	return 0;
}

static int literal(struct parser *parser, const char *word, size_t length)
{
	if ((size_t)(parser->end - parser->at) < length || memcmp(parser->at, word, length) != 0)
		return fail(parser, "expected a value");
	parser->at += length;
	return 0;
}

static int parse_value(struct parser *parser, const char *key, int depth);

/* An array or an object (`close` ']' or '}'), at its opening bracket. */
static int parse_container(struct parser *parser, size_t index, char close, int depth)
{
	bool object = close == '}';
	parser->at++;
	skip_space(parser);
	if (parser->at < parser->end && *parser->at == close) {
		parser->at++;
		return 0;
	}
	for (;;) {
		const char *key = NULL;
		skip_space(parser);
		if (object) {
			if (parser->at >= parser->end || *parser->at != '"')
				return fail(parser, "expected a key");
			if (parse_string(parser, &key) < 0)
				return -1;
			skip_space(parser);
			if (parser->at >= parser->end || *parser->at != ':')
				return fail(parser, "expected ':'");
			parser->at++;
		}
		if (parse_value(parser, key, depth + 1) < 0)
			return -1;
		parser->view->values[index].count++;
		skip_space(parser);
		if (parser->at < parser->end && *parser->at == ',') {
			parser->at++;
			continue;
		}
		if (parser->at < parser->end && *parser->at == close) {
			parser->at++;
			return 0;
		}
		return fail(parser, object ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int parse_value(struct parser *parser, const char *key, int depth)
{
	if (depth > DEPTH_MAX)
		return fail(parser, "nested too deep");
	skip_space(parser);
	if (parser->at >= parser->end)
		return fail(parser, "expected a value");
	size_t index = new_value(parser, JSON_VIEW_NULL, key);
	int result;
	switch (*parser->at) {
	case '{':
		parser->view->values[index].kind = JSON_VIEW_OBJECT;
		result = parse_container(parser, index, '}', depth);
		break;
	case '[':
		parser->view->values[index].kind = JSON_VIEW_ARRAY;
		result = parse_container(parser, index, ']', depth);
		break;
	case '"': {
		const char *string;
		result = parse_string(parser, &string);
		parser->view->values[index].kind = JSON_VIEW_STRING;
		parser->view->values[index].string = string;
		break;
	}
	case 't':
		parser->view->values[index].kind = JSON_VIEW_TRUE;
		result = literal(parser, "true", 4);
		break;
	case 'f':
		parser->view->values[index].kind = JSON_VIEW_FALSE;
		result = literal(parser, "false", 5);
		break;
	case 'n':
		result = literal(parser, "null", 4);
		break;
	default:
		result = parse_number(parser, index);
		break;
	}
	parser->view->values[index].span = (uint32_t)(parser->view->count - index);
	return result;
}

int json_view_parse(struct json_view *view, char *text, size_t length, char *error,
		    size_t error_size)
{
	*view = (struct json_view){.text = text};
	/* About one value for every 15 bytes of a status reply: room for
	 * them at once rather than copies of a growing array. */
	view->capacity = length / 15 + 16;
	view->values = xreallocarray(NULL, view->capacity, sizeof(*view->values));
	struct parser parser = {.view = view,
				.at = text,
				.end = text + length,
				.error = error,
				.error_size = error_size};
	if (parse_value(&parser, NULL, 0) == 0) {
		skip_space(&parser);
		if (parser.at == parser.end)
			return 0;
		fail(&parser, "more after the value");
	}
	json_view_free(view);
	return -1;
}

void json_view_free(struct json_view *view)
{
	free(view->values);
	*view = (struct json_view){0};
}

const struct jv *jv_get(const struct jv *object, const char *key)
{
	if (!jv_is_object(object))
		return NULL;
	const struct jv *member = object + 1;
	/* The first byte first: most keys differ there, and a status table
	 * asks ~30 keys of each task's ~25. */
	for (uint32_t i = 0; i < object->count; i++, member += member->span)
		if (member->key[0] == key[0] && strcmp(member->key, key) == 0)
			return member;
	return NULL;
}
