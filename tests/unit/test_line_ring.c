/* The bounded ring of recent lines behind `corral logs` and `corral events`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/line_ring.h"

struct seen {
	char lines[64][128];
	uint64_t times[64];
	unsigned tags[64];
	size_t count;
};

static void remember(void *context, uint64_t time_ms, unsigned tag, const char *text,
		     size_t length)
{
	struct seen *seen = context;
	assert_int_equal(strlen(text), length);
	seen->tags[seen->count] = tag;
	snprintf(seen->lines[seen->count], sizeof(seen->lines[0]), "%s", text);
	seen->times[seen->count++] = time_ms;
}

static void append_text(struct line_ring *ring, uint64_t time_ms, const char *text)
{
	line_ring_append(ring, time_ms, 0, text, strlen(text));
}

static void test_empty_ring_allocates_nothing(void **state)
{
	struct line_ring ring;
	struct seen seen = {0};
	line_ring_init(&ring, 1024);
	line_ring_visit(&ring, 0, remember, &seen);
	assert_int_equal(seen.count, 0);
	assert_null(ring.bytes);
	line_ring_free(&ring);
}

static void test_keeps_lines_in_order_with_times(void **state)
{
	struct line_ring ring;
	struct seen seen = {0};
	line_ring_init(&ring, 1024);
	append_text(&ring, 10, "one");
	append_text(&ring, 20, "two");
	append_text(&ring, 30, "");
	line_ring_visit(&ring, 0, remember, &seen);
	assert_int_equal(seen.count, 3);
	assert_string_equal(seen.lines[0], "one");
	assert_string_equal(seen.lines[1], "two");
	assert_string_equal(seen.lines[2], "");
	assert_int_equal(seen.times[1], 20);
	line_ring_free(&ring);
}

static void test_tail(void **state)
{
	struct line_ring ring;
	struct seen seen = {0};
	line_ring_init(&ring, 1024);
	for (int i = 0; i < 5; i++) {
		char text[8];
		snprintf(text, sizeof(text), "l%d", i);
		append_text(&ring, (uint64_t)i, text);
	}
	line_ring_visit(&ring, 2, remember, &seen);
	assert_int_equal(seen.count, 2);
	assert_string_equal(seen.lines[0], "l3");
	assert_string_equal(seen.lines[1], "l4");
	line_ring_free(&ring);
}

/* 20 records of 12 + 9 bytes fill a 128-byte ring several times over:
 * only the newest that fit remain, intact across the wrap. */
static void test_drops_oldest_and_wraps(void **state)
{
	struct line_ring ring;
	struct seen seen = {0};
	line_ring_init(&ring, 128);
	for (int i = 0; i < 20; i++) {
		char text[16];
		snprintf(text, sizeof(text), "line-%04d", i);
		append_text(&ring, (uint64_t)i, text);
	}
	line_ring_visit(&ring, 0, remember, &seen);
	assert_int_equal(seen.count, 6); /* 6 * 21 = 126 <= 128 < 7 * 21 */
	for (size_t i = 0; i < seen.count; i++) {
		char expected[16];
		snprintf(expected, sizeof(expected), "line-%04zu", 14 + i);
		assert_string_equal(seen.lines[i], expected);
		assert_int_equal(seen.times[i], 14 + i);
	}
	line_ring_free(&ring);
}

static void test_long_line_is_cut(void **state)
{
	struct line_ring ring;
	struct seen seen = {0};
	char long_line[200];
	memset(long_line, 'x', sizeof(long_line));
	line_ring_init(&ring, 256);
	line_ring_append(&ring, 1, 0, long_line, sizeof(long_line));
	line_ring_visit(&ring, 0, remember, &seen);
	assert_int_equal(seen.count, 1);
	assert_int_equal(strlen(seen.lines[0]), 64);
	line_ring_free(&ring);
}

/* A task's stream travels with each line, through wraps and a resize,
 * without costing the line any of its length. */
static void test_tags_are_kept(void **state)
{
	struct line_ring ring;
	struct seen seen = {0};
	line_ring_init(&ring, 128);
	for (unsigned i = 0; i < 20; i++) {
		char text[16];
		snprintf(text, sizeof(text), "line-%04u", i);
		line_ring_append(&ring, i, i % 3, text, strlen(text));
	}
	line_ring_resize(&ring, 256);
	line_ring_visit(&ring, 0, remember, &seen);
	assert_int_equal(seen.count, 6);
	for (size_t i = 0; i < seen.count; i++) {
		assert_int_equal(seen.tags[i], (14 + i) % 3);
		assert_int_equal(strlen(seen.lines[i]), 9);
	}
	line_ring_free(&ring);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_ring_allocates_nothing),
		cmocka_unit_test(test_keeps_lines_in_order_with_times),
		cmocka_unit_test(test_tail),
		cmocka_unit_test(test_drops_oldest_and_wraps),
		cmocka_unit_test(test_long_line_is_cut),
		cmocka_unit_test(test_tags_are_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
