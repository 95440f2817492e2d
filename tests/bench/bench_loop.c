/* bench_loop: corral's event loop under hostile inputs (issue 36). Each
 * scenario runs a corral of its own (control socket and `http:` endpoint
 * in a temporary directory) for D seconds (10; --quick 1) while the bench
 * GETs /livez on a fresh connection every 10 ms, as a kubelet would, only
 * faster:
 *
 *   idle           nothing but the prober
 *   pattern        a task writes 4 KB lines as fast as it can, and its
 *                  readiness waits for `(.*){16}b` in them (never there):
 *                  the costliest pattern corral takes (line_pattern_cost.c
 *                  refuses more repetitions)
 *   clients        1000 control clients connect at once, each asks for
 *                  status and reads it; again and again
 *   output         4 tasks write as fast as they can: 2 of 4 KB lines,
 *                  2 of 80-byte lines
 *   knocks         a task connects to the control socket and hangs up in a
 *                  loop (refused: it has no control rights)
 *   http-flood     the bench opens and closes connections to the HTTP port
 *                  in a loop, sending nothing
 *   signals        a task sends corral SIGUSR1, SIGHUP and SIGCHLD in a loop
 *   spin           4 tasks burn the CPU in a loop, writing nothing: corral
 *                  has nothing to do but answer, and must get the CPU to
 *                  (not in `all`, which stays as it was measured before)
 *   all-but-pattern  every input below at once, the heavy pattern apart
 *   all            every input above at once
 *
 * and prints, per scenario: corral's longest loop turn (the gauge
 * corral_loop_longest_turn_seconds of /metrics, read after the tasks were
 * up and again at the end), the /livez answers (count, median, p99, max,
 * none within 2 s), and the lines corral wrote on its stderr. The aim
 * (issue 36): longest turn <= 10 ms, /livez <= 50 ms. A figure, never a
 * test: nothing is asserted about time.
 *
 * The tasks are this very program run with a --task-* option.
 *
 * Usage: bench_loop [--corral PATH] [--quick]
 * BENCH_LOOP_ONLY=NAME runs that scenario alone. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define PROBE_EVERY_MS   10
#define PROBE_TIMEOUT_MS 2000
#define CONTROL_CLIENTS  1000

enum input {
	INPUT_PATTERN = 1 << 0,
	INPUT_CLIENTS = 1 << 1,
	INPUT_OUTPUT = 1 << 2,
	INPUT_KNOCKS = 1 << 3,
	INPUT_HTTP_FLOOD = 1 << 4,
	INPUT_SIGNALS = 1 << 5,
	INPUT_SPIN = 1 << 6,
};

struct scenario {
	const char *name;
	unsigned inputs;
};

static const struct scenario scenarios[] = {
    {"idle", 0},
    {"pattern", INPUT_PATTERN},
    {"clients", INPUT_CLIENTS},
    {"output", INPUT_OUTPUT},
    {"knocks", INPUT_KNOCKS},
    {"http-flood", INPUT_HTTP_FLOOD},
    {"signals", INPUT_SIGNALS},
    {"spin", INPUT_SPIN},
    /* What is left once patterns are bounded (issue 36 item 1). */
    {"all-but-pattern",
     INPUT_CLIENTS | INPUT_OUTPUT | INPUT_KNOCKS | INPUT_HTTP_FLOOD | INPUT_SIGNALS},
    {"all", INPUT_PATTERN | INPUT_CLIENTS | INPUT_OUTPUT | INPUT_KNOCKS | INPUT_HTTP_FLOOD |
		INPUT_SIGNALS},
};

static pid_t corral_pid;
static pid_t drivers[2];
/* --quick: shorter waits for a corral that does not answer. */
static unsigned patience_ms = 5000;

static void cleanup(void)
{
	for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++)
		if (drivers[i] > 0)
			kill(drivers[i], SIGKILL);
	if (corral_pid > 0)
		kill(corral_pid, SIGKILL);
	remove_temp_dir();
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_loop [--corral PATH] [--quick]\n\n"
		     "corral's longest loop turn and /livez latency while hostile inputs come:\n"
		     "a heavy readiness pattern, 1000 control clients, floods of output and of\n"
		     "connections, signals from a task.\n");
}

/* ---- the tasks: this program with a --task-* option ---------------------- */

/* Lines of `length` bytes of `fill` and a newline, as fast as write()
 * takes them. */
static int task_lines(size_t length, char fill)
{
	char *line = malloc(length + 1);
	if (!line)
		return 1;
	memset(line, fill, length);
	line[length] = '\n';
	for (;;)
		if (write(STDOUT_FILENO, line, length + 1) < 0 && errno != EINTR)
			return 1;
}

