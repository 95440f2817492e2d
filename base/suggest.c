#include "base/suggest.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

#define MAX_SUGGESTION_DISTANCE 2

static char lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

/* Words up to this long are compared without touching the heap: keys and
 * names are short, and this runs for every unknown key against every known
 * one (the config fuzzer spends a quarter of its time here otherwise). */
#define SHORT_WORD 64

static void copy_lowered(char *to, const char *from, size_t length)
{
	for (size_t i = 0; i < length; i++)
		to[i] = lower(from[i]);
}

/* The edit distance of a and b when it is at most `bound`, else some
 * number above `bound`. A cell comes from the row before at +0 or +1,
 * from its left at +1, or from two rows before at +1, so: cells further
 * than `bound` from the diagonal are never under it and are not worked
 * out, and once two rows in a row are all above it, no later row can come
 * back under it. */
static size_t distance_within(const char *a, size_t a_length, const char *b, size_t b_length,
			      size_t bound)
{
	/* Optimal string alignment over three rolling rows: the row before
	 * the previous one is needed for swaps. */
	size_t width = b_length + 1;
	size_t short_rows[3 * (SHORT_WORD + 1)];
	char short_words[2 * SHORT_WORD];
	bool short_enough = a_length <= SHORT_WORD && b_length <= SHORT_WORD;
	size_t *rows = short_enough ? short_rows : xcalloc(3 * width, sizeof(*rows));
	char *lowered_a = short_enough ? short_words : xmalloc(a_length + b_length + 1);
	char *lowered_b = lowered_a + a_length;
	size_t *before_previous = rows, *previous = rows + width, *current = rows + 2 * width;
	size_t distance, previous_minimum = 0, before_previous_minimum = 0;
	bool beyond = false;

	/* Case is folded once, not in the inner loop. */
	copy_lowered(lowered_a, a, a_length);
	copy_lowered(lowered_b, b, b_length);
	for (size_t j = 0; j <= b_length; j++)
		previous[j] = j;
	for (size_t i = 1; i <= a_length; i++) {
		/* Only the band of cells within `bound` of the diagonal: a cell
		 * further off is at least that far, and its neighbours just
		 * outside the band are marked so (above `bound`). */
		size_t low = i > bound ? i - bound : 1;
		size_t high = bound < b_length && i < b_length - bound ? i + bound : b_length;
		size_t *recycled, minimum;

		current[0] = i;
		minimum = i;
		if (low > 1)
			current[low - 1 < b_length ? low - 1 : b_length] = bound + 1;
		if (high < b_length)
			current[high + 1] = bound + 1;
		for (size_t j = low; j <= high; j++) {
			size_t cost = lowered_a[i - 1] == lowered_b[j - 1] ? 0 : 1;

			current[j] =
			    min3(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
			if (i > 1 && j > 1 && lowered_a[i - 1] == lowered_b[j - 2] &&
			    lowered_a[i - 2] == lowered_b[j - 1] &&
			    before_previous[j - 2] + 1 < current[j])
				current[j] = before_previous[j - 2] + 1;
			if (current[j] < minimum)
				minimum = current[j];
		}
		recycled = before_previous;
		before_previous = previous;
		previous = current;
		current = recycled;
		before_previous_minimum = previous_minimum;
		previous_minimum = minimum;
		if (i > 1 && previous_minimum > bound && before_previous_minimum > bound) {
			beyond = true;
			break;
		}
	}
	/* The last row's band may not reach the corner (nor the row be the
	 * last): the words are then further apart than `bound`. */
	beyond |= bound < b_length && a_length < b_length - bound;
	distance = beyond ? bound + 1 : previous[b_length];
	if (!short_enough) {
		free(rows);
		free(lowered_a);
	}
	return distance;
}

size_t edit_distance(const char *a, size_t a_length, const char *b, size_t b_length)
{
	return distance_within(a, a_length, b, b_length, SIZE_MAX);
}

const char *suggest_nearest(const char *text, size_t length, const char *const candidates[],
			    size_t candidate_count)
{
	const char *best = NULL;
	size_t best_distance = MAX_SUGGESTION_DISTANCE + 1;

	for (size_t i = 0; i < candidate_count; i++) {
		size_t candidate_length = strlen(candidates[i]);
		size_t longer = candidate_length > length ? candidate_length : length;
		size_t shorter = candidate_length > length ? length : candidate_length;
		size_t distance;

		/* Cheap bound first: keys in a fuzzed file can be huge. */
		if (longer - shorter > MAX_SUGGESTION_DISTANCE)
			continue;
		distance = distance_within(text, length, candidates[i], candidate_length,
					   MAX_SUGGESTION_DISTANCE);
		/* Two edits turn "id" into "cwd": demand that most of the
		 * word survives. */
		if (distance * 3 > longer)
			continue;
		if (distance < best_distance) {
			best = candidates[i];
			best_distance = distance;
		}
	}
	return best;
}
