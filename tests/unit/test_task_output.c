/* A task's output through the real pipe, reader and sink (task_output.c,
 * output_stdout.c, output_frame.c), as batches of whole lines: what reaches
 * corral's stdout and the task's log is what one line at a time made, byte
 * for byte, in every format, under back pressure, and with lines cut
 * across reads or longer than the line buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/json_text.h"
#include "base/loop.h"
#include "supervisor/output/output_stdout.h"
#include "supervisor/output/task_output.h"

struct bytes {
	char *data;
	size_t length, capacity;
};

static void bytes_add(struct bytes *bytes, const void *data, size_t length)
{
	if (bytes->length + length > bytes->capacity) {
		bytes->capacity = (bytes->length + length) * 2 + 64;
		bytes->data = realloc(bytes->data, bytes->capacity);
		assert_non_null(bytes->data);
	}
	memcpy(bytes->data + bytes->length, data, length);
	bytes->length += length;
}

struct fixture {
	struct loop *loop;
	struct output_stdout sink;
	struct output_sink_list sinks; /* the sink, then the log */
	struct task_output output;
	int writer; /* the task's end of its pipe, as a spawn gets it */
	int stdout_read;
	struct bytes out;    /* what came to "corral's stdout" */
	struct bytes logged; /* what the log was given, lines with newlines */
	size_t logged_lines;
};

static void on_lines(void *context, struct output_batch *batch)
{
	struct fixture *fixture = context;
	const char *text = batch->text;
	size_t length = batch->length, lines = batch->lines;
	size_t newlines = 0;
	for (size_t i = 0; i < length; i++)
		newlines += text[i] == '\n';
	assert_int_equal(newlines, lines);
	assert_int_equal(text[length - 1], '\n');
	bytes_add(&fixture->logged, text, length);
	fixture->logged_lines += lines;
}

/* A takeover's output: no pipe until its first writer. */
static bool fixture_pipe_later;

static struct fixture *open_fixture(enum output_format format, enum output_stream stream,
				    size_t capacity)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));
	assert_non_null(fixture);
	assert_int_equal(loop_create(&fixture->loop), 0);
	int fds[2];
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	fixture->stdout_read = fds[0];
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	output_stdout_open(&fixture->sink, fixture->loop, fds[1], capacity);
	fixture->sink.format = format;
	static const struct output_sink_ops log_ops = {.lines = on_lines};
	output_sink_list_init(&fixture->sinks);
	output_sink_list_add(&fixture->sinks, &output_stdout_sink_ops, &fixture->sink);
	output_sink_list_add(&fixture->sinks, &log_ops, fixture);
	assert_int_equal(task_output_open(&fixture->output, fixture->loop, &fixture->sink,
					  &fixture->sinks.sinks, "web/app", stream,
					  fixture_pipe_later),
			 0);
	assert_true(fixture_pipe_later ? fixture->output.watch.fd < 0
				       : fixture->output.watch.fd >= 0);
	fixture->writer = task_output_open_writer(&fixture->output);
	assert_true(fixture->writer >= 0);
	return fixture;
}

static void collect(struct fixture *fixture)
{
	char buffer[65536];
	ssize_t got;
	while ((got = read(fixture->stdout_read, buffer, sizeof(buffer))) > 0)
		bytes_add(&fixture->out, buffer, (size_t)got);
	assert_true(got < 0 && errno == EAGAIN);
}

static int queued(int fd)
{
	int bytes = 0;
	assert_int_equal(ioctl(fd, FIONREAD, &bytes), 0);
	return bytes;
}

/* Runs the loop until the task's pipe is read, and (when `read_stdout`)
 * what the sink holds has come out. */
static void pump(struct fixture *fixture, bool read_stdout)
{
	for (;;) {
		if (read_stdout)
			collect(fixture);
		bool sink_empty = fixture->sink.end == fixture->sink.start;
		if (!queued(fixture->output.watch.fd) && !fixture->output.paused &&
		    (sink_empty || !read_stdout))
			return;
		assert_int_equal(loop_run_once(fixture->loop), 0);
	}
}

static void write_task_output(struct fixture *fixture, const char *data, size_t length)
{
	assert_int_equal(write(fixture->writer, data, length), (ssize_t)length);
	pump(fixture, true);
}

static void finish(struct fixture *fixture)
{
	task_output_drain(&fixture->output); /* the partial last line */
	pump(fixture, true);
	output_stdout_flush(&fixture->sink);
	pump(fixture, true);
}

