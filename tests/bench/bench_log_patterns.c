/* bench_log_patterns: what a readiness.log pattern costs corral's one loop
 * while its task floods 4000-byte lines as fast as it can write them.
 *
 * For each pattern (a plain phrase, the (.*a){20}b at the limit, (.*a){16}b, and the
 * costliest corral takes that we found: (.*){16}b, 16 skippable
 * repetitions, each reaching every one after it), one corral runs the
 * flooding task (python3 writing 16 lines a write, none matching) and a
 * quiet one. Meanwhile, on one connection, a status request for the quiet
 * task every 2 ms: its round trip waits for whatever turn the loop is in,
 * so its worst is the longest loop turn seen from outside (corral has no
 * gauge inside); and every 10th sample, `corral status` (the CLI, a
 * process and a connection of its own): what a person sees. Lines read
 * per second are what corral printed of the flood (the task waits for
 * its pipe otherwise).
 *
 * Usage: bench_log_patterns [--corral PATH] [--quick] */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static pid_t corral_pid;

static void cleanup(void)
{
	if (corral_pid > 0)
		kill(corral_pid, SIGKILL);
	remove_temp_dir();
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_log_patterns [--corral PATH] [--quick]\n\n"
		     "`corral status` latency while a task floods 4000-byte lines against\n"
		     "a readiness.log pattern, for patterns from cheap to the costliest\n"
		     "corral takes.\n");
}

static const char flood[] = "import os\\n"
			    "line = b'a' * 4000 + b'\\\\n'\\n"
			    "while True:\\n"
			    "    os.write(1, line * 16)\\n";

static void write_config(const char *path, const char *pattern)
{
	struct text text = {0};
	text_append(&text,
		    "log_format: plain\ngroups:\n  bench:\n    tasks:\n"
		    "      flood:\n        command: [/usr/bin/python3, -c, \"%s\"]\n"
		    "        readiness: {log: '%s', timeout: 1h}\n"
		    "      quiet: {command: [sleep, \"100000\"]}\n",
		    flood, pattern);
	write_file(path, text.data, text.length, 0644);
	free(text.data);
}

/* `path`'s size in bytes, or 0. */
static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : 0;
}

/* One `corral status` to its end: its wall time in ms, or -1. */
static double status_ms(const char *corral)
{
	int64_t start = now_ns();
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		FILE *null = freopen("/dev/null", "w", stdout);
		null = null ? freopen("/dev/null", "w", stderr) : NULL;
		(void)null;
		execl(corral, corral, "status", (char *)NULL);
		_exit(127);
	}
	int code = exit_code_of(reap_status(pid));
	return code == 0 || code == 1 ? (double)(now_ns() - start) / 1e6 : -1;
}

