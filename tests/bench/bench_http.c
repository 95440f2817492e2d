/* bench_http: corral's HTTP endpoint (config `http`), with N sleeping
 * tasks (1000; --quick 50; --tasks N), in one run.
 *
 *   1. requests per second of GET /livez, /readyz and /metrics: back to
 *      back on one kept-alive connection, and over 8 connections at once
 *      (one client process each);
 *   2. what one answer about the N tasks costs, fresh connection each time:
 *      a /metrics scrape and a /readyz, beside `corral status --json` (the
 *      CLI, forked and exec'd as a probe would) and one raw status request
 *      on the control socket: wall time (median, p90) and corral's CPU per
 *      request.
 *
 * Usage: bench_http [--corral PATH] [--tasks N] [--quick]
 *
 * Prints figures, asserts nothing about timing. Its files live in a
 * temporary directory under /tmp, removed at exit; corral is SIGKILLed if
 * the bench dies. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define CLIENTS 8

static pid_t corral_pid;

static void cleanup(void)
{
	if (corral_pid > 0)
		kill(corral_pid, SIGKILL);
	remove_temp_dir();
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_http [--corral PATH] [--tasks N] [--quick]\n\n"
		     "corral's HTTP endpoint: requests/s of /livez, /readyz and /metrics, and\n"
		     "the cost of one answer about N tasks beside `corral status --json`.\n");
}

/* ---- HTTP, spoken directly ---------------------------------------------- */

static int http_connect(unsigned short port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	while (connect(fd, (struct sockaddr *)&address, sizeof(address)) < 0)
		if (errno != EINTR)
			die("connect 127.0.0.1:%u: %s", port, strerror(errno));
	int on = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	return fd;
}

static void send_all(int fd, const char *data, size_t length)
{
	while (length) {
		ssize_t sent = send(fd, data, length, MSG_NOSIGNAL);
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent <= 0)
			die("send: %s", strerror(errno));
		data += sent;
		length -= (size_t)sent;
	}
}

/* One GET of `target` on `fd`; its status, the body's length in *body. */
static int http_get(int fd, const char *target, bool close_after, struct text *buffer, size_t *body)
{
	char request[256];
	int length = snprintf(request, sizeof(request), "GET %s HTTP/1.1\r\nHost: bench\r\n%s\r\n",
			      target, close_after ? "Connection: close\r\n" : "");
	send_all(fd, request, (size_t)length);
	buffer->length = 0;
	size_t head = 0, total = 0;
	for (;;) {
		text_reserve(buffer, 65536);
		ssize_t got = recv(fd, buffer->data + buffer->length,
				   buffer->capacity - buffer->length - 1, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			die("GET %s: the connection closed (%s)", target,
			    got < 0 ? strerror(errno) : "EOF");
		buffer->length += (size_t)got;
		buffer->data[buffer->length] = '\0';
		if (!head) {
			char *end = strstr(buffer->data, "\r\n\r\n");
			if (!end)
				continue;
			head = (size_t)(end - buffer->data) + 4;
			char *field = strstr(buffer->data, "Content-Length: ");
			if (!field || field > end)
				die("GET %s: no Content-Length", target);
			total = head + strtoul(field + 16, NULL, 10);
		}
		if (buffer->length >= total)
			break;
	}
	*body = total - head;
	return atoi(buffer->data + 9);
}

/* ---- the control socket, spoken directly --------------------------------- */

static const char *control_path;

static size_t raw_status(struct text *buffer)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", control_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof(address)) < 0)
		die("connect %s: %s", control_path, strerror(errno));
	static const char request[] = "{\"version\":1,\"command\":\"status\"}\n";
	send_all(fd, request, sizeof(request) - 1);
	buffer->length = 0;
	for (;;) {
		text_reserve(buffer, 65536);
		ssize_t got = recv(fd, buffer->data + buffer->length,
				   buffer->capacity - buffer->length - 1, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			die("status: the control socket closed");
		buffer->length += (size_t)got;
		if (buffer->data[buffer->length - 1] == '\n')
			break;
	}
	close(fd);
	return buffer->length;
}

/* ---- corral's CPU --------------------------------------------------------- */

/* corral's CPU time in ns (it has one thread), read once it sleeps: the
 * kernel brings the figure up to date when a thread stops running. */
static int64_t corral_cpu_ns(void)
{
	char path[64];
	for (int i = 0; i < 1000; i++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)corral_pid);
		char *stat = read_file(path, NULL);
		char *after = stat ? strrchr(stat, ')') : NULL;
		bool running = after && after[1] == ' ' && after[2] == 'R';
		free(stat);
		if (!running)
			break;
		struct timespec pause = {.tv_nsec = 50000};
		nanosleep(&pause, NULL);
	}
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)corral_pid);
	char *content = read_file(path, NULL);
	if (!content)
		die("cannot read %s", path);
	int64_t ns = strtoll(content, NULL, 10);
	free(content);
	return ns;
}