static void close_fixture(struct fixture *fixture)
{
	close(fixture->writer);
	task_output_close(&fixture->output);
	output_stdout_close(&fixture->sink);
	close(fixture->sink.watch.fd);
	close(fixture->stdout_read);
	loop_free(fixture->loop);
	free(fixture->out.data);
	free(fixture->logged.data);
	free(fixture);
}

/* The task's output as the writes that made it: short and long lines
 * (past the line buffer of 4096), empty ones, bytes JSON escapes, lines
 * cut across writes, a last line without its newline. Each write is read
 * at once (under 64 KiB), as one batch. */
struct workload {
	struct bytes all;
	size_t writes[64];
	size_t write_count;
};

static void make_workload(struct workload *load)
{
	memset(load, 0, sizeof(*load));
	static const size_t lengths[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 77, 300, 1000};
	static const char alphabet[] = "abc\"\\\t\x01\xff\xc3\xa9 ";
	unsigned seed = 1;
	size_t write_start = 0;
	for (int round = 0; round < 12; round++) {
		for (int i = 0; i < 2000; i++) /* yes */
			bytes_add(&load->all, "y\n", 2);
		for (int i = 0; i < 100; i++) {
			seed = seed * 1103515245 + 12345;
			size_t length =
			    lengths[(seed >> 16) % (sizeof(lengths) / sizeof(lengths[0]))];
			for (size_t j = 0; j < length; j++) {
				seed = seed * 1103515245 + 12345;
				char c = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
				bytes_add(&load->all, &c, 1);
			}
			bytes_add(&load->all, "\n", 1);
		}
		/* A long line, in one write with what came before it. */
		size_t long_length = (size_t[]){4095, 4096, 4097, 8192, 10000, 4096 * 3}[round % 6];
		for (size_t j = 0; j < long_length; j++)
			bytes_add(&load->all, "L", 1);
		bytes_add(&load->all, "\n", 1);
		/* Then a line whose start ends this write. */
		bytes_add(&load->all, "cut across", 10);
		load->writes[load->write_count++] = load->all.length - write_start;
		write_start = load->all.length;
		bytes_add(&load->all, " two reads\n", 11);
	}
	bytes_add(&load->all, "no newline at the end", 21);
	load->writes[load->write_count++] = load->all.length - write_start;
}

/* The lines one at a time made: each line cut into pieces of at most 4096
 * bytes, each piece a line. */
static void for_each_piece(const struct bytes *all, void (*piece)(void *, const char *, size_t),
			   void *context)
{
	const char *cursor = all->data, *end = all->data + all->length;
	while (cursor < end) {
		const char *newline = memchr(cursor, '\n', (size_t)(end - cursor));
		const char *line_end = newline ? newline : end;
		size_t length = (size_t)(line_end - cursor);
		do {
			size_t take = length > TASK_OUTPUT_LINE_MAX ? TASK_OUTPUT_LINE_MAX : length;
			piece(context, cursor, take);
			cursor += take;
			length -= take;
		} while (length);
		cursor = line_end + 1;
	}
}

struct expected {
	struct bytes out, logged;
	size_t lines;
	const char *prefix;
	bool json;
};

static void expect_piece(void *context, const char *text, size_t length)
{
	struct expected *expected = context;
	expected->lines++;
	bytes_add(&expected->logged, text, length);
	bytes_add(&expected->logged, "\n", 1);
	bytes_add(&expected->out, expected->prefix, strlen(expected->prefix));
	if (expected->json) {
		char *escaped = malloc(json_escaped_max(length) + 1);
		size_t escaped_length = json_escape_into(escaped, text, length);
		bytes_add(&expected->out, escaped, escaped_length);
		bytes_add(&expected->out, "\"}\n", 3);
		free(escaped);
	} else {
		bytes_add(&expected->out, text, length);
		bytes_add(&expected->out, "\n", 1);
	}
}

static void expect(struct expected *expected, const struct workload *load, const char *prefix,
		   bool json)
{
	memset(expected, 0, sizeof(*expected));
	expected->prefix = prefix;
	expected->json = json;
	for_each_piece(&load->all, expect_piece, expected);
}

static void free_expected(struct expected *expected)
{
	free(expected->out.data);
	free(expected->logged.data);
}

static void run_workload(struct fixture *fixture, const struct workload *load)
{
	size_t at = 0;
	for (size_t i = 0; i < load->write_count; i++) {
		write_task_output(fixture, load->all.data + at, load->writes[i]);
		at += load->writes[i];
	}
	finish(fixture);
}

