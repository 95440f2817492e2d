#include "ping_pong_floor.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static void write_all(int fd, const char *data, size_t length)
{
	while (length > 0) {
		ssize_t sent = write(fd, data, length);
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent <= 0)
			_exit(1);
		data += sent;
		length -= (size_t)sent;
	}
}

/* The child: nothing but the epoll wait, the read and the reply that any
 * server's ping-pong needs. */
static void serve(int fd, size_t reply_size)
{
	static const char head[] = "{\"ok\":true,\"pad\":\"";
	static const char tail[] = "\"}\n";
	size_t minimum = sizeof(head) - 1 + sizeof(tail) - 1;
	if (reply_size < minimum)
		reply_size = minimum;
	char *reply = malloc(reply_size);
	if (!reply)
		_exit(1);
	memcpy(reply, head, sizeof(head) - 1);
	memset(reply + sizeof(head) - 1, 'x', reply_size - minimum);
	memcpy(reply + reply_size - (sizeof(tail) - 1), tail, sizeof(tail) - 1);

	int epoll = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};
	if (epoll < 0 || epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) < 0)
		_exit(1);
	char buffer[65536];
	for (;;) {
		int ready = epoll_wait(epoll, &event, 1, -1);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			_exit(1);
		ssize_t got = read(fd, buffer, sizeof(buffer));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			_exit(got == 0 ? 0 : 1);
		for (ssize_t i = 0; i < got; i++)
			if (buffer[i] == '\n')
				write_all(fd, reply, reply_size);
	}
}

pid_t echo_server_start(size_t reply_size, int *client_fd)
{
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
		die("socketpair: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		exit_with_parent(SIGKILL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		close(pair[0]);
		serve(pair[1], reply_size);
	}
	close(pair[1]);
	*client_fd = pair[0];
	return pid;
}

void echo_server_stop(pid_t pid, int client_fd)
{
	close(client_fd);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

bool pin_to_cpu(pid_t pid, int cpu, cpu_set_t *saved)
{
	if (cpu < 0 || sched_getaffinity(pid, sizeof(*saved), saved) < 0)
		return false;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(pid, sizeof(one), &one) == 0;
}

void pin_restore(pid_t pid, const cpu_set_t *saved)
{
	sched_setaffinity(pid, sizeof(*saved), saved);
}

int first_allowed_cpu(void)
{
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return -1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &allowed))
			return cpu;
	return -1;
}
