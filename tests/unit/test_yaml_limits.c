/* Bounds on a config's nesting and on what its aliases expand to: each
 * refused with its place, and real configs untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/yaml/yaml_limits.h"

static char *text;
static size_t used, capacity;

static void put(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	int length = vsnprintf(NULL, 0, format, args);
	va_end(args);
	if (used + (size_t)length + 1 > capacity) {
		capacity = 2 * (used + (size_t)length + 1);
		text = realloc(text, capacity);
		assert_non_null(text);
	}
	va_start(args, format);
	vsnprintf(text + used, capacity - used, format, args);
	va_end(args);
	used += (size_t)length;
}

static void reset(void)
{
	used = 0;
	put("%s", "");
}

/* 0 when within the limits, else the error's line * 1000 + column. */
static unsigned check(const char **message)
{
	struct config_diagnostics diagnostics = {0};
	bool ok = yaml_within_limits(text, used, 0, &diagnostics);
	unsigned place = 0;
	assert_int_equal(ok, diagnostics.count == 0);
	if (!ok) {
		assert_int_equal(diagnostics.count, 1);
		place = diagnostics.items[0].location.line * 1000 +
			diagnostics.items[0].location.column;
		static char kept[256];
		snprintf(kept, sizeof(kept), "%s", diagnostics.items[0].message);
		*message = kept;
	}
	config_diagnostics_free(&diagnostics);
	return place;
}

static void test_nesting_stops_at_the_first_level_past_the_bound(void **state)
{
	(void)state;
	const char *message = NULL;
	reset();
	for (int i = 0; i < YAML_DEPTH_MAX; i++)
		put("[");
	for (int i = 0; i < YAML_DEPTH_MAX; i++)
		put("]");
	put("\n");
	assert_int_equal(check(&message), 0);

	reset();
	for (int i = 0; i < 80000; i++) /* 13 s inside libyaml before the bound */
		put("[");
	assert_int_equal(check(&message), 1000 + YAML_DEPTH_MAX + 1);
	assert_string_equal(message, "lists and maps nested more than 64 deep");
}

/* Texts with no more bytes that open a list or a map than the bound are
 * not parsed twice: each way of opening one, 65 deep in as few bytes as it
 * takes, is still refused. */
static void test_every_way_of_nesting_is_counted(void **state)
{
	(void)state;
	const char *message = NULL;
	/* One level each; %*s indents it. */
	static const char *const ways[] = {
	    "[",       /* flow lists */
	    "{a: ",    /* flow maps */
	    "%*s-\n",  /* block lists, one entry a line */
	    "%*sa:\n", /* block maps */
	    "[a: ",    /* a flow list's single pairs */
	    "%*s? \n", /* explicit keys */
	};
	for (size_t way = 0; way < sizeof(ways) / sizeof(ways[0]); way++) {
		reset();
		for (int level = 0; level <= YAML_DEPTH_MAX; level++)
			put(ways[way], level, "");
		put("%*sx\n", YAML_DEPTH_MAX + 1, "");
		assert_int_not_equal(check(&message), 0);
		assert_string_equal(message, "lists and maps nested more than 64 deep");
	}
}

/* A list of 10,000 values (10,001 with the list) under an anchor. */
static void anchored_list(void)
{
	reset();
	put("big: &big [");
	for (int i = 0; i < 10000; i++)
		put("%sx", i ? "," : "");
	put("]\n");
}

static void test_aliases_are_counted_as_what_they_expand_to(void **state)
{
	(void)state;
	const char *message = NULL;
	anchored_list();
	for (int i = 0; i < 98; i++)
		put("a%d: *big\n", i);
	assert_int_equal(check(&message), 0); /* 99 copies: 990,099 values with the keys */

	anchored_list();
	for (int i = 0; i < 300; i++)
		put("a%d: *big\n", i);
	/* Line 1 is the anchor; the 99th alias (line 100) goes past. */
	assert_int_equal(check(&message), 100 * 1000 + 6);
	assert_string_equal(message, "aliases expand the config to more than 1000000 values "
				     "(*big is one of them); write the values out or share them "
				     "through a group");
}

/* "Billion laughs": each level ten aliases of the one before. */
static void test_aliases_of_aliases_multiply(void **state)
{
	(void)state;
	const char *message = NULL;
	reset();
	put("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (int level = 1; level <= 9; level++) {
		put("l%d: &l%d [", level, level);
		for (int i = 0; i < 10; i++)
			put("%s*l%d", i ? ", " : "", level - 1);
		put("]\n");
	}
	assert_true(check(&message) / 1000 == 6); /* level 5 holds 10^6 values */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nesting_stops_at_the_first_level_past_the_bound),
	    cmocka_unit_test(test_every_way_of_nesting_is_counted),
	    cmocka_unit_test(test_aliases_are_counted_as_what_they_expand_to),
	    cmocka_unit_test(test_aliases_of_aliases_multiply),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	free(text);
	return failed;
}
