#include "base/text_buffer.h"

#include <string.h>

#include "base/xmalloc.h"

void text_buffer_init(struct text_buffer *buffer, size_t capacity)
{
	*buffer = (struct text_buffer){.capacity = capacity ? capacity : 256};
	buffer->text = xmalloc(buffer->capacity);
}

void text_buffer_reserve(struct text_buffer *buffer, size_t more)
{
	if (buffer->length + more <= buffer->capacity)
		return;
	size_t capacity = buffer->capacity ? buffer->capacity : 256;
	while (capacity < buffer->length + more)
		capacity *= 2;
	buffer->text = xreallocarray(buffer->text, capacity, 1);
	buffer->capacity = capacity;
}

void text_buffer_put(struct text_buffer *buffer, const char *bytes, size_t length)
{
	text_buffer_reserve(buffer, length);
	memcpy(buffer->text + buffer->length, bytes, length);
	buffer->length += length;
}

void text_buffer_put_char(struct text_buffer *buffer, char c)
{
	text_buffer_reserve(buffer, 1);
	buffer->text[buffer->length++] = c;
}

/* Into the end of `digits`: returns where they begin. */
static size_t format_digits(char *digits, size_t size, uint64_t value)
{
	size_t used = size;
	do {
		digits[--used] = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	return used;
}

void text_buffer_put_uint(struct text_buffer *buffer, uint64_t value)
{
	char digits[24];
	size_t used = format_digits(digits, sizeof(digits), value);
	text_buffer_put(buffer, digits + used, sizeof(digits) - used);
}

void text_buffer_put_int(struct text_buffer *buffer, int64_t value)
{
	char digits[24];
	/* Through the unsigned magnitude: -INT64_MIN does not fit. */
	uint64_t magnitude = value < 0 ? -(uint64_t)value : (uint64_t)value;
	size_t used = format_digits(digits, sizeof(digits), magnitude);
	if (value < 0)
		digits[--used] = '-';
	text_buffer_put(buffer, digits + used, sizeof(digits) - used);
}

void text_buffer_put_fixed(struct text_buffer *buffer, uint64_t value, unsigned decimals)
{
	uint64_t scale = 1;
	for (unsigned i = 0; i < decimals; i++)
		scale *= 10;
	text_buffer_put_uint(buffer, value / scale);
	uint64_t fraction = value % scale;
	if (!fraction)
		return;
	char digits[24];
	size_t length = decimals;
	for (size_t i = length; i > 0; i--) {
		digits[i - 1] = (char)('0' + fraction % 10);
		fraction /= 10;
	}
	while (digits[length - 1] == '0')
		length--;
	text_buffer_put_char(buffer, '.');
	text_buffer_put(buffer, digits, length);
}

char *text_buffer_take(struct text_buffer *buffer, size_t *length, size_t *capacity)
{
	char *text = buffer->text;
	*length = buffer->length;
	if (capacity)
		*capacity = buffer->capacity;
	*buffer = (struct text_buffer){0};
	return text;
}