/* ---- part 1: requests per second ------------------------------------------ */

/* Back to back on one connection for `seconds`; the count. */
static unsigned long ping_pong(unsigned short port, const char *target, double seconds)
{
	int fd = http_connect(port);
	struct text buffer = {0};
	unsigned long count = 0;
	size_t body;
	int64_t end = now_ns() + (int64_t)(seconds * 1e9);
	while (now_ns() < end) {
		if (http_get(fd, target, false, &buffer, &body) / 100 > 5)
			die("GET %s failed", target);
		count++;
	}
	close(fd);
	free(buffer.data);
	return count;
}

static void requests_per_second(unsigned short port, const char *target, double seconds)
{
	unsigned long one = ping_pong(port, target, seconds);
	/* CLIENTS processes, each its own connection, counting into a pipe. */
	int pipe_fds[2];
	if (pipe(pipe_fds) < 0)
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	pid_t clients[CLIENTS];
	for (int i = 0; i < CLIENTS; i++) {
		clients[i] = fork();
		if (clients[i] < 0)
			die("fork: %s", strerror(errno));
		if (clients[i] == 0) {
			exit_with_parent(SIGKILL);
			unsigned long count = ping_pong(port, target, seconds);
			if (write(pipe_fds[1], &count, sizeof(count)) != sizeof(count))
				_exit(1);
			_exit(0);
		}
	}
	close(pipe_fds[1]);
	unsigned long many = 0, count;
	while (read(pipe_fds[0], &count, sizeof(count)) == sizeof(count))
		many += count;
	close(pipe_fds[0]);
	for (int i = 0; i < CLIENTS; i++)
		if (exit_code_of(reap_status(clients[i])) != 0)
			die("a client of %s failed", target);
	printf("%-10s %14.0f %16.0f\n", target, (double)one / seconds, (double)many / seconds);
}

/* ---- part 2: one answer about N tasks -------------------------------------- */

enum way { WAY_METRICS, WAY_READYZ, WAY_CLI, WAY_RAW_STATUS };

static const char *corral_binary;

static size_t one_answer(enum way way, unsigned short port, struct text *buffer)
{
	size_t body = 0;
	switch (way) {
	case WAY_METRICS:
	case WAY_READYZ: {
		int fd = http_connect(port);
		int status =
		    http_get(fd, way == WAY_METRICS ? "/metrics" : "/readyz", true, buffer, &body);
		close(fd);
		if (status != 200)
			die("%s answered %d", way == WAY_METRICS ? "/metrics" : "/readyz", status);
		return body;
	}
	case WAY_CLI: {
		int pipe_fds[2];
		if (pipe2(pipe_fds, O_CLOEXEC) < 0)
			die("pipe: %s", strerror(errno));
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			dup2(pipe_fds[1], STDOUT_FILENO);
			execl(corral_binary, corral_binary, "status", "--json", (char *)NULL);
			_exit(127);
		}
		close(pipe_fds[1]);
		char chunk[65536];
		ssize_t got;
		while ((got = read(pipe_fds[0], chunk, sizeof(chunk))) > 0 ||
		       (got < 0 && errno == EINTR))
			body += got > 0 ? (size_t)got : 0;
		close(pipe_fds[0]);
		if (exit_code_of(reap_status(pid)) != 0)
			die("corral status --json failed");
		return body;
	}
	case WAY_RAW_STATUS:
		return raw_status(buffer);
	}
	return 0;
}

static void answer_cost(const char *name, enum way way, unsigned short port, unsigned rounds)
{
	struct series wall = {0};
	struct text buffer = {0};
	size_t bytes = 0;
	one_answer(way, port, &buffer); /* warm: the buffers' sizes, the page cache */
	int64_t cpu_before = corral_cpu_ns();
	for (unsigned i = 0; i < rounds; i++) {
		int64_t start = now_ns();
		bytes = one_answer(way, port, &buffer);
		series_add(&wall, (double)(now_ns() - start) / 1e3);
	}
	int64_t cpu = corral_cpu_ns() - cpu_before;
	series_sort(&wall);
	printf("%-28s %9zu %11.0f %11.0f %14.0f\n", name, bytes, series_median(&wall),
	       series_quantile(&wall, 0.9), (double)cpu / 1e3 / rounds);
	free(wall.values);
	free(buffer.data);
}

