/* "did you mean ...?" for misspelt keys, keywords and signal names. */
#pragma once

#include <stddef.h>

/* Edit distance counting insertions, deletions, substitutions and swaps of
 * two neighbours (so "dealy" is 1 away from "delay"), ignoring ASCII case. */
size_t edit_distance(const char *a, size_t a_length, const char *b, size_t b_length);

/* The candidate nearest to `text` when it is near enough to be a typo of it
 * (at most 2 edits, and few for a short word); NULL when nothing is close. */
const char *suggest_nearest(const char *text, size_t length, const char *const candidates[],
			    size_t candidate_count);
