/* bench_top: what watching corral live costs corral. corral supervises N
 * sleeping tasks (1000); over the same window (30 s) corral's CPU time is
 * read from /proc/PID/stat (utime + stime) with nobody watching, with
 * `corral top` attached (in a pseudo-terminal of 80x24 this program opens
 * and reads), with top attached and a key pressed ten times a second (j:
 * the list scrolls), and with `corral status --json` run once a second,
 * the loop top replaces. Side by side: corral's CPU as a share of one
 * CPU, and top's own CPU and the bytes it wrote to its terminal.
 *
 * usage: bench_top [--corral PATH] [--tasks N] [--quick]
 *
 * --quick: 100 tasks, 5 s windows. Prints figures, asserts nothing. What
 * it creates lives in a temporary directory under /tmp, removed at exit;
 * the corral it started is stopped on error, on SIGINT/SIGTERM, and
 * (PR_SET_PDEATHSIG) if this program dies. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static volatile pid_t running_corral; /* 0: none */
static volatile pid_t running_client; /* top or the status loop; 0: none */

/* Async-signal-safe. */
static void cleanup(void)
{
	if (running_client > 0) {
		stop_process(running_client, 2000);
		running_client = 0;
	}
	if (running_corral > 0) {
		stop_process(running_corral, 5000);
		running_corral = 0;
	}
	remove_temp_dir();
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_top [--corral PATH] [--tasks N] [--quick]\n");
}

/* utime + stime of `pid` (every thread), in ns; -1 when unknown. Clock
 * ticks: 10 ms steps. */
static int64_t process_cpu_ns(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	char *content = read_file(path, NULL);
	if (!content)
		return -1;
	char *after_name = strrchr(content, ')');
	unsigned long long utime, stime;
	int64_t result = -1;
	if (after_name &&
	    sscanf(after_name + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
		   &stime) == 2)
		result = (int64_t)((utime + stime) *
				   (1000000000ULL / (unsigned long long)sysconf(_SC_CLK_TCK)));
	free(content);
	return result;
}

/* The same to the nanosecond, from the scheduler (/proc/PID/schedstat of
 * the main thread: corral runs one); -1 without schedstats. */
static int64_t process_run_ns(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	char *content = read_file(path, NULL);
	long long runtime = -1;
	if (content && sscanf(content, "%lld", &runtime) != 1)
		runtime = -1;
	free(content);
	return runtime;
}

static const char *socket_path(void)
{
	return getenv("CORRAL_SOCKET"); /* use_own_control_socket() set it */
}

/* Runs `corral status --json` to its end, its output in *output (when not
 * NULL, malloc'd); its exit code. */
static int run_status(const char *corral, char **output)
{
	char *path = temp_path("status.json");
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		/* Its errors (no socket yet, while corral starts) are told by
		 * its exit code. */
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || null < 0 ||
		    dup2(null, STDERR_FILENO) < 0)
			_exit(127);
		execl(corral, corral, "status", "--json", (char *)NULL);
		_exit(127);
	}
	int code = exit_code_of(reap_status(pid));
	if (output)
		*output = read_file(path, NULL);
	free(path);
	return code;
}

static void start_corral(const char *corral, unsigned tasks)
{
	char *config = temp_path("corral.yaml");
	char *log = temp_path("corral.log");
	write_sleep_config(config, tasks, NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		exit_with_parent(SIGTERM);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execl(corral, corral, "run", config, (char *)NULL);
		_exit(127);
	}
	running_corral = pid;
	int64_t start = now_ns();
	for (;;) {
		char *output = NULL;
		size_t running = 0;
		if (run_status(corral, &output) == 0 && output)
			running = count_occurrences(output, "\"state\":\"running\",\"pid\"");
		free(output);
		if (running == tasks)
			break;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			die("corral exited before its tasks ran (%s)", log);
		if (now_ns() - start > 120LL * 1000000000LL)
			die("only %zu of %u tasks running after 120 s", running, tasks);
		sleep_ms(50);
	}
	free(config);
	free(log);
}

/* top's CPU: a few ms a second, below /proc/PID/stat's ticks; schedstat's
 * when there is one. */
static int64_t client_cpu_ns(pid_t pid)
{
	int64_t run_ns = process_run_ns(pid);
	return run_ns >= 0 ? run_ns : process_cpu_ns(pid);
}

/* One window's figures. */
struct window {
	int64_t corral_ns, client_ns; /* client: -1 when none */
	int64_t corral_run_ns;        /* schedstat's, -1 without */
	uint64_t terminal_bytes;
	double seconds;
};

/* Reads what the terminal got, for `ms` at most; counts it. */
static void drain(int master, unsigned ms, uint64_t *bytes)
{
	struct pollfd fd = {.fd = master, .events = POLLIN};
	if (poll(&fd, 1, (int)ms) <= 0)
		return;
	char buffer[65536];
	ssize_t got = read(master, buffer, sizeof(buffer));
	if (got > 0)
		*bytes += (uint64_t)got;
}

/* `corral top` in a pseudo-terminal of 80x24 for `seconds` after a warm-up
 * (its first readings of every task), `keys_per_second` presses of j. */
