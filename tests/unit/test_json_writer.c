/* The JSON writer gives what jansson dumps (JSON_COMPACT |
 * JSON_PRESERVE_ORDER) for the same values: byte for byte where jansson
 * writes no escapes, and the same values where it escapes otherwise
 * (\n against \u000a). */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/json_text.h"
#include "base/json_writer.h"

static char *written_line(struct json_writer *writer)
{
	size_t length;
	char *line = jw_take_line(writer, &length, NULL);
	assert_true(length > 0 && line[length - 1] == '\n');
	line[length - 1] = '\0';
	return line;
}

static char *dumped(json_t *value)
{
	char *text = json_dumps(value, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(value);
	assert_non_null(text);
	return text;
}

static void test_nesting_and_commas_as_jansson(void **state)
{
	struct json_writer out;
	jw_init(&out, 4); /* small: the writer grows */
	jw_object_open(&out);
	jw_field_bool(&out, "ok", true);
	jw_key(&out, "groups");
	jw_array_open(&out);
	for (int g = 0; g < 2; g++) {
		jw_object_open(&out);
		jw_field_cstring(&out, "name", g ? "h" : "g");
		jw_key(&out, "tasks");
		jw_array_open(&out);
		for (int t = 0; t < g; t++) {
			jw_object_open(&out);
			jw_field_null(&out, "pid");
			jw_field_optional_int(&out, "restarts", true, 3);
			jw_key(&out, "empty");
			jw_object_open(&out);
			jw_object_close(&out);
			jw_key(&out, "list");
			jw_array_open(&out);
			jw_int(&out, 1);
			jw_bool(&out, false);
			jw_null(&out);
			jw_array_close(&out);
			jw_object_close(&out);
		}
		jw_array_close(&out);
		jw_object_close(&out);
	}
	jw_array_close(&out);
	jw_object_close(&out);
	char *text = written_line(&out);

	json_t *expected =
	    json_pack("{s:b, s:[{s:s, s:[]}, {s:s, s:[{s:n, s:i, s:{}, s:[i, b, n]}]}]}", "ok", 1,
		      "groups", "name", "g", "tasks", "name", "h", "tasks", "pid", "restarts", 3,
		      "empty", "list", 1, 0);
	char *reference = dumped(expected);
	assert_string_equal(text, reference);
	free(text);
	free(reference);
}

static void test_numbers_as_jansson(void **state)
{
	const int64_t integers[] = {0, -1, 7, 1234567890123, INT64_MAX, INT64_MIN};
	const double reals[] = {1.5, 3.0, 0.1, 1795696805.644, 1795696809.187, -2.5e-7, 1e300};
	struct json_writer out;
	jw_init(&out, 0);
	jw_array_open(&out);
	json_t *expected = json_array();
	for (size_t i = 0; i < sizeof(integers) / sizeof(integers[0]); i++) {
		jw_int(&out, integers[i]);
		json_array_append_new(expected, json_integer(integers[i]));
	}
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		jw_real(&out, reals[i]);
		json_array_append_new(expected, json_real(reals[i]));
	}
	jw_array_close(&out);
	char *text = written_line(&out);
	char *reference = dumped(expected);
	assert_string_equal(text, reference);
	free(text);
	free(reference);
}

static void test_strings_mean_what_jansson_writes(void **state)
{
	const char *strings[] = {"", "plain", "a \"quoted\" \\ path/x", "tab\tnew\nline\x01",
				 "caf\xC3\xA9 \xE2\x82\xAC"};
	struct json_writer out;
	jw_init(&out, 0);
	jw_array_open(&out);
	json_t *expected = json_array();
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		jw_cstring(&out, strings[i]);
		json_array_append_new(expected, json_string(strings[i]));
	}
	jw_cstring(&out, NULL);
	json_array_append_new(expected, json_null());
	jw_array_close(&out);
	char *text = written_line(&out);
	json_error_t error;
	json_t *parsed = json_loads(text, 0, &error);
	assert_non_null(parsed);
	assert_true(json_equal(parsed, expected));
	json_decref(parsed);
	json_decref(expected);
	free(text);
}

static void test_text_that_is_not_utf8_gets_replacement_characters(void **state)
{
	struct json_writer out;
	jw_init(&out, 0);
	jw_string(&out, "hi \xFF", 4);
	char *text = written_line(&out);
	assert_string_equal(text, "\"hi \\ufffd\"");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nesting_and_commas_as_jansson),
	    cmocka_unit_test(test_numbers_as_jansson),
	    cmocka_unit_test(test_strings_mean_what_jansson_writes),
	    cmocka_unit_test(test_text_that_is_not_utf8_gets_replacement_characters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
