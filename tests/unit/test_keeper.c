/* The keeper's pieces (supervisor/keeper/): what it decides when the loop
 * process ends; the records it holds for it (a state's bytes and the fds
 * it names), sent over a real socketpair and checked to be the very pipes
 * the loop made; how a new loop is given them (each fd at the number the
 * dead loop had, the records in a memfd); and the loop's side of it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor/keeper/keeper.h"
#include "supervisor/keeper/keeper_channel.h"
#include "supervisor/keeper/keeper_decision.h"
#include "supervisor/keeper/keeper_handoff.h"
#include "supervisor/keeper/keeper_loop_side.h"
#include "supervisor/keeper/kept_records.h"

/* waitpid's statuses, as the kernel makes them. */
static int exited(int code)
{
	return (code & 0xff) << 8;
}

static int killed_by(int signal)
{
	return signal & 0x7f;
}

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* Whether `write_end` still has a reader: a pipe whose read ends are all
 * closed says EPIPE. */
static bool has_reader(int write_end)
{
	signal(SIGPIPE, SIG_IGN);
	errno = 0;
	ssize_t wrote = write(write_end, "x", 1);
	if (wrote == 1)
		return true;
	assert_int_equal(errno, EPIPE);
	return false;
}

/* Reads what waits in `fd` (a pipe's read end) into `text`. */
static void read_text(int fd, char *text, size_t size)
{
	ssize_t got = read(fd, text, size - 1);
	assert_true(got >= 0);
	text[got] = '\0';
}

/* A records table that names the loop's fds by number (as the loop side
 * reads one): freed without closing them. */
static void disown(struct kept_records *records)
{
	for (size_t i = 0; i < records->count; i++)
		for (size_t f = 0; f < records->items[i].fd_count; f++)
			records->items[i].fds[f] = -1;
	kept_records_free(records);
}

/* ---- what the keeper decides ---- */

static void test_an_exit_passes_its_code_on(void **state)
{
	(void)state;
	struct keeper_deaths deaths = {0};
	struct keeper_decision decision = keeper_loop_ended(&deaths, exited(3), 1000);
	assert_int_equal(decision.action, KEEPER_EXIT);
	assert_int_equal(decision.exit_code, 3);
	decision = keeper_loop_ended(&deaths, exited(0), 1000);
	assert_int_equal(decision.action, KEEPER_EXIT);
	assert_int_equal(decision.exit_code, 0);
	assert_int_equal(deaths.count, 0);
}

static void test_a_death_by_a_signal_is_restored_until_too_many_in_a_minute(void **state)
{
	(void)state;
	struct keeper_deaths deaths = {0};
	for (unsigned i = 0; i < KEEPER_DEATHS_ALLOWED; i++) {
		struct keeper_decision decision =
		    keeper_loop_ended(&deaths, killed_by(SIGKILL), 1000 + i * 1000);
		assert_int_equal(decision.action, KEEPER_RESTORE);
		assert_int_equal(decision.signal, SIGKILL);
	}
	struct keeper_decision decision = keeper_loop_ended(&deaths, killed_by(SIGSEGV), 10000);
	assert_int_equal(decision.action, KEEPER_GIVE_UP);
	assert_int_equal(decision.exit_code, 128 + SIGSEGV);
	/* A minute after the first deaths, they no longer count. */
	decision = keeper_loop_ended(&deaths, killed_by(SIGKILL), 1000 + KEEPER_DEATHS_WINDOW_MS);
	assert_int_equal(decision.action, KEEPER_RESTORE);
	assert_int_equal(deaths.count, KEEPER_DEATHS_ALLOWED);
}

/* ---- the channel and the records ---- */

struct channel {
	int loop_end, keeper_end;
	void *buffer; /* KEEPER_MESSAGE_MAX, for what the keeper receives */
};

static struct channel channel_open(void)
{
	int ends[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends), 0);
	struct channel channel = {ends[0], ends[1], malloc(KEEPER_MESSAGE_MAX)};
	assert_non_null(channel.buffer);
	return channel;
}

static void channel_close(struct channel *channel)
{
	close(channel->loop_end);
	close(channel->keeper_end);
	free(channel->buffer);
}

/* The loop sends a message, the keeper receives it and applies it. */
static int pass(struct channel *channel, struct kept_records *records,
		const struct keeper_message *message, const int *numbers, const int *fds,
		const void *bytes)
{
	int result = keeper_channel_send(channel->loop_end, message, numbers, fds, bytes);
	if (result < 0)
		return result;
	struct keeper_received received;
	result = keeper_channel_receive(channel->keeper_end, channel->buffer, &received);
	if (result == 0)
		keeper_channel_apply(records, &received);
	return result;
}

/* The loop's RECORD of `slot`: `text` and its fds, each under its own
 * number in the loop. */
static int pass_record(struct channel *channel, struct kept_records *records, uint32_t slot,
		       const char *text, const int *fds, size_t fd_count)
{
	struct keeper_message record = {.kind = KEEPER_RECORD,
					.slot = slot,
					.fd_count = (uint32_t)fd_count,
					.length = (uint32_t)strlen(text)};
	return pass(channel, records, &record, fds, fds, text);
}