/* ---- corral ----------------------------------------------------------------- */

static unsigned short free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in address = {.sin_family = AF_INET};
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t length = sizeof(address);
	if (fd < 0 || bind(fd, (struct sockaddr *)&address, sizeof(address)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&address, &length) < 0)
		die("a free port: %s", strerror(errno));
	close(fd);
	return ntohs(address.sin_port);
}

static void start_corral(const char *corral, unsigned tasks, unsigned short port)
{
	char *config = temp_path("http.yaml");
	char *socket_path = temp_path("control.sock");
	struct text text = {0};
	text_append(&text, "socket: \"%s\"\nhttp: {listen: \"127.0.0.1:%u\"}\n", socket_path, port);
	write_file(config, text.data, text.length, 0644);
	free(text.data);
	/* The tasks, as every bench writes them, after the two keys. */
	char *tasks_config = temp_path("tasks.yaml");
	write_sleep_config(tasks_config, tasks, NULL);
	size_t length;
	char *tasks_text = read_file(tasks_config, &length);
	char *head = read_file(config, NULL);
	struct text whole = {0};
	text_append(&whole, "%s%s", head, tasks_text);
	write_file(config, whole.data, whole.length, 0644);
	free(whole.data);
	free(head);
	free(tasks_text);
	free(tasks_config);
	setenv("CORRAL_SOCKET", socket_path, 1);
	control_path = socket_path;
	fflush(stdout);
	corral_pid = fork();
	if (corral_pid < 0)
		die("fork: %s", strerror(errno));
	if (corral_pid == 0) {
		exit_with_parent(SIGKILL);
		FILE *null = freopen("/dev/null", "w", stderr);
		null = null ? freopen("/dev/null", "w", stdout) : NULL;
		(void)null;
		execl(corral, corral, "run", config, (char *)NULL);
		_exit(127);
	}
	free(config);
	/* Ready when every task runs: /readyz says 200. */
	int64_t deadline = now_ns() + 60000000000LL;
	struct text buffer = {0};
	for (;;) {
		if (now_ns() > deadline)
			die("corral's tasks were not all ready within 60 s");
		sleep_ms(50);
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
		address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (connect(fd, (struct sockaddr *)&address, sizeof(address)) < 0) {
			close(fd);
			continue;
		}
		size_t body;
		int status = http_get(fd, "/readyz", true, &buffer, &body);
		close(fd);
		if (status == 200)
			break;
	}
	free(buffer.data);
}

int main(int argc, char **argv)
{
	bench_init("bench_http", cleanup);
	struct bench_options options = {.corral = "build/corral"};
	int exit_code = parse_options(argc, argv, true, usage, &options);
	if (exit_code >= 0)
		return exit_code;
	unsigned tasks = options.tasks ? options.tasks : options.quick ? 50 : 1000;
	double seconds = options.quick ? 0.3 : 3;
	unsigned rounds = options.quick ? 10 : 200;
	catch_fatal_signals();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	make_temp_dir("/tmp/bench_http.XXXXXX");
	print_machine_line(options.quick, options.corral, NULL);
	corral_binary = options.corral;
	unsigned short port = free_port();
	start_corral(options.corral, tasks, port);

	printf("\n1. requests/s, %u tasks, %.1f s each: one kept-alive connection, and %d "
	       "connections at once\n",
	       tasks, seconds, CLIENTS);
	printf("%-10s %14s %16s\n", "", "1 connection", "8 connections");
	requests_per_second(port, "/livez", seconds);
	requests_per_second(port, "/readyz", seconds);
	requests_per_second(port, "/metrics", seconds);

	printf("\n2. one answer about %u tasks, a fresh connection each, %u times: bytes, wall "
	       "µs, corral's CPU µs\n",
	       tasks, rounds);
	printf("%-28s %9s %11s %11s %14s\n", "", "bytes", "median", "p90", "corral CPU");
	answer_cost("GET /metrics", WAY_METRICS, port, rounds);
	answer_cost("GET /readyz", WAY_READYZ, port, rounds);
	answer_cost("raw status (control socket)", WAY_RAW_STATUS, port, rounds);
	answer_cost("corral status --json (CLI)", WAY_CLI, port, rounds);

	stop_process(corral_pid, 30000);
	corral_pid = 0;
	cleanup();
	return 0;
}
