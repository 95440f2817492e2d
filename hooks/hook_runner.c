#include "hooks/hook_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/process_group.h"
#include "base/xmalloc.h"
#include "hooks/hook_protocol.h"

static void on_exit_seen(struct loop_watch *watch, uint32_t events);
static void on_input_writable(struct loop_watch *watch, uint32_t events);
static void on_output_readable(struct loop_watch *watch, uint32_t events);
static void on_deadline(struct loop_timer *timer);

void hook_run_init(struct hook_run *run, struct loop *loop, const struct hook_spawner *spawner)
{
	memset(run, 0, sizeof(*run));
	run->loop = loop;
	run->spawner = spawner;
	run->error_fd = -1;
	run->pidfd_watch = (struct loop_watch){.fd = -1, .callback = on_exit_seen, .data = run};
	run->input_watch =
	    (struct loop_watch){.fd = -1, .callback = on_input_writable, .data = run};
	run->output_watch =
	    (struct loop_watch){.fd = -1, .callback = on_output_readable, .data = run};
	loop_timer_init(&run->deadline, on_deadline, run);
}

bool hook_run_active(const struct hook_run *run)
{
	return run->pid > 0;
}

static void close_watch(struct hook_run *run, struct loop_watch *watch)
{
	if (watch->fd < 0)
		return;
	if (watch->registered)
		loop_watch_remove(run->loop, watch);
	close(watch->fd);
	watch->fd = -1;
}

static void on_input_writable(struct loop_watch *watch, uint32_t events)
{
	struct hook_run *run = watch->data;
	while (run->input_written < run->input_length) {
		ssize_t wrote = write(watch->fd, run->input + run->input_written,
				      run->input_length - run->input_written);
		if (wrote < 0 && errno == EINTR)
			continue;
		if (wrote < 0 && errno == EAGAIN)
			return; /* the pipe is full: the loop calls again */
		if (wrote < 0)
			break; /* EPIPE: the hook does not read its request */
		run->input_written += (size_t)wrote;
	}
	/* All written (or no reader): EOF tells the hook the request ends. */
	close_watch(run, watch);
}

/* Reads what is there; false at EOF. */
static bool read_output(struct hook_run *run)
{
	for (;;) {
		if (run->output_capacity - run->output_length < 4096) {
			run->output_capacity =
			    run->output_capacity ? run->output_capacity * 2 : 8192;
			run->output = xreallocarray(run->output, run->output_capacity, 1);
		}
		ssize_t got = read(run->output_watch.fd, run->output + run->output_length,
				   run->output_capacity - run->output_length - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return errno == EAGAIN;
		if (got == 0)
			return false;
		run->output_length += (size_t)got;
		if (run->output_length > HOOK_RESPONSE_MAX_BYTES) {
			run->output_too_large = true;
			hook_run_kill(run);
			return false;
		}
	}
}

static void on_output_readable(struct loop_watch *watch, uint32_t events)
{
	struct hook_run *run = watch->data;
	if (!read_output(run))
		close_watch(run, watch);
}

static void on_deadline(struct loop_timer *timer)
{
	struct hook_run *run = timer->data;
	run->timed_out = true;
	hook_run_kill(run);
}

void hook_run_kill(struct hook_run *run)
{
	process_group_kill(run->pid);
}

static void release(struct hook_run *run)
{
	close_watch(run, &run->pidfd_watch);
	close_watch(run, &run->input_watch);
	close_watch(run, &run->output_watch);
	loop_timer_cancel(run->loop, &run->deadline);
	if (run->error_fd >= 0)
		close(run->error_fd);
	run->error_fd = -1;
	free(run->input);
	free(run->output);
	run->input = run->output = NULL;
	run->input_length = run->input_written = 0;
	run->output_length = run->output_capacity = 0;
	run->pid = 0;
}

/* The hook exited: what it wrote before is in the pipe, whoever else
 * still holds its stdout. */
static void finish(struct hook_run *run)
{
	siginfo_t info;
	/* Killed: also what it forked just before the end. */
	if (!process_group_reap(run->pidfd_watch.fd, run->pid,
				run->timed_out || run->output_too_large, &info))
		return;
	if (run->output_watch.fd >= 0 && !run->output_too_large)
		read_output(run);
	char failure[256];
	bool start_failed = run->spawner->start_failed(run->spawner->context, run->argv,
						       run->error_fd, failure, sizeof(failure));
	struct hook_run_result result = {
	    .start_failed = start_failed,
	    .failure = start_failed ? failure : NULL,
	    .timed_out = run->timed_out,
	    .output_too_large = run->output_too_large,
	    .exited = info.si_code == CLD_EXITED,
	    .code = info.si_code == CLD_EXITED ? info.si_status : -1,
	    .signal = info.si_code == CLD_EXITED ? 0 : info.si_status,
	    .output = run->output ? run->output : "",
	    .output_length = run->output_length,
	};
	if (run->output)
		run->output[run->output_length < HOOK_RESPONSE_MAX_BYTES
				? run->output_length
				: HOOK_RESPONSE_MAX_BYTES] = '\0';
	char *output = run->output;
	run->output = NULL;
	hook_run_done_function done = run->done;
	void *context = run->context;
	release(run);
	done(context, &result);
	free(output);
}

static void on_exit_seen(struct loop_watch *watch, uint32_t events)
{
	finish(watch->data);
}

bool hook_run_reap(struct hook_run *run, pid_t pid)
{
	if (run->pid <= 0 || run->pid != pid)
		return false;
	finish(run);
	return true;
}

int hook_run_start(struct hook_run *run, char *const *argv, char *const *envp, char *input,
		   size_t input_length, int stderr_fd, uint64_t timeout_ms,
		   hook_run_done_function done, void *context)
{
	_cleanup_free_ char *request = input; /* taken below once it runs */
	_cleanup_close_ int input_read = -1, input_write = -1, output_read = -1, output_write = -1;
	int ends[2];
	if (pipe2(ends, O_CLOEXEC) < 0)
		return -errno;
	input_read = ends[0], input_write = ends[1];
	if (pipe2(ends, O_CLOEXEC) < 0)
		return -errno;
	output_read = ends[0], output_write = ends[1];
	struct hook_process process;
	const int stdio[3] = {input_read, output_write, stderr_fd};
	int failure = run->spawner->spawn(run->spawner->context, argv, envp, stdio, &process);
	if (failure < 0)
		return failure;
	fcntl(input_write, F_SETFL, O_NONBLOCK);
	fcntl(output_read, F_SETFL, O_NONBLOCK);
	run->pid = process.pid;
	run->argv = argv;
	run->error_fd = process.error_fd;
	run->done = done;
	run->context = context;
	run->timed_out = run->output_too_large = false;
	run->input = TAKE_PTR(request);
	run->input_length = input_length;
	run->input_written = 0;
	run->pidfd_watch.fd = process.pidfd;
	run->input_watch.fd = TAKE_FD(input_write);
	run->output_watch.fd = TAKE_FD(output_read);
	loop_watch_add(run->loop, &run->pidfd_watch, EPOLLIN);
	loop_watch_add(run->loop, &run->input_watch, EPOLLOUT);
	loop_watch_add(run->loop, &run->output_watch, EPOLLIN);
	loop_timer_arm(run->loop, &run->deadline, loop_now_ms() + timeout_ms);
	return 0;
}

void hook_run_free(struct hook_run *run)
{
	if (run->pid <= 0)
		return;
	hook_run_kill(run);
	/* Not waited for: a killed process may take its time (a file system
	 * that does not answer). The loop's SIGCHLD sweep reaps it as any
	 * child it does not know. */
	release(run);
}
