/* Finding and counting newlines in task output, eight bytes at a time.
 *
 * A flood of short lines (`yes`) makes a newline every two bytes: a call to
 * memchr() per line then costs more than everything else done with the
 * line. Looking at the first eight bytes inline (one load and a few
 * arithmetic steps, "has a zero byte" on the word XOR '\n') finds a short
 * line's end without a call; longer lines still get memchr(), which is the
 * fastest for them. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LINE_SCAN_ONES UINT64_C(0x0101010101010101)
#define LINE_SCAN_LOW7 UINT64_C(0x7f7f7f7f7f7f7f7f)

/* The top bit of each byte of `word` that is '\n', and no other bit (exact,
 * unlike the cheaper test that may flag the byte after a match). */
static inline uint64_t line_scan_newline_bits(uint64_t word)
{
	uint64_t x = word ^ (LINE_SCAN_ONES * '\n');
	return ~(((x & LINE_SCAN_LOW7) + LINE_SCAN_LOW7) | x | LINE_SCAN_LOW7);
}

/* Newlines found ahead of the cursor and not yet returned: with lines of
 * a few bytes, one load finds several. */
struct line_scan {
	const char *word; /* where the bits were found */
	uint64_t bits;
};

/* The first '\n' in [cursor, end), or NULL. The cursor only moves forward,
 * to just past the newline returned last; a new cursor, a new scan. */
static inline const char *line_scan_next(struct line_scan *scan, const char *cursor,
					 const char *end)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (scan->bits) {
		const char *found = scan->word + (__builtin_ctzll(scan->bits) >> 3);
		scan->bits &= scan->bits - 1;
		return found;
	}
	if (end - cursor >= 8) {
		uint64_t word;
		memcpy(&word, cursor, sizeof(word));
		uint64_t bits = line_scan_newline_bits(word);
		if (bits) {
			scan->word = cursor;
			scan->bits = bits & (bits - 1);
			return cursor + (__builtin_ctzll(bits) >> 3);
		}
		cursor += 8;
	}
#endif
	return memchr(cursor, '\n', (size_t)(end - cursor));
}

/* How many '\n' `text` holds. */
static inline size_t line_scan_count(const char *text, size_t length)
{
	size_t count = 0, i = 0;
	for (; i + 8 <= length; i += 8) {
		uint64_t word;
		memcpy(&word, text + i, sizeof(word));
		/* One bit per newline, at the bottom of its byte: their sum
		 * gathers in the top byte. */
		count += (size_t)(((line_scan_newline_bits(word) >> 7) * LINE_SCAN_ONES) >> 56);
	}
	for (; i < length; i++)
		count += text[i] == '\n';
	return count;
}
