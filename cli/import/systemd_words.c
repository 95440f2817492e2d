#include "cli/import/systemd_words.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/text_buffer.h"
#include "base/xmalloc.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int octal(char c)
{
	return c >= '0' && c <= '7' ? c - '0' : -1;
}

static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The escape at p (after its backslash) into `word`; returns how many
 * characters it took, 0 when it is no escape systemd knows. */
static size_t unescape(const char *p, struct text_buffer *word)
{
	static const char simple_in[] = "abfnrtv\\\"'s";
	static const char simple_out[] = "\a\b\f\n\r\t\v\\\"' ";
	const char *found = *p ? strchr(simple_in, *p) : NULL;
	if (found) {
		text_buffer_put_char(word, simple_out[found - simple_in]);
		return 1;
	}
	if (*p == 'x' && hex(p[1]) >= 0 && hex(p[2]) >= 0) {
		text_buffer_put_char(word, (char)(hex(p[1]) * 16 + hex(p[2])));
		return 3;
	}
	if (octal(p[0]) >= 0 && octal(p[1]) >= 0 && octal(p[2]) >= 0) {
		text_buffer_put_char(word,
				     (char)(octal(p[0]) * 64 + octal(p[1]) * 8 + octal(p[2])));
		return 3;
	}
	return 0;
}

char **systemd_words(const char *value, const char **why)
{
	char **words = xcalloc(1, sizeof(*words));
	size_t count = 0;
	const char *p = value;
	for (;;) {
		while (is_space(*p))
			p++;
		if (!*p)
			break;
		struct text_buffer word;
		text_buffer_init(&word, 32);
		char quote = 0;
		for (; *p && (quote || !is_space(*p)); p++) {
			if (!quote && (*p == '"' || *p == '\'')) {
				quote = *p;
				continue;
			}
			if (quote && *p == quote) {
				quote = 0;
				continue;
			}
			if (*p == '\\' && p[1]) {
				size_t taken = unescape(p + 1, &word);
				if (taken) {
					p += taken;
					continue;
				}
			}
			text_buffer_put_char(&word, *p);
		}
		if (quote) {
			size_t length;
			free(text_buffer_take(&word, &length, NULL));
			string_vector_free(words);
			*why = "unterminated quote";
			return NULL;
		}
		text_buffer_put_char(&word, '\0');
		words = xreallocarray(words, count + 2, sizeof(*words));
		size_t length;
		words[count++] = text_buffer_take(&word, &length, NULL);
		words[count] = NULL;
	}
	return words;
}
