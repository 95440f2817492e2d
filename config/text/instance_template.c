#include "config/text/instance_template.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define VARIABLE        "CORRAL_INSTANCE"
#define VARIABLE_LENGTH (sizeof(VARIABLE) - 1)

/* Far beyond a port, far from overflowing: a result out of range is the
 * field's to refuse, a number this large is a mistake here. */
#define VALUE_LIMIT 1000000000LL

bool instance_template_used(const char *text)
{
	return strchr(text, '$') != NULL;
}

struct expression {
	const char *text;
	size_t at, end; /* within text: the inside of $(( )) */
	unsigned instance;
	const char *error; /* NULL while it goes well */
};

static void skip_spaces(struct expression *e)
{
	while (e->at < e->end && (e->text[e->at] == ' ' || e->text[e->at] == '\t'))
		e->at++;
}

static bool is_name_character(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static long long sum(struct expression *e, int depth);

/* A number, the variable ($-prefixed or not, as the shell takes both in
 * $(( ))), or a parenthesised sum. */
static long long operand(struct expression *e, int depth)
{
	skip_spaces(e);
	if (e->at >= e->end) {
		e->error = "an operand is missing";
		return 0;
	}
	const char *here = e->text + e->at;
	if (*here == '(') {
		if (depth > 16) {
			e->error = "too many parentheses";
			return 0;
		}
		e->at++;
		long long value = sum(e, depth + 1);
		skip_spaces(e);
		if (!e->error && (e->at >= e->end || e->text[e->at] != ')'))
			e->error = "a ( is not closed";
		e->at++;
		return value;
	}
	if (isdigit((unsigned char)*here)) {
		long long value = 0;
		while (e->at < e->end && isdigit((unsigned char)e->text[e->at])) {
			value = value * 10 + (e->text[e->at++] - '0');
			if (value > VALUE_LIMIT) {
				e->error = "a number is too large";
				return 0;
			}
		}
		return value;
	}
	size_t start = e->at;
	if (*here == '$')
		start++;
	size_t end = start;
	while (end < e->end && is_name_character(e->text[end]))
		end++;
	if (end - start == VARIABLE_LENGTH && !memcmp(e->text + start, VARIABLE, VARIABLE_LENGTH)) {
		e->at = end;
		return e->instance;
	}
	e->error = end > start ? "the only variable here is CORRAL_INSTANCE"
			       : "expected a number, CORRAL_INSTANCE or (";
	return 0;
}

static long long product(struct expression *e, int depth)
{
	long long value = operand(e, depth);
	for (;;) {
		skip_spaces(e);
		if (e->error || e->at >= e->end || e->text[e->at] != '*')
			return value;
		e->at++;
		value *= operand(e, depth);
		if (value > VALUE_LIMIT || value < -VALUE_LIMIT) {
			e->error = "the value is too large";
			return 0;
		}
	}
}

static long long sum(struct expression *e, int depth)
{
	long long value = product(e, depth);
	for (;;) {
		skip_spaces(e);
		if (e->error || e->at >= e->end)
			return value;
		char sign = e->text[e->at];
		if (sign != '+' && sign != '-')
			return value;
		e->at++;
		long long next = product(e, depth);
		value = sign == '+' ? value + next : value - next;
		if (value > VALUE_LIMIT || value < -VALUE_LIMIT) {
			e->error = "the value is too large";
			return 0;
		}
	}
}

static int fail(struct instance_template_error *error, size_t offset, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct instance_template_error *error, size_t offset, const char *format, ...)
{
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(error->message, sizeof(error->message), format, arguments);
	va_end(arguments);
	error->offset = offset;
	return -1;
}

/* `$((...))` at text[at]: its value into out; the offset after it. */
static int arithmetic(const char *text, size_t at, unsigned instance, long long *value,
		      size_t *after, struct instance_template_error *error)
{
	/* The )) that closes it, past the parentheses inside. */
	const char *close = NULL;
	int depth = 0;
	for (const char *c = text + at + 3; *c && !close; c++) {
		if (*c == '(')
			depth++;
		else if (*c == ')' && depth == 0 && c[1] == ')')
			close = c;
		else if (*c == ')')
			depth--;
	}
	if (!close)
		return fail(error, at, "$(( is not closed with ))");
	struct expression e = {
	    .text = text, .at = at + 3, .end = (size_t)(close - text), .instance = instance};
	*value = sum(&e, 0);
	skip_spaces(&e);
	if (!e.error && e.at < e.end)
		e.error = "expected + - * or ))";
	if (e.error)
		return fail(error, at, "%s in %.*s", e.error, (int)(close + 2 - (text + at)),
			    text + at);
	*after = (size_t)(close - text) + 2;
	return 0;
}

int instance_template_expand(const char *text, unsigned instance, char *out, size_t size,
			     struct instance_template_error *error)
{
	size_t used = 0, at = 0, length = strlen(text);
	char piece[32];
	while (at < length) {
		const char *add = piece;
		size_t add_length;
		if (text[at] != '$') {
			piece[0] = text[at++];
			add_length = 1;
		} else if (text[at + 1] == '$') {
			piece[0] = '$';
			add_length = 1;
			at += 2;
		} else if (!strncmp(text + at, "$((", 3)) {
			long long value = 0;
			size_t after = at;
			if (arithmetic(text, at, instance, &value, &after, error) < 0)
				return -1;
			add_length = (size_t)snprintf(piece, sizeof(piece), "%lld", value);
			at = after;
		} else {
			bool braced = text[at + 1] == '{';
			size_t name = at + 1 + braced, end = name;
			while (end < length && is_name_character(text[end]))
				end++;
			bool known = end - name == VARIABLE_LENGTH &&
				     !memcmp(text + name, VARIABLE, VARIABLE_LENGTH);
			if (!known || (braced && text[end] != '}'))
				return fail(error, at,
					    "%.*s: a probe target takes $CORRAL_INSTANCE, "
					    "${CORRAL_INSTANCE} and $((...)) of it (write $$ for a "
					    "literal $)",
					    (int)(end - at + (braced && text[end] == '}')),
					    text + at);
			add_length = (size_t)snprintf(piece, sizeof(piece), "%u", instance);
			at = end + braced;
		}
		if (used + add_length >= size)
			return fail(error, 0, "is too long once the instance number is in");
		memcpy(out + used, add, add_length);
		used += add_length;
	}
	out[used] = '\0';
	return 0;
}