/* The CPU burnt, nothing written. */
static int task_spin(void)
{
	volatile unsigned long turns = 0;
	while (turns != ~0UL)
		turns++;
	return 0;
}

/* Connects to corral's control socket and hangs up, in a loop: refused,
 * as a task with no control rights is. */
static int task_connections(const char *path)
{
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return 1;
		(void)!connect(fd, (struct sockaddr *)&address, sizeof(address));
		close(fd);
	}
}

/* Signals to corral, its parent: USR1 (ignored, said), HUP (a reload of
 * the same file), CHLD (a sweep for zombies). */
static int task_signals(void)
{
	pid_t corral = getppid();
	static const int signals[] = {SIGUSR1, SIGHUP, SIGCHLD};
	for (unsigned i = 0;; i++) {
		if (kill(corral, signals[i % 3]) < 0)
			return 1;
		if (i % 64 == 63)
			usleep(1000);
	}
}

/* ---- HTTP ------------------------------------------------------------------ */

static unsigned short http_port;

/* A fresh connection, GET `target`, the whole answer into `buffer`, within
 * `timeout_ms`. The status, or -1 when none came in time. */
static int http_get(const char *target, int timeout_ms, struct text *buffer)
{
	int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(http_port)};
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&address, sizeof(address)) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	char request[256];
	int length =
	    snprintf(request, sizeof(request),
		     "GET %s HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n", target);
	bool sent = false;
	buffer->length = 0;
	for (;;) {
		int64_t left_ms = (deadline - now_ns()) / 1000000;
		if (left_ms <= 0)
			break;
		struct pollfd poller = {.fd = fd, .events = sent ? POLLIN : POLLOUT};
		if (poll(&poller, 1, (int)left_ms) <= 0)
			continue;
		if (!sent) {
			if (send(fd, request, (size_t)length, MSG_NOSIGNAL) != length)
				break;
			sent = true;
			continue;
		}
		text_reserve(buffer, 65536);
		ssize_t got = recv(fd, buffer->data + buffer->length,
				   buffer->capacity - buffer->length - 1, 0);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0) { /* the end (Connection: close) */
			close(fd);
			buffer->data[buffer->length] = '\0';
			return buffer->length > 12 ? atoi(buffer->data + 9) : -1;
		}
		buffer->length += (size_t)got;
	}
	close(fd);
	return -1;
}

/* corral_loop_longest_turn_seconds in ms; -1 when /metrics did not answer. */
static double longest_turn_ms(void)
{
	struct text buffer = {0};
	double ms = -1;
	if (http_get("/metrics", (int)patience_ms, &buffer) == 200) {
		const char *line = strstr(buffer.data, "\ncorral_loop_longest_turn_seconds ");
		if (line)
			ms = strtod(line + strlen("\ncorral_loop_longest_turn_seconds "), NULL) *
			     1e3;
	}
	free(buffer.data);
	return ms;
}

/* ---- the drivers the bench runs itself ------------------------------------ */

static const char *control_path;

/* CONTROL_CLIENTS connections at once, each a status request and its
 * reply read, then all closed; again until killed. */
static void drive_control_clients(void)
{
	static const char request[] = "{\"version\":1,\"command\":\"status\"}\n";
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", control_path);
	static int fds[CONTROL_CLIENTS];
	static struct pollfd pollers[CONTROL_CLIENTS];
	char chunk[65536];
	for (;;) {
		for (int i = 0; i < CONTROL_CLIENTS; i++) {
			fds[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fds[i] >= 0 &&
			    connect(fds[i], (struct sockaddr *)&address, sizeof(address)) == 0)
				(void)!send(fds[i], request, sizeof(request) - 1, MSG_NOSIGNAL);
			pollers[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		}
		/* Each reply read to its newline, or the connection's end. */
		int64_t deadline = now_ns() + 10000000000LL;
		for (int open = CONTROL_CLIENTS; open > 0 && now_ns() < deadline;) {
			if (poll(pollers, CONTROL_CLIENTS, 1000) <= 0)
				continue;
			for (int i = 0; i < CONTROL_CLIENTS; i++) {
				if (pollers[i].fd < 0 || !pollers[i].revents)
					continue;
				ssize_t got = recv(pollers[i].fd, chunk, sizeof(chunk), 0);
				if (got <= 0 || chunk[got - 1] == '\n') {
					pollers[i].fd = -1;
					open--;
				}
			}
		}
		for (int i = 0; i < CONTROL_CLIENTS; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
}

/* Connections to the HTTP port opened and closed without a request. */
static void drive_http_connections(void)
{
	struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(http_port)};
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			_exit(1);
		(void)!connect(fd, (struct sockaddr *)&address, sizeof(address));
		close(fd);
	}
}

static pid_t start_driver(void (*drive)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		exit_with_parent(SIGKILL);
		drive();
		_exit(0);
	}
	return pid;
}