static void assert_bytes_equal(const struct bytes *got, const struct bytes *expected)
{
	assert_int_equal(got->length, expected->length);
	assert_memory_equal(got->data, expected->data, got->length);
}

static void test_plain_lines_as_one_at_a_time(void **state)
{
	struct workload load;
	make_workload(&load);
	struct expected expected;
	expect(&expected, &load, "web/app | ", false);
	struct fixture *fixture =
	    open_fixture(OUTPUT_FORMAT_PLAIN, OUTPUT_STREAM_MERGED, 256 * 1024);
	run_workload(fixture, &load);
	assert_bytes_equal(&fixture->out, &expected.out);
	assert_bytes_equal(&fixture->logged, &expected.logged);
	assert_int_equal(fixture->logged_lines, expected.lines);
	close_fixture(fixture);
	free_expected(&expected);
	free(load.all.data);
}

/* Opened at a takeover with no pipe (none made only to be replaced by the
 * one handed over): a task started later gets one at its first writer,
 * and its lines come out as they would have. */
static void test_a_pipe_made_at_the_first_writer_carries_the_same(void **state)
{
	(void)state;
	struct workload load;
	make_workload(&load);
	struct expected expected;
	expect(&expected, &load, "web/app | ", false);
	fixture_pipe_later = true;
	struct fixture *fixture =
	    open_fixture(OUTPUT_FORMAT_PLAIN, OUTPUT_STREAM_MERGED, 256 * 1024);
	fixture_pipe_later = false;
	assert_true(fixture->output.watch.fd >= 0);
	run_workload(fixture, &load);
	assert_bytes_equal(&fixture->out, &expected.out);
	assert_bytes_equal(&fixture->logged, &expected.logged);
	close_fixture(fixture);
	free_expected(&expected);
	free(load.all.data);
}

/* A sink far smaller than a read: the reader waits for room, again and
 * again, and nothing is lost or reordered. */
static void test_back_pressure_loses_nothing(void **state)
{
	struct workload load;
	make_workload(&load);
	struct expected expected;
	expect(&expected, &load, "web/app stderr | ", false);
	struct fixture *fixture = open_fixture(OUTPUT_FORMAT_PLAIN, OUTPUT_STREAM_STDERR, 16384);
	run_workload(fixture, &load);
	assert_bytes_equal(&fixture->out, &expected.out);
	assert_bytes_equal(&fixture->logged, &expected.logged);
	close_fixture(fixture);
	free_expected(&expected);
	free(load.all.data);
}

/* Timestamped and JSON: the time (of the read) is the only part that is
 * not known beforehand; it is checked for its shape and taken out. */
static void strip_times(struct bytes *out, size_t time_length,
			bool (*is_time)(const char *, size_t *))
{
	size_t kept = 0;
	for (size_t at = 0; at < out->length;) {
		size_t length = 0;
		assert_true(is_time(out->data + at, &length));
		at += length;
		const char *newline = memchr(out->data + at, '\n', out->length - at);
		assert_non_null(newline);
		size_t rest = (size_t)(newline - (out->data + at)) + 1;
		memmove(out->data + kept, out->data + at, rest);
		kept += rest;
		at += rest;
	}
	out->length = kept;
	(void)time_length;
}

/* "2026-11-24T10:00:00.123Z " */
static bool is_stamp(const char *text, size_t *length)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ ";
	for (size_t i = 0; i < sizeof(shape) - 1; i++)
		if (shape[i] == 'd' ? text[i] < '0' || text[i] > '9' : text[i] != shape[i])
			return false;
	*length = sizeof(shape) - 1;
	return true;
}

/* {"time":1763978400.123, */
static bool is_json_time(const char *text, size_t *length)
{
	if (strncmp(text, "{\"time\":", 8) != 0)
		return false;
	size_t i = 8;
	while (text[i] >= '0' && text[i] <= '9')
		i++;
	if (text[i] != '.' || strspn(text + i + 1, "0123456789") != 3 || text[i + 4] != ',')
		return false;
	*length = i + 5;
	return true;
}

static void test_timestamped_lines_as_one_at_a_time(void **state)
{
	struct workload load;
	make_workload(&load);
	struct expected expected;
	expect(&expected, &load, "web/app stderr | ", false);
	struct fixture *fixture =
	    open_fixture(OUTPUT_FORMAT_TIMESTAMPED, OUTPUT_STREAM_STDERR, 256 * 1024);
	run_workload(fixture, &load);
	strip_times(&fixture->out, 25, is_stamp);
	assert_bytes_equal(&fixture->out, &expected.out);
	close_fixture(fixture);
	free_expected(&expected);
	free(load.all.data);
}

