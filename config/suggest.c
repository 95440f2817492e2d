#include "config/suggest.h"

#include <stdlib.h>
#include <string.h>

#include "config/xmalloc.h"

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

size_t edit_distance(const char *a, size_t a_length, const char *b, size_t b_length)
{
	/* Optimal string alignment over three rolling rows: the row before
	 * the previous one is needed for swaps. */
	size_t width = b_length + 1;
	size_t *rows = xcalloc(3 * width, sizeof(*rows));
	size_t *before_previous = rows, *previous = rows + width, *current = rows + 2 * width;
	size_t distance;

	for (size_t j = 0; j <= b_length; j++)
		previous[j] = j;
	for (size_t i = 1; i <= a_length; i++) {
		size_t *recycled;

		current[0] = i;
		for (size_t j = 1; j <= b_length; j++) {
			size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;

			current[j] =
			    min3(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]) &&
			    before_previous[j - 2] + 1 < current[j])
				current[j] = before_previous[j - 2] + 1;
		}
		recycled = before_previous;
		before_previous = previous;
		previous = current;
		current = recycled;
	}
	distance = previous[b_length];
	free(rows);
	return distance;
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
		distance = edit_distance(text, length, candidates[i], candidate_length);
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