/* One connection to the control socket, or -1. */
static int control_connect(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", getenv("CORRAL_SOCKET"));
	if (fd >= 0 && connect(fd, (struct sockaddr *)&address, sizeof(address)) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* One status request and its reply line on `fd`: the round trip in ms,
 * or -1. */
static double round_trip_ms(int fd)
{
	static const char request[] =
	    "{\"version\":1,\"command\":\"status\",\"target\":\"bench/quiet\"}\n";
	int64_t start = now_ns();
	if (send(fd, request, sizeof(request) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(request) - 1)
		return -1;
	char reply[65536];
	for (;;) {
		ssize_t got = recv(fd, reply, sizeof(reply), 0);
		if (got <= 0)
			return -1;
		if (reply[got - 1] == '\n')
			return (double)(now_ns() - start) / 1e6;
	}
}

struct figures {
	double median_ms, worst_ms, turn_median_ms, turn_worst_ms, lines_per_s;
	unsigned samples, turn_samples, failures;
};

static struct figures measure(const char *corral, const char *pattern, unsigned window_s)
{
	char *config = temp_path("bench.yaml"), *out = temp_path("corral.out");
	write_config(config, pattern);
	corral_pid = fork();
	if (corral_pid < 0)
		die("fork: %s", strerror(errno));
	if (corral_pid == 0) {
		exit_with_parent(SIGKILL);
		FILE *null = freopen(out, "w", stdout);
		null = null ? freopen("/dev/null", "w", stderr) : NULL;
		(void)null;
		execl(corral, corral, "run", config, (char *)NULL);
		_exit(127);
	}
	/* Until its socket answers, then a second for the flood to be under way. */
	int fd = -1;
	for (int i = 0; i < 3000 && (fd = control_connect()) < 0; i++)
		sleep_ms(10);
	if (fd < 0)
		die("cannot connect to %s", getenv("CORRAL_SOCKET"));
	sleep_ms(1000);
	struct series series = {0}, turns = {0};
	struct figures figures = {0};
	/* Sizes, never the file's text: the flood keeps it growing by
	 * 100 MB/s or more, and a read to its end chased it (24 GB, the OOM
	 * killer, in a CI run). */
	off_t bytes_before = file_size(out);
	int64_t start = now_ns(), end = start + (int64_t)window_s * 1000000000;
	for (unsigned sample = 0; now_ns() < end; sample++) {
		double ms = round_trip_ms(fd);
		if (ms < 0)
			die("the control connection failed");
		series_add(&turns, ms);
		if (sample % 10 == 0) {
			ms = status_ms(corral);
			if (ms < 0)
				figures.failures++;
			else
				series_add(&series, ms);
		}
		sleep_ms(2);
	}
	close(fd);
	off_t bytes_after = file_size(out);
	double seconds = (double)(now_ns() - start) / 1e9;
	stop_process(corral_pid, 30000);
	corral_pid = 0;
	series_sort(&series);
	series_sort(&turns);
	figures.turn_samples = (unsigned)turns.count;
	figures.turn_median_ms = series_median(&turns);
	figures.turn_worst_ms = series_max(&turns);
	free(turns.values);
	figures.samples = (unsigned)series.count;
	figures.median_ms = series.count ? series_median(&series) : -1;
	figures.worst_ms = series.count ? series_max(&series) : -1;
	/* corral's stdout lines are "bench/flood | " + 4000 bytes + '\n'. */
	figures.lines_per_s = (double)(bytes_after - bytes_before) / 4015.0 / seconds;
	free(series.values);
	free(config);
	free(out);
	return figures;
}

int main(int argc, char **argv)
{
	bench_init("bench_log_patterns", cleanup);
	struct bench_options options = {.corral = "build/corral"};
	int exit_code = parse_options(argc, argv, false, usage, &options);
	if (exit_code >= 0)
		return exit_code;
	catch_fatal_signals();
	make_temp_dir("/tmp/bench_log_patterns.XXXXXX");
	use_own_control_socket();
	print_machine_line(options.quick, options.corral, NULL);
	unsigned window_s = options.quick ? 2 : 10;
	printf("a task floods 4000-byte lines (none matching) for %us; a status round trip on "
	       "one connection every 2 ms (its worst: the longest loop turn seen from outside), "
	       "`corral status` every 10th\n",
	       window_s);
	printf("%-28s %9s %11s %10s %9s %11s %10s %13s\n", "readiness.log pattern", "samples",
	       "trip median", "trip worst", "CLI runs", "CLI median", "CLI worst", "lines read/s");
	fflush(stdout); /* before the forks, which would print it again */
	const char *patterns[] = {"ready to accept connections", "(.*a){16}b", "(.*){16}b"};
	for (size_t i = 0; i < sizeof(patterns) / sizeof(*patterns); i++) {
		struct figures f = measure(options.corral, patterns[i], window_s);
		printf("%-28s %9u %11.2f %10.2f %9u %11.1f %10.1f %13.0f%s\n", patterns[i],
		       f.turn_samples, f.turn_median_ms, f.turn_worst_ms, f.samples, f.median_ms,
		       f.worst_ms, f.lines_per_s, f.failures ? " (some statuses failed)" : "");
		fflush(stdout);
	}
	cleanup();
	return 0;
}
