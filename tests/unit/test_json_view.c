/* The status table's JSON reader (cli/json_view.h): values of every kind,
 * strings decoded in place, lookups and walks, and texts it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/json_view.h"

static int parse(struct json_view *view, char *text, char *error)
{
	return json_view_parse(view, text, strlen(text), error, 128);
}

static void test_values_of_every_kind(void **state)
{
	(void)state;
	char text[] = " {\"s\": \"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00\", \"i\": -42, "
		      "\"big\": 9223372036854775807, \"r\": 1.5e3, \"t\": true, \"f\": false, "
		      "\"n\": null, \"a\": [1, {\"k\": \"v\"}, []], \"o\": {}} ";
	struct json_view view;
	char error[128];
	assert_int_equal(parse(&view, text, error), 0);
	const struct jv *root = view.values;
	assert_true(jv_is_object(root));
	assert_int_equal(root->count, 9);
	assert_string_equal(jv_string(jv_get(root, "s")), "a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80");
	assert_int_equal(jv_integer(jv_get(root, "i")), -42);
	assert_true(jv_integer(jv_get(root, "big")) == INT64_MAX);
	assert_true(jv_is_number(jv_get(root, "r")) && !jv_is_integer(jv_get(root, "r")));
	assert_true(jv_number(jv_get(root, "r")) == 1500.0);
	assert_true(jv_is_true(jv_get(root, "t")));
	assert_true(jv_is_boolean(jv_get(root, "f")) && !jv_is_true(jv_get(root, "f")));
	assert_true(jv_is_null(jv_get(root, "n")));
	assert_true(jv_is_object(jv_get(root, "o")));
	/* Not there, or asked of what is no object: NULL, as jansson. */
	assert_null(jv_get(root, "missing"));
	assert_null(jv_get(jv_get(root, "i"), "k"));
	assert_null(jv_string(jv_get(root, "i")));
	assert_int_equal(jv_integer(jv_get(root, "s")), 0);

	const struct jv *array = jv_get(root, "a"), *element;
	size_t index, seen = 0;
	jv_array_foreach(array, index, element)
	{
		if (index == 0)
			assert_int_equal(jv_integer(element), 1);
		if (index == 1)
			assert_string_equal(jv_string(jv_get(element, "k")), "v");
		if (index == 2)
			assert_int_equal(jv_array_size(element), 0);
		seen++;
	}
	assert_int_equal(seen, 3);
	/* What follows the array is reached past all it holds. */
	assert_ptr_equal(array + array->span, jv_get(root, "o"));
	json_view_free(&view);
}

static void test_what_it_refuses(void **state)
{
	(void)state;
	const char *const bad[] = {
	    "",    "{",           "{\"a\" 1}", "{\"a\":1,}", "[1 2]",     "\"open", "tru",
	    "nul", "{\"a\":1} x", "[-]",       "\"\\x\"",    "\"\\u12\"", "{1: 2}", "\"a\tb\"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *text = strdup(bad[i]);
		struct json_view view;
		char error[128] = "";
		assert_int_equal(parse(&view, text, error), -1);
		assert_non_null(strstr(error, "at byte"));
		free(text);
	}
	/* Nested deeper than any reply: refused, not a stack overflow. */
	char deep[512];
	memset(deep, '[', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = '\0';
	struct json_view view;
	char error[128];
	assert_int_equal(parse(&view, deep, error), -1);
	assert_non_null(strstr(error, "nested too deep"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_values_of_every_kind),
	    cmocka_unit_test(test_what_it_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
