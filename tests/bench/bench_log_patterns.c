/* bench_log_patterns: what a readiness.log pattern costs corral's one loop
 * while its task floods 4000-byte lines as fast as it can write them.
 *
 * For each pattern (a plain phrase, the (.*a){20}b at the limit, (.*a){16}b, and the
 * costliest corral takes that we found: (.*){16}b, 16 skippable
 * repetitions, each reaching every one after it), one corral runs the
 * flooding task (python3 writing 16 lines a write, none matching) and a
 * quiet one. Meanwhile `corral status` is run back to back: its latency,
 * median and worst, is what another client sees; the worst is an upper
 * bound on the loop's longest turn seen from outside (a turn that holds
 * the loop holds the answer). Lines matched per second are the flood
 * corral read (its log: the task's own count is blocked by the pipe).
 *
 * Usage: bench_log_patterns [--corral PATH] [--quick] */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

struct figures {
	double median_ms, worst_ms, lines_per_s;
	unsigned samples, failures;
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
	/* Until it answers, then the flood is under way. */
	for (int i = 0; i < 500 && status_ms(corral) < 0; i++)
		sleep_ms(10);
	sleep_ms(1000);
	struct series series = {0};
	struct figures figures = {0};
	size_t lines_before = 0;
	free(read_file(out, &lines_before));
	int64_t start = now_ns(), end = start + (int64_t)window_s * 1000000000;
	while (now_ns() < end) {
		double ms = status_ms(corral);
		if (ms < 0)
			figures.failures++;
		else
			series_add(&series, ms);
		sleep_ms(5);
	}
	size_t lines_after = 0;
	free(read_file(out, &lines_after));
	double seconds = (double)(now_ns() - start) / 1e9;
	stop_process(corral_pid, 30000);
	corral_pid = 0;
	series_sort(&series);
	figures.samples = (unsigned)series.count;
	figures.median_ms = series.count ? series_median(&series) : -1;
	figures.worst_ms = series.count ? series_max(&series) : -1;
	/* corral's stdout lines are "bench/flood | " + 4000 bytes + '\n'. */
	figures.lines_per_s = (double)(lines_after - lines_before) / 4015.0 / seconds;
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
	printf("a task floods 4000-byte lines (none matching); `corral status` back to back "
	       "for %us\n",
	       window_s);
	printf("%-28s %10s %12s %12s %14s\n", "readiness.log pattern", "statuses", "median ms",
	       "worst ms", "lines read/s");
	fflush(stdout); /* before the forks, which would print it again */
	const char *patterns[] = {"ready to accept connections", "(.*a){16}b", "(.*){16}b"};
	for (size_t i = 0; i < sizeof(patterns) / sizeof(*patterns); i++) {
		struct figures f = measure(options.corral, patterns[i], window_s);
		printf("%-28s %10u %12.1f %12.1f %14.0f%s\n", patterns[i], f.samples, f.median_ms,
		       f.worst_ms, f.lines_per_s, f.failures ? " (some statuses failed)" : "");
		fflush(stdout);
	}
	cleanup();
	return 0;
}