static struct window measure_top(const char *corral, unsigned seconds, unsigned keys_per_second)
{
	struct winsize size = {.ws_row = 24, .ws_col = 80};
	int master;
	pid_t pid = forkpty(&master, NULL, NULL, &size);
	if (pid < 0)
		die("forkpty: %s", strerror(errno));
	if (pid == 0) {
		exit_with_parent(SIGTERM);
		setenv("TERM", "xterm", 1);
		execl(corral, corral, "top", (char *)NULL);
		_exit(127);
	}
	running_client = pid;
	uint64_t bytes = 0;
	for (int64_t until = now_ns() + 3000000000LL; now_ns() < until;)
		drain(master, 100, &bytes);
	struct window window = {.corral_ns = -process_cpu_ns(running_corral),
				.corral_run_ns = -process_run_ns(running_corral),
				.client_ns = -client_cpu_ns(pid)};
	bytes = 0;
	int64_t start = now_ns(), end = start + (int64_t)seconds * 1000000000LL;
	int64_t next_key = start;
	while (now_ns() < end) {
		if (keys_per_second && now_ns() >= next_key) {
			if (write(master, "j", 1) != 1)
				die("writing a key to top: %s", strerror(errno));
			next_key += 1000000000LL / keys_per_second;
		}
		drain(master, 10, &bytes);
	}
	window.seconds = (double)(now_ns() - start) / 1e9;
	window.corral_ns += process_cpu_ns(running_corral);
	window.corral_run_ns += process_run_ns(running_corral);
	window.client_ns += client_cpu_ns(pid);
	window.terminal_bytes = bytes;
	if (write(master, "q", 1) != 1)
		die("writing q to top: %s", strerror(errno));
	for (int64_t until = now_ns() + 5000000000LL; now_ns() < until;) {
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			running_client = 0;
			break;
		}
		drain(master, 10, &bytes);
	}
	if (running_client)
		die("corral top did not quit on q");
	close(master);
	return window;
}

/* Nobody watching, or (`status_loop`) `corral status --json` once a
 * second, the output thrown away. */
static struct window measure_plain(const char *corral, unsigned seconds, bool status_loop)
{
	struct window window = {.corral_ns = -process_cpu_ns(running_corral),
				.corral_run_ns = -process_run_ns(running_corral),
				.client_ns = -1};
	int64_t start = now_ns(), end = start + (int64_t)seconds * 1000000000LL;
	int64_t client_ns = 0;
	while (now_ns() < end) {
		if (status_loop) {
			struct rusage before, after;
			getrusage(RUSAGE_CHILDREN, &before);
			if (run_status(corral, NULL) != 0)
				die("corral status --json failed");
			getrusage(RUSAGE_CHILDREN, &after);
			client_ns += (after.ru_utime.tv_sec - before.ru_utime.tv_sec +
				      after.ru_stime.tv_sec - before.ru_stime.tv_sec) *
					 1000000000LL +
				     (after.ru_utime.tv_usec - before.ru_utime.tv_usec +
				      after.ru_stime.tv_usec - before.ru_stime.tv_usec) *
					 1000LL;
		}
		int64_t left = end - now_ns();
		sleep_ms((unsigned)((left < 1000000000LL ? (left > 0 ? left : 0) : 1000000000LL) /
				    1000000));
	}
	window.seconds = (double)(now_ns() - start) / 1e9;
	window.corral_ns += process_cpu_ns(running_corral);
	window.corral_run_ns += process_run_ns(running_corral);
	if (status_loop)
		window.client_ns = client_ns;
	return window;
}

static void print_row(const char *name, const struct window *window)
{
	printf("  %-40s %8.2f s %9.2f%%", name, (double)window->corral_ns / 1e9,
	       (double)window->corral_ns / 1e7 / window->seconds);
	if (window->corral_run_ns >= 0)
		printf(" %9.3f%%", (double)window->corral_run_ns / 1e7 / window->seconds);
	else
		printf(" %10s", "-");
	if (window->client_ns >= 0)
		printf(" %9.2f%%", (double)window->client_ns / 1e7 / window->seconds);
	else
		printf(" %10s", "-");
	if (window->terminal_bytes)
		printf(" %12.0f", (double)window->terminal_bytes / window->seconds);
	else
		printf(" %12s", "-");
	putchar('\n');
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct bench_options options = {.corral = "build/corral", .tasks = 0};
	bench_init("bench_top", cleanup);
	int exit_code = parse_options(argc, argv, true, usage, &options);
	if (exit_code >= 0)
		return exit_code;
	unsigned tasks = options.tasks ? options.tasks : options.quick ? 100 : 1000;
	unsigned seconds = options.quick ? 5 : 30;
	catch_fatal_signals();
	make_temp_dir("/tmp/bench_top.XXXXXX");
	use_own_control_socket();
	print_machine_line(options.quick, options.corral, NULL);

	start_corral(options.corral, tasks);
	char *reply = NULL;
	run_status(options.corral, &reply);
	printf("corral supervising %u tasks (sleep 1000), %u s windows, socket %s\n"
	       "a status reply of every task: %zu bytes\n\n",
	       tasks, seconds, socket_path(), reply ? strlen(reply) : 0);
	free(reply);
	sleep_ms(2000); /* the start's readings settle */
	printf("  %-40s %10s %10s %10s %10s %12s\n", "", "corral CPU", "of a CPU", "schedstat",
	       "client", "terminal B/s");
	struct window idle = measure_plain(options.corral, seconds, false);
	print_row("nobody watching", &idle);
	struct window top = measure_top(options.corral, seconds, 0);
	print_row("corral top (1 s refresh)", &top);
	struct window scrolling = measure_top(options.corral, seconds, 10);
	print_row("corral top, j pressed 10 times a second", &scrolling);
	struct window loop = measure_plain(options.corral, seconds, true);
	print_row("corral status --json once a second", &loop);
	printf("\ncorral's CPU from /proc/PID/stat (utime + stime, %ld ticks a second), and\n"
	       "to the ns from /proc/PID/schedstat; the client's: top's own from its\n"
	       "/proc/PID/schedstat, the status loop's from getrusage of its children; terminal\n"
	       "B/s: what top wrote to its 80x24 terminal\n",
	       sysconf(_SC_CLK_TCK));
	fflush(stdout);
	cleanup();
	return 0;
}
