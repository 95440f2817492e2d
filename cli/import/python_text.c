#include "cli/import/python_text.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text_buffer.h"
#include "base/xmalloc.h"

static char *take(struct text_buffer *buffer)
{
	text_buffer_put_char(buffer, '\0');
	size_t length;
	return text_buffer_take(buffer, &length, NULL);
}

char *python_expand(const char *text, const struct python_name *names, size_t count, char *missing,
		    size_t missing_size)
{
	struct text_buffer out;
	text_buffer_init(&out, strlen(text) + 16);
	for (const char *p = text; *p; p++) {
		if (*p != '%') {
			text_buffer_put_char(&out, *p);
			continue;
		}
		if (p[1] == '%') {
			text_buffer_put_char(&out, '%');
			p++;
			continue;
		}
		const char *close = p[1] == '(' ? strchr(p + 2, ')') : NULL;
		if (!close) {
			snprintf(missing, missing_size, "a %% not followed by (name) or %%");
			free(take(&out));
			return NULL;
		}
		char *name = xstrndup(p + 2, (size_t)(close - p - 2));
		const char *spec = close + 1;
		size_t spec_length = strspn(spec, "-+ 0#.123456789");
		char type = spec[spec_length];
		const struct python_name *found = NULL;
		for (size_t i = 0; i < count && !found; i++)
			if (strcmp(names[i].name, name) == 0)
				found = &names[i];
		/* strchr finds the terminator too: a text that ends after the
		 * name has no type (found by fuzz_import_text). */
		if (!found || type == '\0' || !strchr("sdir", type) ||
		    (type != 's' && type != 'r' && !found->number)) {
			snprintf(missing, missing_size, "%%(%s)%.*s", name, (int)spec_length + 1,
				 spec);
			free(name);
			free(take(&out));
			return NULL;
		}
		bool left = memchr(spec, '-', spec_length) != NULL;
		bool zeros = false;
		int width = 0;
		for (size_t i = 0; i < spec_length && spec[i] != '.'; i++) {
			if (spec[i] == '0' && width == 0)
				zeros = true;
			else if (isdigit((unsigned char)spec[i]))
				width = width * 10 + (spec[i] - '0');
			if (width > 64)
				width = 64;
		}
		char piece[256];
		if (type == 's' || type == 'r') {
			if (left)
				snprintf(piece, sizeof(piece), "%-*s", width, found->value);
			else
				snprintf(piece, sizeof(piece), "%*s", width, found->value);
		} else {
			long long number = strtoll(found->value, NULL, 10);
			if (left)
				snprintf(piece, sizeof(piece), "%-*lld", width, number);
			else if (zeros)
				snprintf(piece, sizeof(piece), "%0*lld", width, number);
			else
				snprintf(piece, sizeof(piece), "%*lld", width, number);
		}
		text_buffer_put(&out, piece, strlen(piece));
		free(name);
		p = spec + spec_length;
	}
	return take(&out);
}

char **python_shlex_split(const char *text, const char **why)
{
	char **words = xcalloc(1, sizeof(*words));
	size_t count = 0;
	const char *p = text;
	for (;;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		struct text_buffer word;
		text_buffer_init(&word, 32);
		for (; *p && !isspace((unsigned char)*p); p++) {
			if (*p == '\'') {
				const char *close = strchr(p + 1, '\'');
				if (!close)
					goto unterminated;
				text_buffer_put(&word, p + 1, (size_t)(close - p - 1));
				p = close;
			} else if (*p == '"') {
				for (p++; *p && *p != '"'; p++) {
					if (*p == '\\' && p[1] && strchr("\\\"$`\n", p[1]))
						p++;
					text_buffer_put_char(&word, *p);
				}
				if (!*p)
					goto unterminated;
			} else if (*p == '\\' && p[1]) {
				text_buffer_put_char(&word, *++p);
			} else {
				text_buffer_put_char(&word, *p);
			}
		}
		words = xreallocarray(words, count + 2, sizeof(*words));
		words[count++] = take(&word);
		words[count] = NULL;
		continue;
	unterminated:
		free(take(&word));
		for (size_t i = 0; i < count; i++)
			free(words[i]);
		free(words);
		*why = "an unterminated quote";
		return NULL;
	}
	return words;
}

/* shlex's tokens in its non-POSIX mode, with supervisord's word
 * characters: words, quoted strings (quotes kept), single characters. */
static bool is_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || strchr("/.+-():", c) ||
	       ((unsigned char)c >= 0xc0);
}

static char *next_token(const char **cursor)
{
	const char *p = *cursor;
	for (;;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (*p != '#')
			break;
		while (*p && *p != '\n')
			p++;
	}
	if (!*p)
		return NULL;
	const char *start = p;
	if (*p == '"' || *p == '\'') {
		const char *close = strchr(p + 1, *p);
		p = close ? close + 1 : p + strlen(p);
	} else if (is_word_char(*p) || (unsigned char)*p >= 0x80) {
		while (*p && (is_word_char(*p) || (unsigned char)*p >= 0x80))
			p++;
	} else {
		p++;
	}
	*cursor = p;
	return xstrndup(start, (size_t)(p - start));
}

int python_key_value_pairs(const char *text,
			   void (*add)(void *context, const char *key, const char *value),
			   void *context, const char **why)
{
	const char *cursor = text;
	int result = 0;
	for (;;) {
		char *key = next_token(&cursor);
		if (!key)
			break;
		char *equals = next_token(&cursor);
		char *value = equals ? next_token(&cursor) : NULL;
		if (!value || strcmp(equals, "=") != 0) {
			*why = "not KEY=value pairs separated by commas (quote a value with spaces "
			       "or commas)";
			result = -1;
		} else {
			/* dict_of_key_value_pairs strips quotes off both ends. */
			size_t length = strlen(value);
			size_t start = strspn(value, "'\"");
			while (length > start && strchr("'\"", value[length - 1]))
				length--;
			char *bare = xstrndup(value + start, length - start);
			add(context, key, bare);
			free(bare);
		}
		free(key);
		free(equals);
		free(value);
		if (result < 0)
			break;
		char *comma = next_token(&cursor);
		bool more = comma != NULL;
		free(comma);
		if (!more)
			break;
	}
	return result;
}
