#include "isolation/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pid_t clone3_pidfd(int *pidfd)
{
	struct clone_args args = {
		.flags = CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};
	return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

static void __attribute__((noreturn)) child_fail(int error_fd, enum spawn_stage stage)
{
	struct spawn_failure failure = {.stage = stage, .error = errno};
	(void)!write(error_fd, &failure, sizeof(failure));
	_exit(127);
}

/* Runs in the child, between clone and exec: async-signal-safe calls only. */
static void __attribute__((noreturn)) child_setup_and_exec(const struct spawn_request *request,
							    int error_fd)
{
	/* corral blocks the signals it reads through signalfd and may ignore
	 * some; the task must start with the defaults. */
	for (int signal_number = 1; signal_number < NSIG; signal_number++) {
		if (signal_number == SIGKILL || signal_number == SIGSTOP)
			continue;
		struct sigaction action = {.sa_handler = SIG_DFL};
		sigaction(signal_number, &action, NULL);
	}
	sigset_t empty;
	sigemptyset(&empty);
	if (sigprocmask(SIG_SETMASK, &empty, NULL) < 0)
		child_fail(error_fd, SPAWN_STAGE_SIGNALS);

	/* Its own session and process group: stopping the task can then reach
	 * whatever it forked, and it cannot read corral's terminal. */
	if (setsid() < 0)
		child_fail(error_fd, SPAWN_STAGE_SESSION);

	if (dup2(request->stdin_fd, STDIN_FILENO) < 0 ||
	    dup2(request->output_fd, STDOUT_FILENO) < 0 ||
	    dup2(request->output_fd, STDERR_FILENO) < 0)
		child_fail(error_fd, SPAWN_STAGE_STDIO);

	if (request->cwd && chdir(request->cwd) < 0)
		child_fail(error_fd, SPAWN_STAGE_CHDIR);

	if (request->change_ids) {
		if (setgroups(request->group_count, request->groups) < 0)
			child_fail(error_fd, SPAWN_STAGE_SETGROUPS);
		if (setresgid(request->gid, request->gid, request->gid) < 0)
			child_fail(error_fd, SPAWN_STAGE_SETGID);
		if (setresuid(request->uid, request->uid, request->uid) < 0)
			child_fail(error_fd, SPAWN_STAGE_SETUID);
	}

	/* Whatever corral inherited without CLOEXEC must not reach the task;
	 * marking rather than closing keeps the error pipe open until exec. */
	syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);

	execve(request->executable, request->argv, request->envp);
	child_fail(error_fd, SPAWN_STAGE_EXEC);
}

int spawn_process(const struct spawn_request *request, struct spawn_result *result)
{
	int error_pipe[2];
	if (pipe2(error_pipe, O_CLOEXEC) < 0)
		return -errno;

	int pidfd = -1;
	pid_t pid = clone3_pidfd(&pidfd);
	if (pid < 0) {
		int error = -errno;
		close(error_pipe[0]);
		close(error_pipe[1]);
		return error;
	}
	if (pid == 0)
		child_setup_and_exec(request, error_pipe[1]);

	close(error_pipe[1]);
	fcntl(error_pipe[0], F_SETFL, O_NONBLOCK);
	result->pid = pid;
	result->pidfd = pidfd;
	result->error_fd = error_pipe[0];
	return 0;
}

int spawn_read_failure(int error_fd, struct spawn_failure *failure)
{
	ssize_t got;
	do
		got = read(error_fd, failure, sizeof(*failure));
	while (got < 0 && errno == EINTR);
	if (got == (ssize_t)sizeof(*failure))
		return 1;
	if (got == 0)
		return 0;
	if (got < 0 && errno == EAGAIN)
		return -EAGAIN;
	/* A short read cannot happen for a pipe write under PIPE_BUF; treat
	 * anything odd as an exec failure of unknown cause. */
	failure->stage = SPAWN_STAGE_EXEC;
	failure->error = got < 0 ? errno : EIO;
	return 1;
}

void spawn_failure_describe(const struct spawn_request *request,
			    const struct spawn_failure *failure, char *buffer, size_t size)
{
	const char *reason = strerror(failure->error);
	switch (failure->stage) {
	case SPAWN_STAGE_SIGNALS:
		snprintf(buffer, size, "reset signals: %s", reason);
		break;
	case SPAWN_STAGE_SESSION:
		snprintf(buffer, size, "setsid: %s", reason);
		break;
	case SPAWN_STAGE_STDIO:
		snprintf(buffer, size, "set up stdin/stdout/stderr: %s", reason);
		break;
	case SPAWN_STAGE_CHDIR:
		snprintf(buffer, size, "chdir %s: %s", request->cwd, reason);
		break;
	case SPAWN_STAGE_SETGROUPS:
		snprintf(buffer, size, "setgroups: %s", reason);
		break;
	case SPAWN_STAGE_SETGID:
		snprintf(buffer, size, "setgid %u: %s", (unsigned)request->gid, reason);
		break;
	case SPAWN_STAGE_SETUID:
		snprintf(buffer, size, "setuid %u: %s", (unsigned)request->uid, reason);
		break;
	case SPAWN_STAGE_EXEC:
	default:
		snprintf(buffer, size, "exec %s: %s", request->executable, reason);
		break;
	}
}

static const char *env_lookup(char *const *envp, const char *name)
{
	size_t length = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, length) == 0 && (*envp)[length] == '=')
			return *envp + length + 1;
	return NULL;
}

const char *spawn_resolve_executable(const char *argv0, char *const *envp, char *buffer,
				     size_t size)
{
	if (strchr(argv0, '/'))
		return argv0;
	const char *path = env_lookup(envp, "PATH");
	if (!path)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		size_t dir_length = (size_t)(end - path);
		/* An empty PATH entry means the current directory. */
		int written = dir_length ? snprintf(buffer, size, "%.*s/%s", (int)dir_length,
						    path, argv0)
					 : snprintf(buffer, size, "./%s", argv0);
		if (written > 0 && (size_t)written < size && access(buffer, X_OK) == 0)
			return buffer;
		path = *end ? end + 1 : end;
	}
	return argv0;
}
