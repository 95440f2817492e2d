#include "supervisor/upgrade/upgrade_check.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/handover.h"
#include "base/process_group.h"
#include "base/units.h"
#include "base/xmalloc.h"

extern char **environ;

/* "corral VERSION handover-format N\n" and some room: what the binary
 * says past this is not read (a pipe it cannot write then ends it). */
#define OUTPUT_MAX 256

struct upgrade_check {
	struct loop *loop;
	char *path;
	pid_t pid;
	struct loop_watch exit_watch;   /* the pidfd */
	struct loop_watch output_watch; /* the read end of its stdout */
	int error_fd;                   /* spawn's error pipe: did the exec happen? */
	struct loop_timer deadline;
	bool timed_out, killed;
	char output[OUTPUT_MAX];
	size_t output_length;
	upgrade_check_done_fn *done;
	void *context;
	struct upgrade_check *next_retired;
};

static void close_output(struct upgrade_check *check)
{
	if (check->output_watch.fd < 0)
		return;
	loop_watch_remove(check->loop, &check->output_watch);
	close(check->output_watch.fd);
	check->output_watch.fd = -1;
}

/* What the pipe holds now; never waits (it is non-blocking). */
static void read_output(struct upgrade_check *check)
{
	while (check->output_watch.fd >= 0) {
		size_t room = sizeof(check->output) - 1 - check->output_length;
		ssize_t got =
		    room ? read(check->output_watch.fd, check->output + check->output_length, room)
			 : 0;
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == EAGAIN)
			return;
		if (got <= 0) {
			close_output(check); /* the end, or all it may say */
			return;
		}
		check->output_length += (size_t)got;
	}
}

static void on_output(struct loop_watch *watch, uint32_t events)
{
	(void)events;
	read_output(watch->data);
}

/* The verdict from how it ended and what it printed. */
static bool judge(const struct upgrade_check *check, const siginfo_t *info, char *error,
		  size_t error_size)
{
	const char *path = check->path;
	struct spawn_failure failure;
	if (spawn_read_failure(check->error_fd, &failure) == 1) {
		struct spawn_request request = {.executable = path};
		char reason[PATH_MAX + 96];
		spawn_failure_describe(&request, &failure, reason, sizeof(reason));
		snprintf(error, error_size, "%s cannot be run: %s", path, reason);
		return false;
	}
	if (check->timed_out) {
		snprintf(error, error_size, "%s --handover-format did not answer within %d s", path,
			 UPGRADE_CHECK_TIMEOUT_MS / 1000);
		return false;
	}
	if (check->killed) {
		snprintf(error, error_size,
			 "%s --handover-format was stopped: the client that asked "
			 "for the upgrade went away",
			 path);
		return false;
	}
	if (info->si_code != CLD_EXITED) {
		snprintf(error, error_size,
			 "%s --handover-format was killed by %s: not a corral that can take over",
			 path, signal_name(info->si_status));
		return false;
	}
	if (info->si_status != 0) {
		snprintf(
		    error, error_size,
		    "%s --handover-format exited with code %d: not a corral that can take over",
		    path, info->si_status);
		return false;
	}
	const char *format = strstr(check->output, "handover-format ");
	if (!format) {
		snprintf(error, error_size,
			 "%s --handover-format said no format: not a corral that can take over",
			 path);
		return false;
	}
	int number = atoi(format + strlen("handover-format "));
	if (number != HANDOVER_FORMAT) {
		snprintf(error, error_size,
			 "%s reads hand-over format %d, this corral writes format %d: upgrade "
			 "through a version that reads both, or restart corral",
			 path, number, HANDOVER_FORMAT);
		return false;
	}
	return true;
}

/* Released checks, freed after the loop's event batch (upgrade_check_collect):
 * an event of this batch may still name one of their watches. */
static struct upgrade_check *retired;

static void release(struct upgrade_check *check)
{
	close_output(check);
	loop_timer_cancel(check->loop, &check->deadline);
	if (check->exit_watch.fd >= 0) {
		loop_watch_remove(check->loop, &check->exit_watch);
		close(check->exit_watch.fd);
	}
	if (check->error_fd >= 0)
		close(check->error_fd);
	free(check->path);
	check->path = NULL;
	check->next_retired = retired;
	retired = check;
}

