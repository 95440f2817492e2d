/* A batch of a task's lines (output_batch.h), the list of sinks that takes
 * it (output_sinks.c: the first paces the others), and the JSON lines that
 * followers get (output_json_lines.c: byte for byte what each line alone
 * made with output_line_json()). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/json_text.h"
#include "supervisor/output/output_batch.h"
#include "supervisor/output/output_json_lines.h"
#include "supervisor/output/output_sinks.h"

static struct output_batch batch_of(const char *text, enum output_stream stream)
{
	return (struct output_batch){
	    .time_ms = 1763978400123,
	    .stream = stream,
	    .name = "web/app",
	    .name_length = 7,
	    .text = text,
	    .length = strlen(text),
	    .line_max = 4096,
	};
}

static void test_next_line_walks_the_lines(void **state)
{
	(void)state;
	struct output_batch batch = batch_of("one\n\nthree\n", OUTPUT_STREAM_MERGED);
	const char *cursor = batch.text, *line;
	size_t length;
	const char *expected[] = {"one", "", "three"};
	size_t count = 0;
	while ((line = output_batch_next_line(&batch, &cursor, &length))) {
		assert_true(count < 3);
		assert_int_equal(length, strlen(expected[count]));
		assert_memory_equal(line, expected[count], length);
		count++;
	}
	assert_int_equal(count, 3);
}

/* A sink that takes at most `room` lines, and one that records. */
struct recorder {
	size_t room;    /* for the pacing one: lines it takes, at most */
	size_t calls;   /* batches handed to it */
	char text[256]; /* what it was given, joined */
	size_t lines;   /* lines it was given, in all */
};

static void pace(void *sink, struct output_batch *batch)
{
	struct recorder *recorder = sink;
	const char *cursor = batch->text;
	size_t length, taken = 0;
	while (taken < recorder->room && output_batch_next_line(batch, &cursor, &length))
		taken++;
	recorder->calls++;
	batch->length = (size_t)(cursor - batch->text);
	batch->lines = taken;
}

static void record(void *sink, struct output_batch *batch)
{
	struct recorder *recorder = sink;
	recorder->calls++;
	strncat(recorder->text, batch->text, batch->length);
	recorder->lines += batch->lines;
}

static const struct output_sink_ops pace_ops = {.lines = pace};
static const struct output_sink_ops record_ops = {.lines = record};

static void test_sinks_after_the_first_get_what_it_took(void **state)
{
	(void)state;
	struct recorder stdout_sink = {.room = 2}, ring = {0}, file = {0};
	struct output_sink_list list;
	output_sink_list_init(&list);
	output_sink_list_add(&list, &pace_ops, &stdout_sink);
	output_sink_list_add(&list, &record_ops, &ring);
	output_sink_list_add(&list, &record_ops, &file);
	const struct output_sinks *sinks = &list.sinks;
	struct output_batch batch = batch_of("a\nb\nc\n", OUTPUT_STREAM_MERGED);
	output_sinks_lines(sinks, &batch);
	assert_int_equal(batch.length, 4);
	assert_int_equal(batch.lines, 2);
	assert_string_equal(ring.text, "a\nb\n");
	assert_string_equal(file.text, "a\nb\n");
	assert_int_equal(ring.lines, 2);

	/* Full: nothing taken, and the others are not called at all. */
	stdout_sink.room = 0;
	batch = batch_of("c\n", OUTPUT_STREAM_MERGED);
	output_sinks_lines(sinks, &batch);
	assert_int_equal(batch.length, 0);
	assert_int_equal(batch.lines, 0);
	assert_int_equal(ring.calls, 1);

	/* A line dropped from stdout (log.mode: non-blocking) still goes
	 * to the others. */
	batch = batch_of("c\n", OUTPUT_STREAM_MERGED);
	batch.lines = 1;
	output_sinks_lines_after_first(sinks, &batch);
	assert_string_equal(ring.text, "a\nb\nc\n");
	assert_string_equal(file.text, "a\nb\nc\n");
	assert_int_equal(stdout_sink.calls, 2);
}

/* What followers got before: each line alone, through jansson. */
static void expect_as_one_at_a_time(const struct output_batch *batch,
				    const struct output_json_lines *lines)
{
	char *expected = NULL;
	size_t expected_length = 0;
	const char *cursor = batch->text, *line;
	size_t length;
	while ((line = output_batch_next_line(batch, &cursor, &length))) {
		size_t one_length;
		char *one = json_line_take(
		    output_line_json(batch->time_ms, "web/app", batch->stream, line, length),
		    &one_length);
		assert_non_null(one);
		expected = realloc(expected, expected_length + one_length);
		memcpy(expected + expected_length, one, one_length);
		expected_length += one_length;
		free(one);
	}
	assert_int_equal(lines->length, expected_length);
	assert_memory_equal(lines->text, expected, expected_length);
	free(expected);
}

static void test_json_lines_as_one_at_a_time(void **state)
{
	(void)state;
	static const char *texts[] = {
	    "hello\n",
	    "two\nlines\n",
	    "\n\n\n",
	    "quote \" backslash \\ tab \t bell \a del \x7f\n",
	    "utf-8 \xc3\xa9\xe2\x82\xac and not \xff\xc3 and \xed\xa0\x80\n",
	    "slash / and <html> & \xf0\x9f\x98\x80\n",
	};
	enum output_stream streams[] = {OUTPUT_STREAM_MERGED, OUTPUT_STREAM_STDOUT,
					OUTPUT_STREAM_STDERR};
	struct output_json_lines lines = {0};
	for (size_t s = 0; s < 3; s++)
		for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
			struct output_batch batch = batch_of(texts[i], streams[s]);
			batch.time_ms += i * 7;
			output_json_lines_build(&lines, &batch);
			expect_as_one_at_a_time(&batch, &lines);
		}
	/* A long line grows the buffer past its first size. */
	char *long_text = malloc(10001);
	memset(long_text, '"', 10000);
	long_text[10000] = '\n';
	struct output_batch batch = batch_of("", OUTPUT_STREAM_MERGED);
	batch.text = long_text;
	batch.length = 10001;
	output_json_lines_build(&lines, &batch);
	expect_as_one_at_a_time(&batch, &lines);
	free(long_text);
	output_json_lines_free(&lines);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_next_line_walks_the_lines),
	    cmocka_unit_test(test_sinks_after_the_first_get_what_it_took),
	    cmocka_unit_test(test_json_lines_as_one_at_a_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
