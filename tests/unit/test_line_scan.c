/* Newlines found eight bytes at a time agree with memchr, at every length
 * and alignment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/line_scan.h"

static void fill(char *text, size_t length, unsigned seed, unsigned newline_every)
{
	srand(seed);
	for (size_t i = 0; i < length; i++)
		text[i] = rand() % newline_every == 0 ? '\n' : (char)(rand() % 256);
}

static void test_next_agrees_with_memchr(void **state)
{
	char text[256];
	for (unsigned every = 1; every <= 40; every += 3)
		for (size_t start = 0; start < 8; start++)
			for (size_t length = 0; length + start <= 120; length++) {
				fill(text, sizeof(text), (unsigned)(every * 1000 + length), every);
				const char *end = text + start + length;
				struct line_scan scan = {0};
				const char *cursor = text + start;
				for (;;) {
					const char *expected =
					    memchr(cursor, '\n', (size_t)(end - cursor));
					const char *found = line_scan_next(&scan, cursor, end);
					assert_ptr_equal(found, expected);
					if (!found)
						break;
					cursor = found + 1;
				}
			}
}

static void test_count_agrees_with_a_loop(void **state)
{
	char text[256];
	for (unsigned every = 1; every <= 20; every++)
		for (size_t length = 0; length <= 200; length++) {
			fill(text, sizeof(text), (unsigned)(every * 7 + length), every);
			size_t expected = 0;
			for (size_t i = 0; i < length; i++)
				expected += text[i] == '\n';
			assert_int_equal(line_scan_count(text, length), expected);
			size_t unaligned = 0;
			for (size_t i = 3; i < length + 3; i++)
				unaligned += text[i] == '\n';
			assert_int_equal(line_scan_count(text + 3, length), unaligned);
		}
	memset(text, '\n', sizeof(text));
	assert_int_equal(line_scan_count(text, sizeof(text)), sizeof(text));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_next_agrees_with_memchr),
	    cmocka_unit_test(test_count_agrees_with_a_loop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