void upgrade_check_collect(void)
{
	while (retired) {
		struct upgrade_check *check = retired;
		retired = check->next_retired;
		free(check);
	}
}

/* It exited: reaped (with what it left in its process group), judged,
 * told. Returns false while it still runs. */
static bool finish(struct upgrade_check *check)
{
	siginfo_t info;
	if (!process_group_reap(check->exit_watch.fd, check->pid, true, &info))
		return false;
	read_output(check); /* the last of it, without waiting for a writer left */
	check->output[check->output_length] = '\0';
	char error[PATH_MAX + 256] = "";
	bool passed = judge(check, &info, error, sizeof(error));
	upgrade_check_done_fn *done = check->done;
	void *context = check->context;
	release(check);
	done(context, passed, error);
	return true;
}

static void on_check_exit(struct loop_watch *watch, uint32_t events)
{
	(void)events;
	finish(watch->data);
}

static void on_deadline(struct loop_timer *timer)
{
	struct upgrade_check *check = timer->data;
	check->timed_out = true;
	process_group_kill(check->pid);
}

int upgrade_check_start(struct upgrade_check **out, struct loop *loop, struct spawn_slots *slots,
			int binary_fd, const char *path, upgrade_check_done_fn *done, void *context,
			char *error, size_t error_size)
{
	int output[2];
	if (pipe2(output, O_CLOEXEC | O_NONBLOCK) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "%s: a pipe for its check: %s", path, strerror(errno));
		return failure;
	}
	char *argv[] = {(char *)path, "--handover-format", NULL};
	/* stderr stays corral's own, as a task's would without a pipe: what
	 * the binary says there reaches the operator. */
	struct spawn_request request = {
	    .executable = path,
	    .exec_from_fd = true,
	    .executable_fd = binary_fd,
	    .argv = argv,
	    .envp = environ,
	    .output_fd = output[1],
	    .separate_stderr = true,
	    .stderr_fd = STDERR_FILENO,
	    .notify_target = -1,
	};
	struct spawn_result result;
	int failure = spawn_process(slots, &request, &result);
	close(output[1]);
	if (failure < 0) {
		close(output[0]);
		snprintf(error, error_size, "%s cannot be run: %s", path, result.message);
		return failure;
	}
	struct upgrade_check *check = xcalloc(1, sizeof(*check));
	*check = (struct upgrade_check){
	    .loop = loop,
	    .path = xstrdup(path),
	    .pid = result.pid,
	    .exit_watch = {.fd = result.pidfd, .callback = on_check_exit, .data = check},
	    .output_watch = {.fd = output[0], .callback = on_output, .data = check},
	    .error_fd = result.error_fd,
	    .done = done,
	    .context = context,
	};
	loop_timer_init(&check->deadline, on_deadline, check);
	loop_timer_arm(loop, &check->deadline, loop_now_ms() + UPGRADE_CHECK_TIMEOUT_MS);
	if (loop_watch_add(loop, &check->output_watch, EPOLLIN) < 0 ||
	    loop_watch_add(loop, &check->exit_watch, EPOLLIN) < 0) {
		failure = -errno;
		snprintf(error, error_size, "%s: watch its check: %s", path, strerror(errno));
		process_group_kill(check->pid);
		release(check); /* a zombie the SIGCHLD sweep reaps */
		return failure;
	}
	*out = check;
	return 0;
}

bool upgrade_check_reap(struct upgrade_check *check, pid_t pid)
{
	if (!check || check->pid != pid)
		return false;
	if (!finish(check)) /* cannot be: the sweep saw it exited */
		return false;
	return true;
}

void upgrade_check_kill(struct upgrade_check *check)
{
	if (!check)
		return;
	check->killed = true;
	process_group_kill(check->pid);
}

void upgrade_check_free(struct upgrade_check *check)
{
	if (!check)
		return;
	process_group_kill(check->pid);
	release(check);
}
