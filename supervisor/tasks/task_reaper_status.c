/* A task whose pid namespace has corral's reaper as its PID 1: what the
 * reaper's status socket says (isolation/reaper/reaper.c). corral's child
 * is the reaper, so its pid and its exit are the reaper's; the socket gives
 * the command's own:
 *   - its pid as corral sees it, from the credentials of the "pid" message
 *     the command's process sends before its exec (the kernel translates
 *     the pid into the receiver's namespace), for `status` and `signal`;
 *   - its wait status ("signal 9"), which the reaper's exit code (137)
 *     cannot tell from an exit with code 137, so that a kill -9 or an OOM
 *     kill reads as it does for a task without a pid namespace.
 * No extra process, no /proc: one socketpair per start. */
#include "supervisor/tasks/task.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static bool has_reaper(const struct task *task)
{
	return task->isolation && task->isolation->reaper_argv != NULL;
}

/* "exit C" or "signal S" into `exit`; false for anything else. */
static bool parse_command_status(const char *text, struct task_exit *exit)
{
	int number;
	char end;
	if (sscanf(text, "exit %d%c", &number, &end) == 1 && number >= 0 && number <= 255) {
		*exit = (struct task_exit){.kind = TASK_EXIT_CODE, .code = number};
		return true;
	}
	if (sscanf(text, "signal %d%c", &number, &end) == 1 && number > 0 && number < 128) {
		*exit = (struct task_exit){.kind = TASK_EXIT_SIGNAL, .signal = number};
		return true;
	}
	return false;
}

static void take_message(struct task *task, const char *text, const struct ucred *sender)
{
	if (strcmp(text, "pid") == 0) {
		/* 0 when the sender has no pid in corral's namespace: none. */
		if (sender && sender->pid > 0)
			task->command_pid = sender->pid;
		task_announce_started(task);
		return;
	}
	if (parse_command_status(text, &task->command_exit))
		task->command_exit_told = true;
}

/* Reads every message waiting; never blocks. */
static void read_messages(struct task *task)
{
	int fd = task->reaper_status_watch.fd;
	while (fd >= 0) {
		char text[64];
		union {
			struct cmsghdr header;
			char space[CMSG_SPACE(sizeof(struct ucred))];
		} control;
		struct iovec vector = {.iov_base = text, .iov_len = sizeof(text) - 1};
		struct msghdr message = {.msg_iov = &vector,
					 .msg_iovlen = 1,
					 .msg_control = &control,
					 .msg_controllen = sizeof(control)};
		ssize_t length = recvmsg(fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (length < 0)
			return; /* EAGAIN: all read */
		text[length] = '\0';
		const struct ucred *sender = NULL;
		for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header;
		     header = CMSG_NXTHDR(&message, header))
			if (header->cmsg_level == SOL_SOCKET &&
			    header->cmsg_type == SCM_CREDENTIALS)
				sender = (const struct ucred *)CMSG_DATA(header);
		take_message(task, text, sender);
	}
}

static void on_reaper_status(struct loop_watch *watch, uint32_t events)
{
	read_messages(watch->data);
}

static void close_status_socket(struct task *task)
{
	if (task->reaper_status_watch.fd >= 0) {
		loop_watch_remove(task->services->loop, &task->reaper_status_watch);
		close(task->reaper_status_watch.fd);
		task->reaper_status_watch.fd = -1;
	}
	if (task->reaper_status_write >= 0) {
		close(task->reaper_status_write);
		task->reaper_status_write = -1;
	}
}

void task_reaper_status_init(struct task *task)
{
	task->reaper_status_watch =
	    (struct loop_watch){.fd = -1, .callback = on_reaper_status, .data = task};
	task->reaper_status_write = -1;
}

int task_reaper_status_prepare_spawn(struct task *task, struct spawn_request *request)
{
	close_status_socket(task);
	task->command_pid = 0;
	task->command_exit_told = false;
	if (!has_reaper(task))
		return 0;
	int ends[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, ends) < 0)
		return -errno;
	int on = 1;
	/* corral's end: credentials on each message, and never a blocking read. */
	if (setsockopt(ends[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0 ||
	    fcntl(ends[0], F_SETFL, O_NONBLOCK) < 0) {
		int failure = -errno;
		close(ends[0]);
		close(ends[1]);
		return failure;
	}
	task->reaper_status_watch.fd = ends[0];
	task->reaper_status_write = ends[1];
	loop_watch_add(task->services->loop, &task->reaper_status_watch, EPOLLIN);
	request->reaper_status_target = task->isolation->reaper_status_target;
	request->reaper_status_fd = ends[1];
	return 0;
}

void task_reaper_status_spawned(struct task *task)
{
	/* Only the reaper holds its end now. */
	if (task->reaper_status_write >= 0) {
		close(task->reaper_status_write);
		task->reaper_status_write = -1;
	}
}

bool task_reaper_status_run_ended(struct task *task, struct task_exit *exit)
{
	/* The reaper said it before it exited: it is waiting to be read. */
	read_messages(task);
	task_announce_started(task); /* a command that never said its pid */
	close_status_socket(task);
	task->command_pid = 0;
	if (!task->command_exit_told)
		return false;
	task->command_exit_told = false;
	*exit = task->command_exit;
	return true;
}

pid_t task_command_pid(const struct task *task)
{
	return task->command_pid > 0 ? task->command_pid : task->pid;
}

void task_reaper_status_close(struct task *task)
{
	close_status_socket(task);
}