/* ---- corral ------------------------------------------------------------------ */

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

static char self[4096];

static void add_task(struct text *config, const char *name, const char *arguments,
		     const char *extra)
{
	text_append(config, "      %s: {command: [\"%s\", %s], restart: {policy: never}%s}\n", name,
		    self, arguments, extra ? extra : "");
}

static char *write_config(unsigned inputs)
{
	struct text config = {0};
	text_append(&config,
		    "socket: \"%s\"\nhttp: {listen: \"127.0.0.1:%u\"}\ngroups:\n  bench:\n"
		    "    tasks:\n      idle: {command: [\"sleep\", \"1000\"]}\n",
		    control_path, http_port);
	if (inputs & INPUT_PATTERN)
		add_task(&config, "pattern", "\"--task-lines\", \"4095\", \"a\"",
			 ", readiness: {log: \"(.*){16}b\"}");
	if (inputs & INPUT_OUTPUT) {
		add_task(&config, "long1", "\"--task-lines\", \"4095\", \"x\"", NULL);
		add_task(&config, "long2", "\"--task-lines\", \"4095\", \"y\"", NULL);
		add_task(&config, "short1", "\"--task-lines\", \"79\", \"z\"", NULL);
		add_task(&config, "short2", "\"--task-lines\", \"79\", \"w\"", NULL);
	}
	if (inputs & INPUT_KNOCKS) {
		char arguments[512];
		snprintf(arguments, sizeof(arguments), "\"--task-connections\", \"%s\"",
			 control_path);
		add_task(&config, "knocker", arguments, NULL);
	}
	if (inputs & INPUT_SIGNALS)
		add_task(&config, "signaller", "\"--task-signals\"", NULL);
	for (int i = 0; (inputs & INPUT_SPIN) && i < 4; i++) {
		char name[16];
		snprintf(name, sizeof(name), "spin%d", i);
		add_task(&config, name, "\"--task-spin\"", NULL);
	}
	char *path = temp_path("loop.yaml");
	write_file(path, config.data, config.length, 0644);
	free(config.data);
	return path;
}

/* Up once /livez answers: true. false when corral exited first (a config
 * it refuses, say a pattern a later corral does not take), with the end
 * of what it said in `why`. */
static bool start_corral(const char *corral, const char *config, const char *stderr_path, char *why,
			 size_t why_size)
{
	fflush(stdout);
	corral_pid = fork();
	if (corral_pid < 0)
		die("fork: %s", strerror(errno));
	if (corral_pid == 0) {
		exit_with_parent(SIGKILL);
		int null = open("/dev/null", O_WRONLY);
		int errors = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (null < 0 || errors < 0 || dup2(null, STDOUT_FILENO) < 0 ||
		    dup2(errors, STDERR_FILENO) < 0)
			_exit(127);
		execl(corral, corral, "run", config, (char *)NULL);
		_exit(127);
	}
	int64_t deadline = now_ns() + 60000000000LL;
	struct text buffer = {0};
	while (http_get("/livez", 1000, &buffer) != 200) {
		int status;
		if (waitpid(corral_pid, &status, WNOHANG) == corral_pid) {
			corral_pid = 0;
			char *said = read_file(stderr_path, NULL);
			snprintf(why, why_size, "corral exited (%d) before /livez answered: %s",
				 exit_code_of(status), text_tail(said, 300));
			for (char *c = why; *c; c++)
				if (*c == '\n')
					*c = ' ';
			free(said);
			free(buffer.data);
			return false;
		}
		if (now_ns() > deadline)
			die("/livez did not answer within 60 s");
		sleep_ms(20);
	}
	free(buffer.data);
	return true;
}

/* ---- one scenario -------------------------------------------------------------- */

struct figures {
	double turn_at_start_ms, turn_ms;
	struct series livez_ms;
	unsigned missed;
	size_t stderr_lines;
	bool survived;
};

static void print_ms(double ms)
{
	if (ms < 0)
		printf(" %9s", "none");
	else
		printf(" %9.2f", ms);
}

