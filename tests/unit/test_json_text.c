/* Bytes that are not UTF-8 still reach JSON, with U+FFFD for each bad byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/json_text.h"
#include "supervisor/output/output_line.h"

static const struct {
	const char *text;
	size_t length;
	bool valid;
} utf8_cases[] = {
    {"plain", 5, true},
    {"caf\xC3\xA9", 5, true},
    {"\xE2\x82\xAC", 3, true},     /* euro sign */
    {"\xF0\x9F\x98\x80", 4, true}, /* emoji */
    {"nul\0inside", 10, true},
    {"caf\xE9", 4, false},          /* Latin-1 */
    {"\xC0\xAF", 2, false},         /* overlong '/' */
    {"\xED\xA0\x80", 3, false},     /* surrogate */
    {"\xF4\x90\x80\x80", 4, false}, /* above U+10FFFF */
    {"\xE2\x82", 2, false},         /* cut short */
    {"\xFF", 1, false},
};

static void test_utf8_validation(void **state)
{
	for (size_t i = 0; i < sizeof(utf8_cases) / sizeof(utf8_cases[0]); i++) {
		if (utf8_is_valid(utf8_cases[i].text, utf8_cases[i].length) != utf8_cases[i].valid)
			fail_msg("case %zu: expected %s", i,
				 utf8_cases[i].valid ? "valid" : "invalid");
	}
}

static void test_lossy_keeps_valid_text(void **state)
{
	json_t *string = json_string_lossy("caf\xC3\xA9", 5);
	assert_non_null(string);
	assert_string_equal(json_string_value(string), "caf\xC3\xA9");
	json_decref(string);
}

static void test_lossy_replaces_each_bad_byte(void **state)
{
	json_t *string = json_string_lossy("caf\xE9!\xFF\xFE", 7);
	assert_non_null(string);
	assert_string_equal(json_string_value(string), "caf\xEF\xBF\xBD!\xEF\xBF\xBD\xEF\xBF\xBD");
	json_decref(string);
}

static void test_output_line_as_one_json_line(void **state)
{
	size_t length;
	char *line = json_line_take(
	    output_line_json(1500, "web/app", OUTPUT_STREAM_MERGED, "hi \xFF", 4), &length);
	const char *expected = "{\"time\":1.5,\"task\":\"web/app\",\"text\":\"hi \xEF\xBF\xBD\"}\n";
	assert_non_null(line);
	assert_int_equal(length, strlen(expected));
	assert_memory_equal(line, expected, length);
	free(line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_utf8_validation),
	    cmocka_unit_test(test_lossy_keeps_valid_text),
	    cmocka_unit_test(test_lossy_replaces_each_bad_byte),
	    cmocka_unit_test(test_output_line_as_one_json_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