static void test_held_fds_are_the_loops_pipes_and_outlive_its_copies(void **state)
{
	(void)state;
	struct channel channel = channel_open();
	struct kept_records records;
	kept_records_init(&records);
	int output[2], error_output[2];
	assert_int_equal(pipe2(output, O_CLOEXEC), 0);
	assert_int_equal(pipe2(error_output, O_CLOEXEC), 0);
	int fds[] = {output[0], error_output[0]};
	assert_int_equal(pass_record(&channel, &records, 7, "task 7 running", fds, 2), 0);
	const struct kept_record *record = kept_records_find(&records, 7);
	assert_non_null(record);
	assert_int_equal(record->length, strlen("task 7 running"));
	assert_memory_equal(record->bytes, "task 7 running", record->length);
	assert_int_equal(record->fd_count, 2);
	assert_int_equal(record->numbers[0], output[0]);
	assert_int_equal(record->numbers[1], error_output[0]);
	assert_false(record->stale);
	assert_false(record->unsettled);
	assert_int_equal(kept_records_fd_count(&records), 2);
	/* The keeper's own fds, close-on-exec: no task the keeper might
	 * start inherits one. */
	assert_int_not_equal(record->fds[0], output[0]);
	assert_true(fcntl(record->fds[0], F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(record->fds[1], F_GETFD) & FD_CLOEXEC);

	/* The loop dies: its read ends close. What the task writes next waits
	 * in the pipe, read from the keeper's ends. */
	close(output[0]);
	close(error_output[0]);
	assert_int_equal(write(output[1], "line 1\n", 7), 7);
	assert_int_equal(write(error_output[1], "oops\n", 5), 5);
	char text[16];
	read_text(record->fds[0], text, sizeof(text));
	assert_string_equal(text, "line 1\n");
	read_text(record->fds[1], text, sizeof(text));
	assert_string_equal(text, "oops\n");

	/* The slot forgotten (no bytes, no fds): the keeper's ends close, and
	 * the pipes have no reader. */
	assert_int_equal(pass_record(&channel, &records, 7, "", NULL, 0), 0);
	assert_null(kept_records_find(&records, 7));
	assert_int_equal(records.count, 0);
	assert_int_equal(kept_records_fd_count(&records), 0);
	assert_false(has_reader(output[1]));
	assert_false(has_reader(error_output[1]));
	close(output[1]);
	close(error_output[1]);
	kept_records_free(&records);
	channel_close(&channel);
}

static void test_a_new_record_under_a_slot_replaces_and_closes_the_old(void **state)
{
	(void)state;
	struct channel channel = channel_open();
	struct kept_records records;
	kept_records_init(&records);
	int first[2], second[2], other[2];
	assert_int_equal(pipe2(first, O_CLOEXEC), 0);
	assert_int_equal(pipe2(second, O_CLOEXEC), 0);
	assert_int_equal(pipe2(other, O_CLOEXEC), 0);
	assert_int_equal(pass_record(&channel, &records, 2, "first run", &first[0], 1), 0);
	assert_int_equal(pass_record(&channel, &records, 5, "another task", &other[0], 1), 0);
	assert_int_equal(pass_record(&channel, &records, 2, "restarted", &second[0], 1), 0);
	assert_int_equal(records.count, 2);
	assert_int_equal(kept_records_fd_count(&records), 2);
	const struct kept_record *record = kept_records_find(&records, 2);
	assert_non_null(record);
	assert_int_equal(record->length, strlen("restarted"));
	assert_memory_equal(record->bytes, "restarted", record->length);
	assert_int_equal(record->numbers[0], second[0]);
	close(first[0]);
	close(second[0]);
	close(other[0]);
	assert_false(has_reader(first[1])); /* the old one: closed */
	assert_true(has_reader(second[1])); /* the new one: held */
	assert_true(has_reader(other[1]));  /* another slot's: untouched */
	kept_records_free(&records);
	assert_false(has_reader(second[1])); /* freed: every held fd closed */
	assert_false(has_reader(other[1]));
	close(first[1]);
	close(second[1]);
	close(other[1]);
	channel_close(&channel);
}

/* The loop closed a task's fd and the number went to another task's:
 * the older record no longer says what is true. */
static void test_two_records_naming_one_number_make_the_older_stale(void **state)
{
	(void)state;
	struct channel channel = channel_open();
	struct kept_records records;
	kept_records_init(&records);
	int old_pipe[2], new_pipe[2], kept_pipe[2];
	assert_int_equal(pipe2(old_pipe, O_CLOEXEC), 0);
	assert_int_equal(pipe2(new_pipe, O_CLOEXEC), 0);
	assert_int_equal(pipe2(kept_pipe, O_CLOEXEC), 0);
	/* Both sent under the number 40 (numbers are what the loop says). */
	struct keeper_message record = {.kind = KEEPER_RECORD, .slot = 1, .fd_count = 2};
	int numbers[] = {40, 41}, fds[] = {old_pipe[0], kept_pipe[0]};
	record.length = 3;
	assert_int_equal(pass(&channel, &records, &record, numbers, fds, "old"), 0);
	record =
	    (struct keeper_message){.kind = KEEPER_RECORD, .slot = 2, .fd_count = 1, .length = 3};
	assert_int_equal(pass(&channel, &records, &record, &numbers[0], &new_pipe[0], "new"), 0);
	close(old_pipe[0]);
	close(new_pipe[0]);
	close(kept_pipe[0]);

	const struct kept_record *older = kept_records_find(&records, 1);
	const struct kept_record *newer = kept_records_find(&records, 2);
	assert_non_null(older);
	assert_non_null(newer);
	assert_true(older->stale);
	assert_false(newer->stale);
	assert_int_equal(older->fds[0], -1); /* lost */
	assert_true(older->fds[1] >= 0);     /* its other fd is still held */
	assert_true(newer->fds[0] >= 0);
	assert_int_equal(kept_records_fd_count(&records), 2);
	assert_false(has_reader(old_pipe[1]));
	assert_true(has_reader(new_pipe[1]));
	assert_true(has_reader(kept_pipe[1]));
	kept_records_free(&records);
	close(old_pipe[1]);
	close(new_pipe[1]);
	close(kept_pipe[1]);
	channel_close(&channel);
}

static void test_unsettled_marks_a_record_until_the_next_one(void **state)
{
	(void)state;
	struct channel channel = channel_open();
	struct kept_records records;
	kept_records_init(&records);
	assert_int_equal(pass_record(&channel, &records, 3, "starting", NULL, 0), 0);
	assert_int_equal(pass_record(&channel, &records, 4, "running", NULL, 0), 0);
	struct keeper_message unsettled = {.kind = KEEPER_UNSETTLED, .slot = 3};
	assert_int_equal(pass(&channel, &records, &unsettled, NULL, NULL, NULL), 0);
	assert_true(kept_records_find(&records, 3)->unsettled);
	assert_false(kept_records_find(&records, 4)->unsettled);
	/* A slot with no record: nothing to mark, nothing made. */
	unsettled.slot = 9;
	assert_int_equal(pass(&channel, &records, &unsettled, NULL, NULL, NULL), 0);
	assert_null(kept_records_find(&records, 9));
	assert_int_equal(records.count, 2);
	/* The task settled: its new record says so. */
	assert_int_equal(pass_record(&channel, &records, 3, "running", NULL, 0), 0);
	assert_false(kept_records_find(&records, 3)->unsettled);
	kept_records_free(&records);
	channel_close(&channel);
}

/* A message as a confused or hostile sender would make it: `length`
 * bytes of `payload` and `count` fds, whatever its header says. */
static void raw_send(int socket, const void *payload, size_t length, const int *fds, size_t count)
{
	struct iovec part = {(void *)payload, length};
	union {
		char bytes[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} control;
	memset(&control, 0, sizeof(control));
	struct msghdr header = {.msg_iov = &part, .msg_iovlen = 1};
	if (count) {
		header.msg_control = control.bytes;
		header.msg_controllen = CMSG_SPACE(sizeof(int) * count);
		struct cmsghdr *rights = CMSG_FIRSTHDR(&header);
		rights->cmsg_level = SOL_SOCKET;
		rights->cmsg_type = SCM_RIGHTS;
		rights->cmsg_len = CMSG_LEN(sizeof(int) * count);
		memcpy(CMSG_DATA(rights), fds, sizeof(int) * count);
	}
	assert_int_equal(sendmsg(socket, &header, 0), (ssize_t)length);
}

/* `payload` sent with a pipe's read end (when `with_fd`) is refused by
 * the receiver, and the fd that came is closed, not kept by mistake. */
static void assert_refused(struct channel *channel, const void *payload, size_t length,
			   bool with_fd)
{
	int ends[2];
	assert_int_equal(pipe2(ends, O_CLOEXEC), 0);
	raw_send(channel->loop_end, payload, length, &ends[0], with_fd ? 1 : 0);
	close(ends[0]);
	struct keeper_received received;
	assert_int_equal(keeper_channel_receive(channel->keeper_end, channel->buffer, &received),
			 -EPROTO);
	assert_false(has_reader(ends[1]));
	close(ends[1]);
}

static void test_a_message_not_whole_or_whose_fds_do_not_match_is_refused(void **state)
{
	(void)state;
	struct channel channel = channel_open();
	char payload[sizeof(struct keeper_message) + 2 * sizeof(int) + 8];
	struct keeper_message header = {.kind = KEEPER_RECORD, .slot = 1, .fd_count = 2};
	int numbers[] = {10, 11};
	/* Two fds said, one came. */
	memcpy(payload, &header, sizeof(header));
	memcpy(payload + sizeof(header), numbers, sizeof(numbers));
	assert_refused(&channel, payload, sizeof(header) + sizeof(numbers), true);
	/* One fd said and came, but 8 bytes of state said and 4 came. */
	header =
	    (struct keeper_message){.kind = KEEPER_RECORD, .slot = 1, .fd_count = 1, .length = 8};
	memcpy(payload, &header, sizeof(header));
	memcpy(payload + sizeof(header), numbers, sizeof(int));
	memcpy(payload + sizeof(header) + sizeof(int), "abcd", 4);
	assert_refused(&channel, payload, sizeof(header) + sizeof(int) + 4, true);
	/* More than said: 8 bytes said, 12 came. */
	memcpy(payload + sizeof(header) + sizeof(int), "abcdefghijkl", 12);
	assert_refused(&channel, payload, sizeof(header) + sizeof(int) + 12, true);
	/* Shorter than a header. */
	assert_refused(&channel, payload, sizeof(header) - 1, true);
	/* An UNSETTLED names no fd: one attached is refused. */
	header = (struct keeper_message){.kind = KEEPER_UNSETTLED, .slot = 1};
	assert_refused(&channel, &header, sizeof(header), true);
	/* More fds said than a record may have. */
	header =
	    (struct keeper_message){.kind = KEEPER_RECORD, .fd_count = KEPT_RECORD_FDS_MAX + 1};
	assert_refused(&channel, &header, sizeof(header), false);

	/* The sender refuses records over the limits itself. */
	struct keeper_message big = {.kind = KEEPER_RECORD, .length = KEPT_RECORD_BYTES_MAX + 1};
	assert_int_equal(keeper_channel_send(channel.loop_end, &big, NULL, NULL, ""), -EMSGSIZE);
	big = (struct keeper_message){.kind = KEEPER_RECORD, .fd_count = KEPT_RECORD_FDS_MAX + 1};
	assert_int_equal(keeper_channel_send(channel.loop_end, &big, NULL, NULL, NULL), -EMSGSIZE);

	/* The largest record passes whole. */
	char *bytes = malloc(KEPT_RECORD_BYTES_MAX);
	assert_non_null(bytes);
	memset(bytes, 'q', KEPT_RECORD_BYTES_MAX);
	bytes[KEPT_RECORD_BYTES_MAX - 1] = 'z';
	struct kept_records records;
	kept_records_init(&records);
	struct keeper_message largest = {
	    .kind = KEEPER_RECORD, .slot = 8, .length = KEPT_RECORD_BYTES_MAX};
	assert_int_equal(pass(&channel, &records, &largest, NULL, NULL, bytes), 0);
	const struct kept_record *record = kept_records_find(&records, 8);
	assert_non_null(record);
	assert_int_equal(record->length, KEPT_RECORD_BYTES_MAX);
	assert_memory_equal(record->bytes, bytes, KEPT_RECORD_BYTES_MAX);
	kept_records_free(&records);
	free(bytes);
	channel_close(&channel);
}

static void test_reaped_goes_the_other_way_and_an_empty_or_gone_channel_is_said(void **state)
{
	(void)state;
	struct channel channel = channel_open();
	struct keeper_message reaped = {.kind = KEEPER_REAPED, .pid = 42, .status = exited(1)};
	assert_int_equal(keeper_channel_send(channel.keeper_end, &reaped, NULL, NULL, NULL), 0);
	struct keeper_received received;
	assert_int_equal(keeper_channel_receive(channel.loop_end, channel.buffer, &received), 0);
	assert_int_equal(received.message.kind, KEEPER_REAPED);
	assert_int_equal(received.message.pid, 42);
	assert_int_equal(received.message.status, exited(1));
	/* Applied to records, a REAPED changes nothing. */
	struct kept_records records;
	kept_records_init(&records);
	keeper_channel_apply(&records, &received);
	assert_int_equal(records.count, 0);
	/* Nothing waits: -EAGAIN; the other end gone: -EPIPE. */
	assert_int_equal(keeper_channel_receive(channel.keeper_end, channel.buffer, &received),
			 -EAGAIN);
	close(channel.loop_end);
	assert_int_equal(keeper_channel_receive(channel.keeper_end, channel.buffer, &received),
			 -EPIPE);
	close(channel.keeper_end);
	free(channel.buffer);
}

/* ---- the records in a memfd, for the next loop ---- */

static void test_the_records_memfd_keeps_slots_bytes_numbers_and_flags(void **state)
{
	(void)state;
	struct kept_records held;
	kept_records_init(&held);
	int a = dup(0), b = dup(0), c = dup(0), d = dup(0);
	assert_true(a >= 0 && b >= 0 && c >= 0 && d >= 0);
	int numbers_1[] = {30, 31}, fds_1[] = {a, b};
	kept_records_put(&held, 1, "one", 3, numbers_1, fds_1, 2);
	kept_records_put(&held, 2, "two\0binary", 10, (int[]){32}, &c, 1);
	kept_records_mark_unsettled(&held, 2);
	kept_records_put(&held, 3, "no fds", 6, NULL, NULL, 0);
	/* 31 goes to slot 4: slot 1 loses it and is stale. */
	kept_records_put(&held, 4, "four", 4, (int[]){31}, &d, 1);
	assert_false(is_open(b));

	int memfd = kept_records_to_memfd(&held);
	assert_true(memfd >= 0);
	assert_false(fcntl(memfd, F_GETFD) & FD_CLOEXEC); /* for the loop's exec */
	struct kept_records got;
	char error[256] = "";
	assert_int_equal(kept_records_read(memfd, &got, error, sizeof(error)), 0);
	assert_int_equal(got.count, 4);

	const struct kept_record *one = kept_records_find(&got, 1);
	assert_non_null(one);
	assert_true(one->stale);
	assert_false(one->unsettled);
	assert_int_equal(one->length, 3);
	assert_memory_equal(one->bytes, "one", 3);
	assert_int_equal(one->fd_count, 2);
	/* The loop's fds are the numbers; the lost one is -1. */
	assert_int_equal(one->fds[0], 30);
	assert_int_equal(one->numbers[0], 30);
	assert_int_equal(one->fds[1], -1);
	assert_int_equal(one->numbers[1], -1);

	const struct kept_record *two = kept_records_find(&got, 2);
	assert_non_null(two);
	assert_false(two->stale);
	assert_true(two->unsettled);
	assert_int_equal(two->length, 10);
	assert_memory_equal(two->bytes, "two\0binary", 10);
	assert_int_equal(two->fd_count, 1);
	assert_int_equal(two->fds[0], 32);

	const struct kept_record *three = kept_records_find(&got, 3);
	assert_non_null(three);
	assert_int_equal(three->fd_count, 0);
	assert_memory_equal(three->bytes, "no fds", 6);

	const struct kept_record *four = kept_records_find(&got, 4);
	assert_non_null(four);
	assert_false(four->stale);
	assert_int_equal(four->fds[0], 31);
	assert_int_equal(kept_records_fd_count(&got), 3);

	/* Reading opened and closed nothing: the keeper's fds are its own. */
	assert_true(is_open(a) && is_open(c) && is_open(d));
	disown(&got);
	kept_records_free(&held);
	assert_false(is_open(a) || is_open(c) || is_open(d));
	close(memfd);
}

/* The memfd `records` makes, cut to `size` bytes (or its magic broken). */
static int cut_memfd(const struct kept_records *records, off_t cut, bool break_magic)
{
	int memfd = kept_records_to_memfd(records);
	assert_true(memfd >= 0);
	off_t size = lseek(memfd, 0, SEEK_END);
	assert_true(size > cut);
	assert_int_equal(ftruncate(memfd, size - cut), 0);
	if (break_magic)
		assert_int_equal(pwrite(memfd, "X", 1, 0), 1);
	return memfd;
}

static void test_a_records_memfd_not_whole_is_refused_and_closes_nothing(void **state)
{
	(void)state;
	/* The loop's fds, as the keeper placed them: their numbers are ours. */
	int first = dup(0), second = dup(0);
	assert_true(first >= 0 && second >= 0);
	struct kept_records held;
	kept_records_init(&held);
	kept_records_put(&held, 1, "first", 5, &first, (int[]){dup(0)}, 1);
	kept_records_put(&held, 2, "second", 6, &second, (int[]){dup(0)}, 1);
	struct {
		off_t cut;
		bool break_magic;
		const char *error;
	} wrong[] = {
	    {1, false, "the kept records are not whole"}, /* the last byte of state */
	    {7, false, "the kept records are not whole"}, /* into the last fd number */
	    {0, true, "the kept records are not whole"},  /* not our magic */
	    {0, false, NULL},                             /* (whole: read) */
	};
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		int memfd = cut_memfd(&held, wrong[i].cut, wrong[i].break_magic);
		struct kept_records got;
		char error[256] = "";
		int result = kept_records_read(memfd, &got, error, sizeof(error));
		close(memfd);
		if (!wrong[i].error) {
			assert_int_equal(result, 0);
			assert_int_equal(got.count, 2);
			disown(&got);
			continue;
		}
		assert_int_equal(result, -EINVAL);
		assert_string_equal(error, wrong[i].error);
		assert_int_equal(got.count, 0);
		/* The records read before the cut named real fds: still open. */
		assert_true(is_open(first));
		assert_true(is_open(second));
	}
	/* Made by hand: two records naming `first`, or one slot twice. A
	 * memfd the keeper wrote has neither; reading one must not close the
	 * fd as the older record's. */
	uint32_t slots[][2] = {{1, 2}, {1, 1}};
	int numbers[][2] = {{first, first}, {first, second}};
	for (size_t i = 0; i < 2; i++) {
		int memfd = memfd_create("twice", MFD_CLOEXEC);
		uint32_t count = 2;
		assert_int_equal(write(memfd, "CRREC1\0\0", 8), 8);
		assert_int_equal(write(memfd, &count, 4), 4);
		for (size_t r = 0; r < 2; r++) {
			uint32_t head[4] = {slots[i][r], 0, 1, 1};
			assert_int_equal(write(memfd, head, sizeof(head)), sizeof(head));
			assert_int_equal(write(memfd, &numbers[i][r], sizeof(int)), sizeof(int));
			assert_int_equal(write(memfd, "s", 1), 1);
		}
		struct kept_records got;
		char error[256] = "";
		assert_int_equal(kept_records_read(memfd, &got, error, sizeof(error)), -EINVAL);
		assert_string_equal(error, "the kept records name a slot or an fd twice");
		assert_int_equal(got.count, 0);
		assert_true(is_open(first));
		assert_true(is_open(second));
		close(memfd);
	}
	/* Shorter than its head. */
	int memfd = memfd_create("short", MFD_CLOEXEC);
	assert_int_equal(write(memfd, "CRREC1", 6), 6);
	struct kept_records got;
	char error[256] = "";
	assert_int_equal(kept_records_read(memfd, &got, error, sizeof(error)), -EINVAL);
	assert_string_equal(error, "the kept records are too short");
	close(memfd);
	kept_records_free(&held);
	close(first);
	close(second);
}

/* ---- placing the held fds in a new loop ---- */

/* The inode of what `fd` is open on. */
static ino_t inode_of(int fd)
{
	struct stat status;
	assert_int_equal(fstat(fd, &status), 0);
	return status.st_ino;
}

static void test_place_moves_held_fds_to_their_numbers_over_whatever_is_there(void **state)
{
	(void)state;
	enum { low = 200, high = 201, third = 202 };
	int swap_a[2], swap_b[2], moved[2], other[2];
	assert_int_equal(pipe2(swap_a, O_CLOEXEC), 0);
	assert_int_equal(pipe2(swap_b, O_CLOEXEC), 0);
	assert_int_equal(pipe2(moved, O_CLOEXEC), 0);
	assert_int_equal(pipe2(other, O_CLOEXEC), 0);
	ino_t a = inode_of(swap_a[0]), b = inode_of(swap_b[0]), m = inode_of(moved[0]),
	      o = inode_of(other[0]);
	/* Held at each other's numbers: a at `low` wants `high`, b the other
	 * way round; the third wants a number an fd of the process (one of
	 * `others`) has now. */
	assert_int_equal(dup3(swap_a[0], low, O_CLOEXEC), low);
	assert_int_equal(dup3(swap_b[0], high, O_CLOEXEC), high);
	assert_int_equal(dup3(other[0], third, O_CLOEXEC), third);
	close(swap_a[0]);
	close(swap_b[0]);
	close(other[0]);
	int lost = -1, unused = dup(0);
	struct kept_records records;
	kept_records_init(&records);
	kept_records_put(&records, 1, "a", 1, (int[]){high}, (int[]){low}, 1);
	kept_records_put(&records, 2, "b", 1, (int[]){low, 150}, (int[]){high, unused}, 2);
	records.items[1].fds[1] = lost; /* lost: skipped, 150 stays free */
	close(unused);
	kept_records_put(&records, 3, "m", 1, (int[]){third}, &moved[0], 1);
	int other_fd = third;
	int *others[] = {&other_fd};

	assert_int_equal(kept_records_place(&records, others, 1), 0);
	assert_int_equal(inode_of(high), a);
	assert_int_equal(inode_of(low), b);
	assert_int_equal(inode_of(third), m);
	assert_false(is_open(150));
	/* Each record says its fd is at its number now; none close-on-exec. */
	for (size_t i = 0; i < records.count; i++) {
		const struct kept_record *record = &records.items[i];
		assert_int_equal(record->fds[0], record->numbers[0]);
		assert_false(fcntl(record->fds[0], F_GETFD) & FD_CLOEXEC);
	}
	assert_false(is_open(moved[0]));
	/* The other fd: moved above every number, still the same pipe. */
	assert_true(other_fd > third);
	assert_int_equal(inode_of(other_fd), o);
	/* Bytes written reach the fds at their new numbers. */
	assert_int_equal(write(swap_a[1], "to a", 4), 4);
	char text[8];
	read_text(high, text, sizeof(text));
	assert_string_equal(text, "to a");
	kept_records_free(&records);
	assert_false(is_open(low) || is_open(high) || is_open(third));
	close(other_fd);
	close(swap_a[1]);
	close(swap_b[1]);
	close(moved[1]);
	close(other[1]);
}

/* ---- the keeper itself, with loops that are forked functions ---- */

struct script {
	/* Run in the forked loop process with the records as the loop side
	 * reads them: its exit. */
	int (*loop)(int channel, const struct kept_records *records, unsigned restores);
	unsigned starts;
};

/* What keeper_exec_loop does, but for the exec: the held fds at their
 * numbers, the records through a memfd. */
static pid_t start_scripted(void *context, int channel, const struct kept_records *held,
			    unsigned restores)
{
	struct script *script = context;
	script->starts++;
	pid_t pid = fork();
	if (pid != 0)
		return pid < 0 ? -errno : pid;
	struct kept_records records = *held;
	records.items = calloc(held->count + 1, sizeof(*records.items));
	if (!records.items)
		_exit(100);
	if (held->count)
		memcpy(records.items, held->items, held->count * sizeof(*records.items));
	int memfd = kept_records_to_memfd(held);
	int *others[] = {&channel, &memfd};
	if (memfd < 0 || kept_records_place(&records, others, 2) < 0)
		_exit(101);
	struct kept_records given;
	char error[256];
	if (kept_records_read(memfd, &given, error, sizeof(error)) < 0)
		_exit(102);
	close(memfd);
	_exit(script->loop(channel, &given, restores));
}

static int run_keeper(struct script *script)
{
	struct keeper_settings settings = {.start_loop = start_scripted, .context = script};
	return keeper_run(&settings);
}

static int exits_at_once(int channel, const struct kept_records *records, unsigned restores)
{
	(void)channel, (void)records, (void)restores;
	return 4;
}

static void test_the_keeper_ends_with_the_loops_exit_code(void **state)
{
	(void)state;
	struct script script = {.loop = exits_at_once};
	assert_int_equal(run_keeper(&script), 4);
	assert_int_equal(script.starts, 1);
}

/* A number no fd of a new process has unless the keeper put one there. */
#define HANDED_NUMBER 77

/* In the first loop: a pipe with `data` in it, its read end moved to
 * HANDED_NUMBER and sent in the record of `slot` with `text`. */
static int record_a_pipe(int channel, uint32_t slot, const char *text, const void *data,
			 size_t size)
{
	int ends[2];
	if (pipe2(ends, O_CLOEXEC) < 0 || write(ends[1], data, size) != (ssize_t)size ||
	    dup2(ends[0], HANDED_NUMBER) < 0)
		return 1;
	close(ends[0]);
	struct keeper_message record = {
	    .kind = KEEPER_RECORD, .slot = slot, .fd_count = 1, .length = (uint32_t)strlen(text)};
	return keeper_channel_send(channel, &record, (int[]){HANDED_NUMBER}, (int[]){HANDED_NUMBER},
				   text) < 0;
}

/* In the next loop: the record of `slot` says `text` and has its fd at
 * HANDED_NUMBER. */
static bool given_back(const struct kept_records *records, uint32_t slot, const char *text)
{
	const struct kept_record *record = kept_records_find(records, slot);
	return record && record->length == strlen(text) &&
	       memcmp(record->bytes, text, record->length) == 0 && record->fd_count == 1 &&
	       record->fds[0] == HANDED_NUMBER && !record->stale;
}

/* The first loop leaves a line in a pipe whose read end the keeper holds,
 * and is killed; the second finds the same pipe at the same number, with
 * the line in it, and the state's bytes. */
static int hands_a_pipe_over(int channel, const struct kept_records *records, unsigned restores)
{
	if (restores == 0) {
		if (record_a_pipe(channel, 3, "task 3: pid 1234", "kept\n", 5))
			return 1;
		raise(SIGKILL);
	}
	char line[8];
	if (restores != 1)
		return 2;
	if (!given_back(records, 3, "task 3: pid 1234"))
		return 3;
	if (read(HANDED_NUMBER, line, sizeof(line)) != 5 || memcmp(line, "kept\n", 5) != 0)
		return 4;
	return 7;
}

static void test_a_loop_killed_is_started_again_with_what_it_held(void **state)
{
	(void)state;
	struct script script = {.loop = hands_a_pipe_over};
	assert_int_equal(run_keeper(&script), 7);
	assert_int_equal(script.starts, 2);
}

static int always_killed(int channel, const struct kept_records *records, unsigned restores)
{
	(void)channel, (void)records, (void)restores;
	raise(SIGKILL);
	return 1;
}

static void test_the_keeper_gives_up_on_a_loop_that_always_dies(void **state)
{
	(void)state;
	struct script script = {.loop = always_killed};
	assert_int_equal(run_keeper(&script), 128 + SIGKILL);
	assert_int_equal(script.starts, KEEPER_DEATHS_ALLOWED + 1);
}

/* A SIGTERM sent to the keeper (as a container engine sends it to PID 1)
 * reaches the loop, which exits with a code of its own. */
static int waits_for_sigterm(int channel, const struct kept_records *records, unsigned restores)
{
	(void)channel, (void)records, (void)restores;
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	kill(getppid(), SIGTERM);
	int got = 0;
	return sigwait(&term, &got) == 0 && got == SIGTERM ? 42 : 1;
}

static void test_signals_to_the_keeper_go_to_the_loop(void **state)
{
	(void)state;
	struct script script = {.loop = waits_for_sigterm};
	assert_int_equal(run_keeper(&script), 42);
}

/* In the first loop (which it kills): a "task" that outlives the loop,
 * exits 5 after 100 ms, and has its pid in a held pipe (record 1). In the
 * next ones: that pid, read from the pipe given back; 0 if it is not. */
static pid_t orphan_task(int channel, const struct kept_records *records, unsigned restores)
{
	if (restores == 0) {
		pid_t task = fork();
		if (task == 0) {
			usleep(100 * 1000);
			_exit(5);
		}
		if (task < 0 || record_a_pipe(channel, 1, "task 1", &task, sizeof(task)))
			return 0;
		raise(SIGKILL);
	}
	pid_t task;
	if (!given_back(records, 1, "task 1") ||
	    read(HANDED_NUMBER, &task, sizeof(task)) != sizeof(task))
		return 0;
	return task;
}

/* The first loop starts a "task" that outlives it (and says its pid in a
 * held pipe); the keeper reaps it, and tells the next loop how it
 * ended. */
static int learns_of_an_orphans_exit(int channel, const struct kept_records *records,
				     unsigned restores)
{
	pid_t task = orphan_task(channel, records, restores);
	if (task <= 0)
		return 1;
	void *buffer = malloc(KEEPER_MESSAGE_MAX);
	for (;;) {
		struct pollfd readable = {channel, POLLIN, 0};
		if (!buffer || poll(&readable, 1, 10000) != 1)
			return 2;
		struct keeper_received received;
		if (keeper_channel_receive(channel, buffer, &received) < 0)
			return 3;
		const struct keeper_message *message = &received.message;
		if (message->kind == KEEPER_REAPED && message->pid == task)
			return WIFEXITED(message->status) && WEXITSTATUS(message->status) == 5 ? 9
											       : 4;
	}
}

static void test_a_task_orphaned_by_the_loops_death_is_reaped_and_told(void **state)
{
	(void)state;
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); /* as PID 1 is */
	struct script script = {.loop = learns_of_an_orphans_exit};
	assert_int_equal(run_keeper(&script), 9);
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

/* The next message, if one comes within `ms`: its kind (REAPED's pid
 * and number in `message`), 0 for none, -1 for an error. */
static int next_message(int channel, int ms, struct keeper_message *message)
{
	static char buffer[KEEPER_MESSAGE_MAX] __attribute__((aligned(8)));
	struct pollfd readable = {channel, POLLIN, 0};
	int ready = poll(&readable, 1, ms);
	if (ready <= 0)
		return ready < 0 ? -1 : 0;
	struct keeper_received received;
	if (keeper_channel_receive(channel, buffer, &received) < 0)
		return -1;
	*message = received.message;
	return (int)message->kind;
}

/* Loop 0 starts a task that outlives it and is killed; loop 1 reads the
 * task's REAPED and is killed before it says SEEN: loop 2 gets the same
 * REAPED again, says SEEN, and is killed; loop 3 gets none. */
static int acts_on_an_exit_across_deaths(int channel, const struct kept_records *records,
					 unsigned restores)
{
	pid_t task = orphan_task(channel, records, restores);
	if (task <= 0)
		return 1;
	/* Kept for the next loop: the pipe goes back with the same pid. */
	if (restores < 3 && record_a_pipe(channel, 1, "task 1", &task, sizeof(task)))
		return 1;
	struct keeper_message message;
	int kind = next_message(channel, restores == 3 ? 300 : 10000, &message);
	if (restores == 3)
		return kind == 0 ? 9 : 10 + kind;
	if (kind != KEEPER_REAPED || message.pid != task || message.slot != 1)
		return 2;
	if (restores == 2) {
		struct keeper_message seen = {.kind = KEEPER_SEEN, .slot = message.slot};
		if (keeper_channel_send(channel, &seen, NULL, NULL, NULL) < 0)
			return 3;
	}
	raise(SIGKILL);
	return 4;
}

static void test_an_exit_is_sent_again_to_each_loop_until_one_says_it_acted(void **state)
{
	(void)state;
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	struct script script = {.loop = acts_on_an_exit_across_deaths};
	assert_int_equal(run_keeper(&script), 9);
	assert_int_equal(script.starts, 4);
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

/* ---- a loop executed: this very binary, run with AS_LOOP ---- */

#define AS_LOOP        "--as-a-loop"
#define REPORT_NUMBER  50
#define REPORTED_SLOT  2
#define REPORTED_STATE "task 2: running"

/* The fds above stderr this process has, as "3 5 50" (the directory's
 * own left out). */
static void list_fds(char *list, size_t size)
{
	int numbers[64], count = 0;
	DIR *directory = opendir("/proc/self/fd");
	if (!directory) {
		snprintf(list, size, "?");
		return;
	}
	for (struct dirent *entry; (entry = readdir(directory)) && count < 64;) {
		int fd = atoi(entry->d_name);
		if (entry->d_name[0] != '.' && fd > 2 && fd != dirfd(directory))
			numbers[count++] = fd;
	}
	closedir(directory);
	for (int i = 1; i < count; i++)
		for (int j = i; j > 0 && numbers[j - 1] > numbers[j]; j--) {
			int swap = numbers[j];
			numbers[j] = numbers[j - 1];
			numbers[j - 1] = swap;
		}
	size_t used = 0;
	list[0] = '\0';
	for (int i = 0; i < count && used < size; i++)
		used +=
		    (size_t)snprintf(list + used, size - used, "%s%d", i ? " " : "", numbers[i]);
}

/* The loop: says on REPORT_NUMBER (the held fd) the fds it has, the
 * keeper's variables, and what the loop side takes from them. */
static int as_a_loop(void)
{
	char fds[256], report[1024];
	list_fds(fds, sizeof(fds));
	const char *channel = getenv(KEEPER_FD_ENV), *restore = getenv(KEEPER_RESTORE_ENV),
		   *restores = getenv(KEEPER_RESTORES_ENV);
	struct stat channel_status = {0};
	bool is_socket = channel && fstat(atoi(channel), &channel_status) == 0 &&
			 S_ISSOCK(channel_status.st_mode);
	int used = snprintf(report, sizeof(report), "fds %s|channel %s%s|restore %s|restores %s",
			    fds, channel ? channel : "none", is_socket ? " socket" : "",
			    restore ? restore : "none", restores ? restores : "none");
	struct keeper_loop_side side;
	char error[256] = "";
	if (keeper_loop_side_take(&side, error, sizeof(error)) < 0) {
		snprintf(report + used, sizeof(report) - (size_t)used, "|%s", error);
	} else {
		const struct kept_record *record = kept_records_find(&side.restored, REPORTED_SLOT);
		bool cloexec = fcntl(REPORT_NUMBER, F_GETFD) & FD_CLOEXEC;
		snprintf(report + used, sizeof(report) - (size_t)used,
			 "|taken %u %s %.*s fd %d%s%s", side.restores,
			 side.restoring ? "restoring" : "fresh", record ? (int)record->length : 0,
			 record ? record->bytes : "", record ? record->fds[0] : -1,
			 cloexec ? " cloexec" : "",
			 getenv(KEEPER_FD_ENV) || getenv(KEEPER_RESTORE_ENV) ||
				 getenv(KEEPER_RESTORES_ENV)
			     ? " still in the environment"
			     : "");
		keeper_loop_side_free(&side);
	}
	size_t length = strlen(report);
	return write(REPORT_NUMBER, report, length) == (ssize_t)length ? 0 : 1;
}

/* Every fd of this process close-on-exec, whatever the test runner left
 * open: what the loop inherits is then only what the keeper gives. */
static void close_every_fd_on_exec(void)
{
	DIR *directory = opendir("/proc/self/fd");
	assert_non_null(directory);
	for (struct dirent *entry; (entry = readdir(directory));)
		if (entry->d_name[0] != '.')
			fcntl(atoi(entry->d_name), F_SETFD, FD_CLOEXEC);
	closedir(directory);
}

static void test_a_loop_is_executed_with_exactly_the_held_fds_at_their_numbers(void **state)
{
	(void)state;
	close_every_fd_on_exec();
	int report[2], channel[2];
	assert_int_equal(pipe2(report, O_CLOEXEC), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, channel), 0);
	struct kept_records records;
	kept_records_init(&records);
	kept_records_put(&records, REPORTED_SLOT, REPORTED_STATE, strlen(REPORTED_STATE),
			 (int[]){REPORT_NUMBER}, &report[1], 1);
	int self = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	assert_true(self >= 0);
	char *argv[] = {"test_keeper", AS_LOOP, NULL};
	pid_t pid = keeper_exec_loop(self, argv, channel[1], &records, 3);
	assert_true(pid > 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The keeper's table is as it was: the child moved its own fds. */
	assert_int_equal(records.items[0].fds[0], report[1]);
	assert_true(fcntl(report[1], F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(channel[1], F_GETFD) & FD_CLOEXEC);
	kept_records_free(&records); /* the keeper's copy of the write end */
	char got[1024];
	read_text(report[0], got, sizeof(got));
	int channel_number = -1, restore_number = -1;
	const char *channel_at = strstr(got, "|channel "), *restore_at = strstr(got, "|restore ");
	assert_non_null(channel_at);
	assert_non_null(restore_at);
	channel_number = atoi(channel_at + strlen("|channel "));
	restore_number = atoi(restore_at + strlen("|restore "));
	/* The channel and the memfd above the held number; nothing else. */
	assert_true(channel_number > REPORT_NUMBER && restore_number > REPORT_NUMBER);
	char expected[512];
	snprintf(
	    expected, sizeof(expected),
	    "fds %d %d %d|channel %d socket|restore %d|restores 3|taken 3 restoring " REPORTED_STATE
	    " fd %d cloexec",
	    REPORT_NUMBER, channel_number < restore_number ? channel_number : restore_number,
	    channel_number < restore_number ? restore_number : channel_number, channel_number,
	    restore_number, REPORT_NUMBER);
	assert_string_equal(got, expected);
	close(self);
	close(report[0]);
	close(channel[0]);
	close(channel[1]);
}

/* ---- the loop's side: what its keeper gave it ---- */

static bool nothing_taken(void *context, int fd)
{
	(void)context, (void)fd;
	return false;
}

static void test_the_loop_takes_its_keepers_variables_out_of_the_environment(void **state)
{
	(void)state;
	int channel[2], output[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, channel), 0);
	assert_int_equal(pipe(output), 0); /* as an exec leaves them: inheritable */
	/* What the keeper held: its own copy of output[0], under output[0]'s
	 * number. */
	struct kept_records held;
	kept_records_init(&held);
	kept_records_put(&held, 4, "task 4", 6, &output[0], (int[]){dup(output[0])}, 1);
	int memfd = kept_records_to_memfd(&held);
	assert_true(memfd >= 0);
	kept_records_free(&held);
	char number[16], restore[16];
	snprintf(number, sizeof(number), "%d", channel[1]);
	snprintf(restore, sizeof(restore), "%d", memfd);
	setenv(KEEPER_FD_ENV, number, 1);
	setenv(KEEPER_RESTORE_ENV, restore, 1);
	setenv(KEEPER_RESTORES_ENV, "2", 1);
	struct keeper_loop_side side;
	char error[256] = "";
	assert_int_equal(keeper_loop_side_take(&side, error, sizeof(error)), 0);
	assert_int_equal(keeper_loop_side_restores(&side), 2);
	assert_int_equal(side.channel, channel[1]);
	assert_true(side.restoring);
	const struct kept_record *record = kept_records_find(&side.restored, 4);
	assert_non_null(record);
	assert_int_equal(record->fds[0], output[0]);
	assert_memory_equal(record->bytes, "task 4", 6);
	/* Out of the environment, the memfd read and closed, and no task
	 * inherits the fds. */
	assert_null(getenv(KEEPER_FD_ENV));
	assert_null(getenv(KEEPER_RESTORE_ENV));
	assert_null(getenv(KEEPER_RESTORES_ENV));
	assert_false(is_open(memfd));
	assert_true(fcntl(output[0], F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(channel[1], F_GETFD) & FD_CLOEXEC);
	/* The restore done, and nothing took the fd: it is closed. */
	keeper_loop_side_end_restore(&side, nothing_taken, NULL);
	assert_false(side.restoring);
	assert_false(has_reader(output[1]));
	keeper_loop_side_free(&side);
	assert_false(is_open(channel[1]));
	close(output[1]);
	close(channel[0]);
}

static void assert_said(const char *error_wanted)
{
	struct keeper_loop_side side;
	char error[256] = "";
	assert_int_equal(keeper_loop_side_take(&side, error, sizeof(error)), -EINVAL);
	assert_string_equal(error, error_wanted);
	assert_int_equal(side.channel, -1);
	assert_false(side.restoring);
	assert_null(getenv(KEEPER_FD_ENV));
	assert_null(getenv(KEEPER_RESTORE_ENV));
	assert_null(getenv(KEEPER_RESTORES_ENV));
	keeper_loop_side_free(&side);
}

static void test_without_a_keeper_there_is_none_and_a_wrong_one_is_said(void **state)
{
	(void)state;
	struct keeper_loop_side side;
	char error[256] = "";
	assert_int_equal(keeper_loop_side_take(&side, error, sizeof(error)), 0);
	assert_int_equal(side.channel, -1);
	assert_false(side.restoring);
	assert_int_equal(keeper_loop_side_restores(&side), 0);
	keeper_loop_side_free(&side);

	setenv(KEEPER_FD_ENV, "999999", 1); /* not open */
	setenv(KEEPER_RESTORES_ENV, "1", 1);
	assert_said("CORRAL_KEEPER_FD: \"999999\" is not an open fd");

	int channel = dup(0);
	char number[16];
	snprintf(number, sizeof(number), "%d", channel);
	setenv(KEEPER_FD_ENV, number, 1);
	setenv(KEEPER_RESTORES_ENV, "two", 1);
	assert_said("CORRAL_RESTORES: \"two\" is not a whole number");

	setenv(KEEPER_FD_ENV, number, 1);
	setenv(KEEPER_RESTORES_ENV, "1", 1);
	setenv(KEEPER_RESTORE_ENV, "3x", 1);
	assert_said("CORRAL_RESTORE_FD: \"3x\" is not an open fd");

	/* Records that are not whole. */
	struct kept_records held;
	kept_records_init(&held);
	kept_records_put(&held, 1, "state", 5, NULL, NULL, 0);
	int memfd = cut_memfd(&held, 2, false);
	kept_records_free(&held);
	char restore[16];
	snprintf(restore, sizeof(restore), "%d", memfd);
	setenv(KEEPER_FD_ENV, number, 1);
	setenv(KEEPER_RESTORES_ENV, "1", 1);
	setenv(KEEPER_RESTORE_ENV, restore, 1);
	assert_said("the kept records are not whole");
	assert_false(is_open(memfd)); /* read, then closed */
	assert_true(is_open(channel));
	close(channel);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], AS_LOOP) == 0)
		return as_a_loop();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_an_exit_passes_its_code_on),
	    cmocka_unit_test(test_a_death_by_a_signal_is_restored_until_too_many_in_a_minute),
	    cmocka_unit_test(test_held_fds_are_the_loops_pipes_and_outlive_its_copies),
	    cmocka_unit_test(test_a_new_record_under_a_slot_replaces_and_closes_the_old),
	    cmocka_unit_test(test_two_records_naming_one_number_make_the_older_stale),
	    cmocka_unit_test(test_unsettled_marks_a_record_until_the_next_one),
	    cmocka_unit_test(test_a_message_not_whole_or_whose_fds_do_not_match_is_refused),
	    cmocka_unit_test(test_reaped_goes_the_other_way_and_an_empty_or_gone_channel_is_said),
	    cmocka_unit_test(test_the_records_memfd_keeps_slots_bytes_numbers_and_flags),
	    cmocka_unit_test(test_a_records_memfd_not_whole_is_refused_and_closes_nothing),
	    cmocka_unit_test(test_place_moves_held_fds_to_their_numbers_over_whatever_is_there),
	    cmocka_unit_test(test_the_keeper_ends_with_the_loops_exit_code),
	    cmocka_unit_test(test_a_loop_killed_is_started_again_with_what_it_held),
	    cmocka_unit_test(test_the_keeper_gives_up_on_a_loop_that_always_dies),
	    cmocka_unit_test(test_signals_to_the_keeper_go_to_the_loop),
	    cmocka_unit_test(test_a_task_orphaned_by_the_loops_death_is_reaped_and_told),
	    cmocka_unit_test(test_an_exit_is_sent_again_to_each_loop_until_one_says_it_acted),
	    cmocka_unit_test(test_a_loop_is_executed_with_exactly_the_held_fds_at_their_numbers),
	    cmocka_unit_test(test_the_loop_takes_its_keepers_variables_out_of_the_environment),
	    cmocka_unit_test(test_without_a_keeper_there_is_none_and_a_wrong_one_is_said),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
