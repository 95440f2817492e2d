/* The keeper's pieces (supervisor/keeper/): what it decides when the loop
 * process ends, and the fds it holds for it, sent over a real socketpair
 * and checked to be the very pipes the loop made. */
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor/keeper/fd_holder.h"
#include "supervisor/keeper/keeper.h"
#include "supervisor/keeper/keeper_channel.h"
#include "supervisor/keeper/keeper_decision.h"
#include "supervisor/keeper/keeper_handoff.h"
#include "supervisor/keeper/keeper_loop_side.h"

/* waitpid's statuses, as the kernel makes them. */
static int exited(int code)
{
	return (code & 0xff) << 8;
}

static int killed_by(int signal)
{
	return signal & 0x7f;
}

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

struct channel {
	int loop_end, keeper_end;
};

static struct channel channel_open(void)
{
	int ends[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends), 0);
	return (struct channel){ends[0], ends[1]};
}

/* The loop sends, the keeper receives and holds. */
static int pass(struct channel *channel, struct fd_holder *holder,
		const struct keeper_message *message, const int *fds)
{
	int result = keeper_channel_send(channel->loop_end, message, fds);
	if (result < 0)
		return result;
	struct keeper_message got;
	int received[FD_HOLDER_ROLES];
	size_t count;
	result = keeper_channel_receive(channel->keeper_end, &got, received, &count);
	if (result == 0)
		keeper_channel_apply(holder, &got, received);
	return result;
}

