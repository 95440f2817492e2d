/* The bounded ring of recent lines behind `corral logs` and `corral events`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/output/line_ring.h"

struct seen {
	char lines[64][128];
	uint64_t times[64];
	unsigned tags[64];
	size_t count;
};

static void remember(void *context, uint64_t time_ms, unsigned tag, const char *text, size_t length)
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

static void append_batch(struct line_ring *ring, uint64_t time_ms, unsigned tag, const char *text)
{
	size_t lines = 0;
	for (const char *c = text; *c; c++)
		lines += *c == '\n';
	line_ring_append_lines(ring, time_ms, tag, text, strlen(text), lines);
}

/* Lines read together are kept as one record, and come back one by one
 * with the time and tag of their batch, between lines kept alone. */
static void test_batches_come_back_line_by_line(void **state)
{
	struct line_ring ring;
	struct seen seen = {0};
	line_ring_init(&ring, 1024);
	append_text(&ring, 1, "before");
	append_batch(&ring, 5, 2, "a\nbb\n\nccc\n");
	append_batch(&ring, 6, 1, "alone\n");
	append_text(&ring, 7, "after");
	assert_int_equal(ring.count, 7);
	line_ring_visit(&ring, 0, remember, &seen);
	const char *expected[] = {"before", "a", "bb", "", "ccc", "alone", "after"};
	uint64_t times[] = {1, 5, 5, 5, 5, 6, 7};
	unsigned tags[] = {0, 2, 2, 2, 2, 1, 0};
	assert_int_equal(seen.count, 7);
	for (size_t i = 0; i < 7; i++) {
		assert_string_equal(seen.lines[i], expected[i]);
		assert_int_equal(seen.times[i], times[i]);
		assert_int_equal(seen.tags[i], tags[i]);
	}
	line_ring_free(&ring);
}

/* --tail counts lines, not records: it may begin inside a batch. */
static void test_tail_begins_inside_a_batch(void **state)
{
	struct line_ring ring;
	struct seen seen = {0};
	line_ring_init(&ring, 1024);
	append_batch(&ring, 1, 0, "l0\nl1\nl2\nl3\n");
	append_text(&ring, 2, "l4");
	line_ring_visit(&ring, 3, remember, &seen);
	assert_int_equal(seen.count, 3);
	assert_string_equal(seen.lines[0], "l2");
	assert_string_equal(seen.lines[1], "l3");
	assert_string_equal(seen.lines[2], "l4");
	line_ring_free(&ring);
}

/* Batches much larger than the ring, over and over: what is kept is the
 * newest lines, in order, none cut, and the count matches them. */
static void test_large_batches_keep_the_newest_lines(void **state)
{
	struct line_ring ring;
	line_ring_init(&ring, 256);
	unsigned next = 0;
	for (int batch = 0; batch < 10; batch++) {
		char text[1024] = "";
		size_t length = 0;
		for (int i = 0; i < 40; i++)
			length += (size_t)snprintf(text + length, sizeof(text) - length,
						   "line-%04u\n", next++);
		line_ring_append_lines(&ring, (uint64_t)batch, 0, text, length, 40);
		struct seen seen = {0};
		line_ring_visit(&ring, 0, remember, &seen);
		assert_int_equal(seen.count, ring.count);
		assert_true(seen.count >= 256 / 2 / 10); /* at least half the ring in use */
		for (size_t i = 0; i < seen.count; i++) {
			char expected[64];
			snprintf(expected, sizeof(expected), "line-%04zu", next - seen.count + i);
			assert_string_equal(seen.lines[i], expected);
		}
	}
	line_ring_free(&ring);
}

/* A line longer than a quarter of the ring, in a batch: cut, as alone. */
static void test_long_line_in_a_batch_is_cut(void **state)
{
	struct line_ring ring;
	struct seen seen = {0};
	char text[256];
	memset(text, 'x', 200);
	memcpy(text + 200, "\ny\n", 4);
	line_ring_init(&ring, 256);
	line_ring_append_lines(&ring, 1, 0, text, 203, 2);
	line_ring_visit(&ring, 0, remember, &seen);
	assert_int_equal(seen.count, 2);
	assert_int_equal(strlen(seen.lines[0]), 64);
	assert_string_equal(seen.lines[1], "y");
	line_ring_free(&ring);
}

/* A line appended alone is one line, whatever it holds (events). */
static void test_a_line_alone_may_hold_a_newline(void **state)
{
	struct line_ring ring;
	struct seen seen = {0};
	line_ring_init(&ring, 1024);
	append_text(&ring, 1, "two\nparts");
	append_batch(&ring, 2, 0, "x\ny\n");
	line_ring_visit(&ring, 0, remember, &seen);
	assert_int_equal(seen.count, 3);
	assert_string_equal(seen.lines[0], "two\nparts");
	assert_string_equal(seen.lines[2], "y");
	line_ring_free(&ring);
}

/* Batches across the wrap and through a resize. */
static void test_batches_wrap_and_resize(void **state)
{
	struct line_ring ring;
	struct seen seen = {0};
	line_ring_init(&ring, 128);
	for (unsigned i = 0; i < 30; i++) {
		char text[32];
		int length = snprintf(text, sizeof(text), "b%02u-1\nb%02u-2\n", i, i);
		line_ring_append_lines(&ring, i, i % 4, text, (size_t)length, 2);
	}
	line_ring_resize(&ring, 512);
	line_ring_visit(&ring, 0, remember, &seen);
	assert_int_equal(seen.count, ring.count);
	assert_true(seen.count >= 2);
	for (size_t i = 0; i < seen.count; i++) {
		size_t line = 60 - seen.count + i;
		char expected[64];
		snprintf(expected, sizeof(expected), "b%02zu-%zu", line / 2, line % 2 + 1);
		assert_string_equal(seen.lines[i], expected);
		assert_int_equal(seen.times[i], line / 2);
		assert_int_equal(seen.tags[i], line / 2 % 4);
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
	    cmocka_unit_test(test_batches_come_back_line_by_line),
	    cmocka_unit_test(test_tail_begins_inside_a_batch),
	    cmocka_unit_test(test_large_batches_keep_the_newest_lines),
	    cmocka_unit_test(test_long_line_in_a_batch_is_cut),
	    cmocka_unit_test(test_a_line_alone_may_hold_a_newline),
	    cmocka_unit_test(test_batches_wrap_and_resize),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
