/* A growable buffer of text, written at its end: what the JSON writer
 * (json_writer.h) and the metrics text (supervisor/metrics/) build their
 * replies in, straight from the running groups. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct text_buffer {
	char *text; /* not NUL-terminated */
	size_t length, capacity;
};

/* An empty buffer with room for `capacity` bytes (grown when needed). */
void text_buffer_init(struct text_buffer *buffer, size_t capacity);
/* Room for `more` bytes after the text, without growing again. */
void text_buffer_reserve(struct text_buffer *buffer, size_t more);
void text_buffer_put(struct text_buffer *buffer, const char *bytes, size_t length);
void text_buffer_put_char(struct text_buffer *buffer, char c);
/* `literal` is a string literal: copied without a strlen. */
#define text_buffer_put_literal(buffer, literal)                                                   \
	text_buffer_put((buffer), (literal), sizeof(literal) - 1)
/* The decimal digits of `value`, without printf. */
void text_buffer_put_uint(struct text_buffer *buffer, uint64_t value);
void text_buffer_put_int(struct text_buffer *buffer, int64_t value);
/* `value` / 10^`decimals` (at most 18) written exactly, with no trailing zeros after
 * the point and no point when nothing follows it: (1234500, 6) is
 * "1.2345", (3000, 3) is "3". */
void text_buffer_put_fixed(struct text_buffer *buffer, uint64_t value, unsigned decimals);
/* Hands the text over (the caller frees it) and leaves the buffer empty. */
char *text_buffer_take(struct text_buffer *buffer, size_t *length, size_t *capacity);
