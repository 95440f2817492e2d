/* Words written for /bin/sh so that it reads them back as they were:
 * each quoted with '...', except, with `expand`, what systemd would
 * expand from the environment: a word that is exactly $NAME stays
 * unquoted (the shell splits it into words, as systemd does) and ${NAME}
 * inside a word becomes "${NAME}" (one word, as systemd keeps it). */
#pragma once

#include <stdbool.h>

#include "base/text_buffer.h"

void shell_words_put(struct text_buffer *out, char *const *words, bool expand);
/* One word, quoted for the shell: 'it'\''s'. */
void shell_word_put(struct text_buffer *out, const char *word);