static void test_json_lines_as_one_at_a_time(void **state)
{
	struct workload load;
	make_workload(&load);
	struct expected expected;
	expect(&expected, &load,
	       "\"group\":\"web\",\"task\":\"app\",\"stream\":\"stdout\",\"line\":\"", true);
	struct fixture *fixture =
	    open_fixture(OUTPUT_FORMAT_JSON, OUTPUT_STREAM_STDOUT, 256 * 1024);
	run_workload(fixture, &load);
	strip_times(&fixture->out, 0, is_json_time);
	assert_bytes_equal(&fixture->out, &expected.out);
	close_fixture(fixture);
	free_expected(&expected);
	free(load.all.data);
}

/* log.mode non-blocking with nobody reading stdout: lines stdout cannot
 * take are dropped from it and counted, and every line still reaches the
 * log; what stdout got is the start of the output, in order. */
static void test_non_blocking_drops_from_stdout_only(void **state)
{
	struct workload load;
	make_workload(&load);
	struct expected expected;
	expect(&expected, &load, "web/app | ", false);
	struct fixture *fixture = open_fixture(OUTPUT_FORMAT_PLAIN, OUTPUT_STREAM_MERGED, 16384);
	fixture->output.drop_when_full = true;
	size_t at = 0;
	for (size_t i = 0; i < load.write_count; i++) {
		assert_int_equal(write(fixture->writer, load.all.data + at, load.writes[i]),
				 (ssize_t)load.writes[i]);
		at += load.writes[i];
		pump(fixture, false);
	}
	task_output_drain(&fixture->output);
	assert_bytes_equal(&fixture->logged, &expected.logged);
	assert_true(fixture->output.dropped_lines > 0);
	pump(fixture, true); /* now stdout is read: what the sink kept comes out */
	size_t out_lines = 0;
	for (size_t i = 0; i < fixture->out.length; i++)
		out_lines += fixture->out.data[i] == '\n';
	assert_int_equal(out_lines + fixture->output.dropped_lines, expected.lines);
	assert_true(fixture->out.length <= expected.out.length);
	assert_memory_equal(fixture->out.data, expected.out.data, 65536 / 2);
	close_fixture(fixture);
	free_expected(&expected);
	free(load.all.data);
}

/* A sink behind (a readiness.log pattern matching at later turns): the
 * pipe is not read while it is, what the task wrote stays in it, and all
 * of it comes once the sink has caught up. */
static bool sink_behind;

static bool is_sink_behind(const struct output_sinks *sinks)
{
	(void)sinks;
	return sink_behind;
}

static void test_a_sink_behind_holds_the_pipe(void **state)
{
	(void)state;
	struct fixture *fixture =
	    open_fixture(OUTPUT_FORMAT_PLAIN, OUTPUT_STREAM_MERGED, 256 * 1024);
	fixture->sinks.sinks.behind = is_sink_behind;
	sink_behind = true;
	static const char lines[] = "one\ntwo\n";
	assert_int_equal(write(fixture->writer, lines, sizeof(lines) - 1),
			 (ssize_t)sizeof(lines) - 1);
	for (int turn = 0; turn < 5; turn++)
		assert_int_equal(loop_run_once(fixture->loop), 0);
	assert_int_equal(fixture->logged_lines, 0);
	assert_int_equal(queued(fixture->output.watch.fd), (int)sizeof(lines) - 1);
	sink_behind = false;
	pump(fixture, true);
	assert_int_equal(fixture->logged_lines, 2);
	assert_int_equal(fixture->logged.length, sizeof(lines) - 1);
	assert_memory_equal(fixture->logged.data, lines, sizeof(lines) - 1);
	close_fixture(fixture);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_lines_as_one_at_a_time),
	    cmocka_unit_test(test_a_pipe_made_at_the_first_writer_carries_the_same),
	    cmocka_unit_test(test_back_pressure_loses_nothing),
	    cmocka_unit_test(test_timestamped_lines_as_one_at_a_time),
	    cmocka_unit_test(test_json_lines_as_one_at_a_time),
	    cmocka_unit_test(test_non_blocking_drops_from_stdout_only),
	    cmocka_unit_test(test_a_sink_behind_holds_the_pipe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
