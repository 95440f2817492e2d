#include "cli/import/shell_words.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static size_t name_length(const char *text)
{
	size_t length = 0;
	if (!(isalpha((unsigned char)text[0]) || text[0] == '_'))
		return 0;
	while (isalnum((unsigned char)text[length]) || text[length] == '_')
		length++;
	return length;
}

/* Literal text inside single quotes, a quote written as '\''. */
static void put_literal(struct text_buffer *out, const char *text, size_t length)
{
	if (!length)
		return;
	text_buffer_put_char(out, '\'');
	for (size_t i = 0; i < length; i++) {
		if (text[i] == '\'')
			text_buffer_put_literal(out, "'\\''");
		else
			text_buffer_put_char(out, text[i]);
	}
	text_buffer_put_char(out, '\'');
}

void shell_word_put(struct text_buffer *out, const char *word)
{
	if (!*word)
		text_buffer_put_literal(out, "''");
	else
		put_literal(out, word, strlen(word));
}

static void put_expanding(struct text_buffer *out, const char *word)
{
	size_t whole = word[0] == '$' ? name_length(word + 1) : 0;
	if (whole && !word[1 + whole]) {
		text_buffer_put(out, word, whole + 1);
		return;
	}
	/* Literal text gathers here ($$ read as $), quoted when a ${NAME}
	 * or the end of the word comes. */
	struct text_buffer literal;
	text_buffer_init(&literal, strlen(word) + 1);
	bool wrote = false;
	for (const char *p = word; *p;) {
		size_t length = 0;
		if (p[0] == '$' && p[1] == '{') {
			length = name_length(p + 2);
			if (length && p[2 + length] != '}')
				length = 0;
		}
		if (!length) {
			text_buffer_put_char(&literal, *p);
			p += p[0] == '$' && p[1] == '$' ? 2 : 1;
			continue;
		}
		put_literal(out, literal.text, literal.length);
		literal.length = 0;
		text_buffer_put_char(out, '"');
		text_buffer_put(out, p, length + 3);
		text_buffer_put_char(out, '"');
		p += length + 3;
		wrote = true;
	}
	put_literal(out, literal.text, literal.length);
	if (!wrote && !literal.length)
		text_buffer_put_literal(out, "''");
	free(literal.text);
}

void shell_words_put(struct text_buffer *out, char *const *words, bool expand)
{
	for (size_t i = 0; words[i]; i++) {
		if (i)
			text_buffer_put_char(out, ' ');
		if (expand)
			put_expanding(out, words[i]);
		else
			shell_word_put(out, words[i]);
	}
}
