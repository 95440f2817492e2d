/* "did you mean ...?": the edit distance against a plain full-matrix
 * reference, for short words (compared on the stack) and long ones (on the
 * heap), and the suggestions it gives, which stopping early once a word is
 * out of reach must not change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/suggest.h"

static char fold(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Optimal string alignment over the whole matrix, as the textbook has it. */
static size_t reference_distance(const char *a, size_t n, const char *b, size_t m)
{
	size_t *d = calloc((n + 1) * (m + 1), sizeof(*d));
	size_t result;
#define D(i, j) d[(i) * (m + 1) + (j)]
	assert_non_null(d);
	for (size_t i = 0; i <= n; i++)
		D(i, 0) = i;
	for (size_t j = 0; j <= m; j++)
		D(0, j) = j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
			size_t best = D(i - 1, j) + 1;
			if (D(i, j - 1) + 1 < best)
				best = D(i, j - 1) + 1;
			if (D(i - 1, j - 1) + cost < best)
				best = D(i - 1, j - 1) + cost;
			if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
			    fold(a[i - 2]) == fold(b[j - 1]) && D(i - 2, j - 2) + 1 < best)
				best = D(i - 2, j - 2) + 1;
			D(i, j) = best;
		}
	result = D(n, m);
#undef D
	free(d);
	return result;
}

/* A word over a small alphabet (so that pairs are often near), any case. */
static size_t random_word(char *word, size_t most, unsigned *seed)
{
	static const char letters[] = "abcABC-_";
	size_t length = (size_t)rand_r(seed) % (most + 1);

	for (size_t i = 0; i < length; i++)
		word[i] = letters[rand_r(seed) % (sizeof(letters) - 1)];
	word[length] = '\0';
	return length;
}

static void distance_matches_reference(size_t most, int pairs)
{
	char a[200], b[200];
	unsigned seed = 27;

	for (int k = 0; k < pairs; k++) {
		size_t n = random_word(a, most, &seed);
		size_t m = random_word(b, most, &seed);
		assert_int_equal(edit_distance(a, n, b, m), reference_distance(a, n, b, m));
	}
}

static void test_distance_of_short_words(void **state)
{
	(void)state;
	distance_matches_reference(12, 20000);
}

static void test_distance_of_long_words(void **state)
{
	(void)state;
	distance_matches_reference(150, 300);
}

static void test_distance_examples(void **state)
{
	(void)state;
	assert_int_equal(edit_distance("dealy", 5, "delay", 5), 1);
	assert_int_equal(edit_distance("DELAY", 5, "delay", 5), 0);
	assert_int_equal(edit_distance("", 0, "abc", 3), 3);
	assert_int_equal(edit_distance("kitten", 6, "sitting", 7), 3);
}

/* suggest_nearest's rules over the reference distance: at most 2 edits,
 * no more than a third of the longer word, the first nearest wins. */
static const char *reference_suggestion(const char *text, const char *const candidates[],
					size_t count)
{
	const char *best = NULL;
	size_t best_distance = 3;

	for (size_t i = 0; i < count; i++) {
		size_t n = strlen(text), m = strlen(candidates[i]);
		size_t longer = n > m ? n : m;
		size_t distance = reference_distance(text, n, candidates[i], m);
		if (distance <= 2 && distance * 3 <= longer && distance < best_distance) {
			best = candidates[i];
			best_distance = distance;
		}
	}
	return best;
}

static void test_suggestions_match_reference(void **state)
{
	char words[8][200];
	const char *candidates[8];
	char text[200];
	unsigned seed = 12;
	(void)state;

	for (int k = 0; k < 3000; k++) {
		size_t most = k % 3 == 0 ? 90 : 8; /* beyond the stack's words too */
		for (size_t i = 0; i < 8; i++) {
			random_word(words[i], most, &seed);
			candidates[i] = words[i];
		}
		/* Often a near copy of a candidate, so that some are in reach. */
		if (k % 2) {
			strcpy(text, words[k % 8]);
			if (text[0])
				text[(size_t)rand_r(&seed) % strlen(text)] = 'c';
		} else {
			random_word(text, most, &seed);
		}
		assert_ptr_equal(suggest_nearest(text, strlen(text), candidates, 8),
				 reference_suggestion(text, candidates, 8));
	}
}

static void test_suggestions(void **state)
{
	static const char *const keys[] = {"command", "restart", "delay", "cwd", "environment"};
	char long_key[300];
	(void)state;

	assert_string_equal(suggest_nearest("dealy", 5, keys, 5), "delay");
	assert_string_equal(suggest_nearest("comand", 6, keys, 5), "command");
	assert_string_equal(suggest_nearest("Restrat", 7, keys, 5), "restart");
	assert_null(suggest_nearest("id", 2, keys, 5));      /* most of the word must survive */
	assert_null(suggest_nearest("zzzzzzz", 7, keys, 5)); /* out of reach at once */
	/* Words longer than the stack's: two edits from one of them. */
	memset(long_key, 'x', sizeof(long_key));
	long_key[sizeof(long_key) - 1] = '\0';
	const char *const long_keys[] = {"other", long_key};
	char typo[300];
	memcpy(typo, long_key, sizeof(typo));
	typo[10] = 'y';
	typo[200] = 'z';
	assert_ptr_equal(suggest_nearest(typo, strlen(typo), long_keys, 2), long_key);
	typo[100] = 'w';
	assert_null(suggest_nearest(typo, strlen(typo), long_keys, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_distance_of_short_words),
	    cmocka_unit_test(test_distance_of_long_words),
	    cmocka_unit_test(test_distance_examples),
	    cmocka_unit_test(test_suggestions),
	    cmocka_unit_test(test_suggestions_match_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