static void test_held_fds_are_the_loops_pipes_and_outlive_its_copies(void **state)
{
	(void)state;
	struct channel channel = channel_open();
	struct fd_holder holder;
	fd_holder_init(&holder);
	int output[2], error_output[2];
	assert_int_equal(pipe2(output, O_CLOEXEC), 0);
	assert_int_equal(pipe2(error_output, O_CLOEXEC), 0);
	struct keeper_message hold = {
	    .kind = KEEPER_HOLD, .slot = 7, .roles = 1u << HELD_OUTPUT | 1u << HELD_ERROR_OUTPUT};
	int fds[] = {output[0], error_output[0]};
	assert_int_equal(pass(&channel, &holder, &hold, fds), 0);
	assert_int_equal(holder.held, 2);
	/* The loop dies: its read ends close. What the task writes next waits
	 * in the pipe, read from the keeper's ends. */
	close(output[0]);
	close(error_output[0]);
	assert_int_equal(write(output[1], "line 1\n", 7), 7);
	assert_int_equal(write(error_output[1], "oops\n", 5), 5);
	char bytes[16];
	assert_int_equal(read(fd_holder_get(&holder, 7, HELD_OUTPUT), bytes, sizeof(bytes)), 7);
	assert_memory_equal(bytes, "line 1\n", 7);
	assert_int_equal(read(fd_holder_get(&holder, 7, HELD_ERROR_OUTPUT), bytes, sizeof(bytes)),
			 5);
	/* Close-on-exec: no task the keeper might start inherits one. */
	assert_true(fcntl(fd_holder_get(&holder, 7, HELD_OUTPUT), F_GETFD) & FD_CLOEXEC);

	/* Dropped: the keeper's end closes, and the pipe has no reader. */
	struct keeper_message drop = {.kind = KEEPER_HOLD, .slot = 7, .drop = 1u << HELD_OUTPUT};
	assert_int_equal(pass(&channel, &holder, &drop, NULL), 0);
	assert_int_equal(fd_holder_get(&holder, 7, HELD_OUTPUT), -1);
	assert_int_equal(holder.held, 1);
	signal(SIGPIPE, SIG_IGN);
	errno = 0;
	assert_int_equal(write(output[1], "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	close(output[1]);
	close(error_output[1]);
	fd_holder_free(&holder);
	close(channel.loop_end);
	close(channel.keeper_end);
}

static void test_a_new_fd_under_a_key_replaces_and_closes_the_old(void **state)
{
	(void)state;
	struct channel channel = channel_open();
	struct fd_holder holder;
	fd_holder_init(&holder);
	int first[2], second[2];
	assert_int_equal(pipe2(first, O_CLOEXEC), 0);
	assert_int_equal(pipe2(second, O_CLOEXEC), 0);
	struct keeper_message hold = {.kind = KEEPER_HOLD, .slot = 2, .roles = 1u << HELD_PIDFD};
	assert_int_equal(pass(&channel, &holder, &hold, &first[0]), 0);
	assert_int_equal(pass(&channel, &holder, &hold, &second[0]), 0); /* a restart */
	assert_int_equal(holder.held, 1);
	close(first[0]);
	close(second[0]);
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(write(first[1], "x", 1), -1); /* the old one: closed */
	assert_int_equal(write(second[1], "x", 1), 1); /* the new one: held */
	close(first[1]);
	close(second[1]);
	fd_holder_free(&holder);
	close(channel.loop_end);
	close(channel.keeper_end);
}

/* A message as a confused or hostile sender would make it: `count` fds
 * whatever its roles say. */
static void raw_send(int socket, const struct keeper_message *message, const int *fds, size_t count)
{
	struct iovec part = {(void *)message, sizeof(*message)};
	union {
		char bytes[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} control;
	memset(&control, 0, sizeof(control));
	struct msghdr header = {.msg_iov = &part,
				.msg_iovlen = 1,
				.msg_control = control.bytes,
				.msg_controllen = CMSG_SPACE(sizeof(int) * count)};
	struct cmsghdr *rights = CMSG_FIRSTHDR(&header);
	rights->cmsg_level = SOL_SOCKET;
	rights->cmsg_type = SCM_RIGHTS;
	rights->cmsg_len = CMSG_LEN(sizeof(int) * count);
	memcpy(CMSG_DATA(rights), fds, sizeof(int) * count);
	assert_int_equal(sendmsg(socket, &header, 0), (ssize_t)sizeof(*message));
}

static void test_a_message_whose_fds_do_not_match_its_roles_is_refused(void **state)
{
	(void)state;
	struct channel channel = channel_open();
	int ends[2];
	assert_int_equal(pipe2(ends, O_CLOEXEC), 0);
	/* Two roles, one fd. */
	struct keeper_message hold = {
	    .kind = KEEPER_HOLD, .slot = 1, .roles = 1u << HELD_OUTPUT | 1u << HELD_PIDFD};
	raw_send(channel.loop_end, &hold, &ends[0], 1);
	struct keeper_message got;
	int fds[FD_HOLDER_ROLES];
	size_t count;
	assert_int_equal(keeper_channel_receive(channel.keeper_end, &got, fds, &count), -EPROTO);
	assert_int_equal(count, 0);
	/* The fd that came was closed, not kept by mistake. */
	close(ends[0]);
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(write(ends[1], "x", 1), -1);
	close(ends[1]);
	/* A REAPED message goes the other way, with no fd. */
	struct keeper_message reaped = {.kind = KEEPER_REAPED, .pid = 42, .status = exited(1)};
	assert_int_equal(keeper_channel_send(channel.keeper_end, &reaped, NULL), 0);
	assert_int_equal(keeper_channel_receive(channel.loop_end, &got, fds, &count), 0);
	assert_int_equal(got.pid, 42);
	assert_int_equal(got.status, exited(1));
	assert_int_equal(count, 0);
	/* Nothing waits: -EAGAIN; the other end gone: -EPIPE. */
	assert_int_equal(keeper_channel_receive(channel.keeper_end, &got, fds, &count), -EAGAIN);
	close(channel.loop_end);
	assert_int_equal(keeper_channel_receive(channel.keeper_end, &got, fds, &count), -EPIPE);
	close(channel.keeper_end);
}

/* ---- the keeper itself, with loops that are forked functions ---- */

struct script {
	/* Run in the forked loop process: its exit. */
	int (*loop)(int channel, const struct fd_holder *holder, unsigned restores);
	unsigned starts;
};

static pid_t start_scripted(void *context, int channel, const struct fd_holder *holder,
			    unsigned restores)
{
	struct script *script = context;
	script->starts++;
	pid_t pid = fork();
	if (pid == 0)
		_exit(script->loop(channel, holder, restores));
	return pid < 0 ? -errno : pid;
}

static int run_keeper(struct script *script)
{
	struct keeper_settings settings = {.start_loop = start_scripted, .context = script};
	return keeper_run(&settings);
}

static int exits_at_once(int channel, const struct fd_holder *holder, unsigned restores)
{
	(void)channel, (void)holder, (void)restores;
	return 4;
}

static void test_the_keeper_ends_with_the_loops_exit_code(void **state)
{
	(void)state;
	struct script script = {.loop = exits_at_once};
	assert_int_equal(run_keeper(&script), 4);
	assert_int_equal(script.starts, 1);
}

/* The first loop leaves a line in a pipe whose read end the keeper holds,
 * and is killed; the second finds the same pipe, with the line in it. */
static int hands_a_pipe_over(int channel, const struct fd_holder *holder, unsigned restores)
{
	if (restores == 0) {
		int ends[2];
		if (pipe2(ends, O_CLOEXEC) < 0 || write(ends[1], "kept\n", 5) != 5)
			return 1;
		struct keeper_message hold = {
		    .kind = KEEPER_HOLD, .slot = 3, .roles = 1u << HELD_OUTPUT};
		if (keeper_channel_send(channel, &hold, &ends[0]) < 0)
			return 1;
		raise(SIGKILL);
	}
	char line[8];
	int held = fd_holder_get(holder, 3, HELD_OUTPUT);
	if (restores != 1 || held < 0 || read(held, line, sizeof(line)) != 5)
		return 1;
	return memcmp(line, "kept\n", 5) == 0 ? 7 : 1;
}

static void test_a_loop_killed_is_started_again_with_what_it_held(void **state)
{
	(void)state;
	struct script script = {.loop = hands_a_pipe_over};
	assert_int_equal(run_keeper(&script), 7);
	assert_int_equal(script.starts, 2);
}

static int always_killed(int channel, const struct fd_holder *holder, unsigned restores)
{
	(void)channel, (void)holder, (void)restores;
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
static int waits_for_sigterm(int channel, const struct fd_holder *holder, unsigned restores)
{
	(void)channel, (void)holder, (void)restores;
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

/* The first loop starts a "task" that outlives it (and says its pid in a
 * held pipe); the keeper reaps it, and tells the next loop how it
 * ended. */
static int learns_of_an_orphans_exit(int channel, const struct fd_holder *holder, unsigned restores)
{
	if (restores == 0) {
		int ends[2];
		if (pipe2(ends, O_CLOEXEC) < 0)
			return 1;
		pid_t task = fork();
		if (task == 0) {
			usleep(100 * 1000);
			_exit(5);
		}
		struct keeper_message hold = {
		    .kind = KEEPER_HOLD, .slot = 1, .roles = 1u << HELD_OUTPUT};
		if (write(ends[1], &task, sizeof(task)) != sizeof(task) ||
		    keeper_channel_send(channel, &hold, &ends[0]) < 0)
			return 1;
		raise(SIGKILL);
	}
	pid_t task;
	if (read(fd_holder_get(holder, 1, HELD_OUTPUT), &task, sizeof(task)) != sizeof(task))
		return 1;
	for (;;) {
		struct pollfd readable = {channel, POLLIN, 0};
		if (poll(&readable, 1, 10000) != 1)
			return 2;
		struct keeper_message message;
		int fds[FD_HOLDER_ROLES];
		size_t count;
		if (keeper_channel_receive(channel, &message, fds, &count) < 0)
			return 3;
		if (message.kind == KEEPER_REAPED && message.pid == task)
			return WIFEXITED(message.status) && WEXITSTATUS(message.status) == 5 ? 9
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

/* ---- handing the held fds to a new loop process ---- */

static void test_the_held_fds_are_described_and_read_back(void **state)
{
	(void)state;
	int a = dup(0), b = dup(0);
	char text[64];
	snprintf(text, sizeof(text), "0.0=%d,3.1=%d", a, b);
	struct fd_holder holder;
	fd_holder_init(&holder);
	char error[256] = "";
	assert_int_equal(keeper_fds_parse(text, &holder, error, sizeof(error)), 0);
	assert_int_equal(fd_holder_get(&holder, 0, 0), a);
	assert_int_equal(fd_holder_get(&holder, 3, 1), b);
	assert_int_equal(holder.held, 2);
	char *described = keeper_fds_describe(&holder);
	assert_string_equal(described, text);
	free(described);
	fd_holder_free(&holder); /* closes a and b */
	assert_int_equal(fcntl(a, F_GETFD), -1);
}

static void test_a_wrong_description_holds_nothing_and_closes_nothing(void **state)
{
	(void)state;
	int a = dup(0);
	char duplicate[64];
	snprintf(duplicate, sizeof(duplicate), "1.1=%d,1.1=%d", a, a);
	const char *wrong[] = {"1.8=4", "x", "1.1=", "1=4", "1.1=4;2.2=5", duplicate};
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		struct fd_holder holder;
		fd_holder_init(&holder);
		char error[256] = "";
		assert_int_equal(keeper_fds_parse(wrong[i], &holder, error, sizeof(error)),
				 -EINVAL);
		assert_non_null(strstr(error, "is not SLOT.ROLE=FD"));
		assert_int_equal(holder.held, 0);
		fd_holder_free(&holder);
		assert_true(fcntl(a, F_GETFD) >= 0); /* still open */
	}
	close(a);
}

static void test_a_loop_is_executed_with_exactly_the_held_fds(void **state)
{
	(void)state;
	int report[2], other[2], channel[2];
	assert_int_equal(pipe2(report, O_CLOEXEC), 0);
	assert_int_equal(pipe2(other, O_CLOEXEC), 0); /* not held: not inherited */
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, channel), 0);
	struct fd_holder holder;
	fd_holder_init(&holder);
	fd_holder_hold(&holder, 2, 1, report[1]);
	int shell = open("/bin/sh", O_PATH | O_CLOEXEC);
	assert_true(shell >= 0);
	char script[512];
	snprintf(script, sizeof(script),
		 "fd=${CORRAL_KEEPER_FDS#*=}; "
		 "[ -e /proc/self/fd/$CORRAL_KEEPER_FD ] && channel=open || channel=closed; "
		 "[ -e /proc/self/fd/%d ] && other=inherited || other=not; "
		 "printf '%%s|%%s|%%s|%%s' \"$CORRAL_KEEPER_FDS\" \"$CORRAL_RESTORES\" "
		 "$channel $other >&$fd",
		 other[0]);
	char *argv[] = {"sh", "-c", script, NULL};
	pid_t pid = keeper_exec_loop(shell, argv, channel[1], &holder, 3);
	assert_true(pid > 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	fd_holder_free(&holder); /* the keeper's copy of the write end */
	char got[128] = "", expected[128];
	assert_true(read(report[0], got, sizeof(got) - 1) > 0);
	snprintf(expected, sizeof(expected), "2.1=%d|3|open|not", report[1]);
	assert_string_equal(got, expected);
	/* The keeper's own fds stayed close-on-exec. */
	assert_true(fcntl(channel[1], F_GETFD) & FD_CLOEXEC);
	close(shell);
	close(report[0]);
	close(other[0]);
	close(other[1]);
	close(channel[0]);
	close(channel[1]);
}

/* ---- the loop's side: what its keeper gave it ---- */

static void test_the_loop_takes_its_keepers_variables_out_of_the_environment(void **state)
{
	(void)state;
	int channel[2], output[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, channel), 0);
	assert_int_equal(pipe(output), 0); /* as an exec leaves them: inheritable */
	char number[16], fds[32];
	snprintf(number, sizeof(number), "%d", channel[1]);
	snprintf(fds, sizeof(fds), "4.1=%d", output[0]);
	setenv(KEEPER_FD_ENV, number, 1);
	setenv(KEEPER_FDS_ENV, fds, 1);
	setenv(KEEPER_RESTORES_ENV, "2", 1);
	struct keeper_loop_side side;
	char error[256] = "";
	assert_int_equal(keeper_loop_side_take(&side, error, sizeof(error)), 0);
	assert_int_equal(keeper_loop_side_restores(&side), 2);
	assert_int_equal(side.channel, channel[1]);
	assert_int_equal(fd_holder_get(&side.given, 4, HELD_OUTPUT), output[0]);
	/* Out of the environment, and no task inherits the fds. */
	assert_null(getenv(KEEPER_FD_ENV));
	assert_null(getenv(KEEPER_FDS_ENV));
	assert_null(getenv(KEEPER_RESTORES_ENV));
	assert_true(fcntl(output[0], F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(channel[1], F_GETFD) & FD_CLOEXEC);
	keeper_loop_side_free(&side);
	close(output[1]);
	close(channel[0]);
}

static void test_without_a_keeper_there_is_none_and_a_wrong_one_is_said(void **state)
{
	(void)state;
	struct keeper_loop_side side;
	char error[256] = "";
	assert_int_equal(keeper_loop_side_take(&side, error, sizeof(error)), 0);
	assert_int_equal(side.channel, -1);
	assert_int_equal(keeper_loop_side_restores(&side), 0);
	keeper_loop_side_free(&side);

	setenv(KEEPER_FD_ENV, "999999", 1); /* not open */
	setenv(KEEPER_RESTORES_ENV, "1", 1);
	assert_int_equal(keeper_loop_side_take(&side, error, sizeof(error)), -EINVAL);
	assert_non_null(strstr(error, "CORRAL_KEEPER_FD: \"999999\" is not an open fd"));
	assert_int_equal(side.channel, -1);
	assert_null(getenv(KEEPER_FD_ENV));
	keeper_loop_side_free(&side);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_an_exit_passes_its_code_on),
	    cmocka_unit_test(test_a_death_by_a_signal_is_restored_until_too_many_in_a_minute),
	    cmocka_unit_test(test_held_fds_are_the_loops_pipes_and_outlive_its_copies),
	    cmocka_unit_test(test_a_new_fd_under_a_key_replaces_and_closes_the_old),
	    cmocka_unit_test(test_a_message_whose_fds_do_not_match_its_roles_is_refused),
	    cmocka_unit_test(test_the_keeper_ends_with_the_loops_exit_code),
	    cmocka_unit_test(test_a_loop_killed_is_started_again_with_what_it_held),
	    cmocka_unit_test(test_the_keeper_gives_up_on_a_loop_that_always_dies),
	    cmocka_unit_test(test_signals_to_the_keeper_go_to_the_loop),
	    cmocka_unit_test(test_a_task_orphaned_by_the_loops_death_is_reaped_and_told),
	    cmocka_unit_test(test_the_held_fds_are_described_and_read_back),
	    cmocka_unit_test(test_a_wrong_description_holds_nothing_and_closes_nothing),
	    cmocka_unit_test(test_a_loop_is_executed_with_exactly_the_held_fds),
	    cmocka_unit_test(test_the_loop_takes_its_keepers_variables_out_of_the_environment),
	    cmocka_unit_test(test_without_a_keeper_there_is_none_and_a_wrong_one_is_said),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