static void scenario(const char *corral, const struct scenario *which, double seconds)
{
	char *config = write_config(which->inputs);
	char *stderr_path = temp_path("corral-%s.stderr", which->name);
	char why[512];
	if (!start_corral(corral, config, stderr_path, why, sizeof(why))) {
		printf("%-16s %s\n", which->name, why);
		free(config);
		free(stderr_path);
		return;
	}
	sleep_ms(300); /* the tasks start */
	struct figures figures = {.turn_at_start_ms = longest_turn_ms()};
	if (which->inputs & INPUT_CLIENTS)
		drivers[0] = start_driver(drive_control_clients);
	if (which->inputs & INPUT_HTTP_FLOOD)
		drivers[1] = start_driver(drive_http_connections);

	struct text buffer = {0};
	int64_t end = now_ns() + (int64_t)(seconds * 1e9);
	while (now_ns() < end) {
		int64_t start = now_ns();
		if (http_get("/livez", PROBE_TIMEOUT_MS, &buffer) == 200)
			series_add(&figures.livez_ms, (double)(now_ns() - start) / 1e6);
		else
			figures.missed++;
		int64_t spent_ms = (now_ns() - start) / 1000000;
		if (spent_ms < PROBE_EVERY_MS)
			sleep_ms((unsigned)(PROBE_EVERY_MS - spent_ms));
	}
	free(buffer.data);
	for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++)
		if (drivers[i] > 0) {
			kill(drivers[i], SIGKILL);
			reap_status(drivers[i]);
			drivers[i] = 0;
		}
	figures.turn_ms = longest_turn_ms();
	int status;
	figures.survived = waitpid(corral_pid, &status, WNOHANG) == 0;
	stop_process(corral_pid, 2 * patience_ms);
	corral_pid = 0;
	char *errors = read_file(stderr_path, NULL);
	figures.stderr_lines = errors ? count_occurrences(errors, "\n") : 0;
	free(errors);

	series_sort(&figures.livez_ms);
	printf("%-16s", which->name);
	print_ms(figures.turn_at_start_ms);
	print_ms(figures.turn_ms);
	printf(" %7zu", figures.livez_ms.count);
	print_ms(series_median(&figures.livez_ms));
	print_ms(series_quantile(&figures.livez_ms, 0.99));
	print_ms(series_max(&figures.livez_ms));
	printf(" %7u %9zu%s\n", figures.missed, figures.stderr_lines,
	       figures.survived ? "" : "  corral had exited");
	free(figures.livez_ms.values);
	free(config);
	free(stderr_path);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--task-lines") == 0)
		return task_lines(strtoul(argv[2], NULL, 10), argv[3][0]);
	if (argc == 3 && strcmp(argv[1], "--task-connections") == 0)
		return task_connections(argv[2]);
	if (argc == 2 && strcmp(argv[1], "--task-signals") == 0)
		return task_signals();
	if (argc == 2 && strcmp(argv[1], "--task-spin") == 0)
		return task_spin();

	bench_init("bench_loop", cleanup);
	struct bench_options options = {.corral = "build/corral"};
	int exit_code = parse_options(argc, argv, false, usage, &options);
	if (exit_code >= 0)
		return exit_code;
	double seconds = options.quick ? 1 : 10;
	patience_ms = options.quick ? 1000 : 5000;
	catch_fatal_signals();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (length <= 0)
		die("/proc/self/exe: %s", strerror(errno));
	self[length] = '\0';
	/* 1000 clients at once, and the bench's own. */
	struct rlimit files;
	if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
		files.rlim_cur = files.rlim_max;
		setrlimit(RLIMIT_NOFILE, &files);
	}
	make_temp_dir("/tmp/bench_loop.XXXXXX");
	use_own_control_socket();
	control_path = getenv("CORRAL_SOCKET");
	http_port = free_port();
	print_machine_line(options.quick, options.corral, NULL);

	printf("\n%.0f s a scenario, /livez on a fresh connection every %d ms (none: no "
	       "answer within %d ms); times in ms\n",
	       seconds, PROBE_EVERY_MS, PROBE_TIMEOUT_MS);
	printf("%-16s %9s %9s %7s %9s %9s %9s %7s %9s\n", "", "turn@up", "turn", "livez", "median",
	       "p99", "max", "none", "stderr");
	const char *only = getenv("BENCH_LOOP_ONLY");
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!only || strcmp(only, scenarios[i].name) == 0)
			scenario(options.corral, &scenarios[i], seconds);
	printf("\nturn@up: corral's longest loop turn once its tasks were up; turn: at the end "
	       "(corral_loop_longest_turn_seconds). stderr: lines corral wrote there.\n"
	       "Aim (issue 36): turn <= 10 ms, /livez <= 50 ms.\n");
	cleanup();
	return 0;
}
