/* bench_supervisor: what corral costs next to doing the same work by hand,
 * measured side by side in one run.
 *
 *   1. start and reap N trivial tasks (/bin/true): `corral run` against a
 *      plain fork/exec loop in this program (parallel, and one at a time);
 *   2. restart latency, from a task's exit to its restarted program running
 *      main(): corral (policy always, delay 0) against a plain
 *      fork/exec/waitpid loop, both running this program's --stamp mode;
 *   3. an idle corral supervising sleeping tasks: context switches over a
 *      quiet period (an idle supervisor makes no wakeups), memory, fds,
 *      `corral status --json` of them all, and the shutdown (--idle-tasks
 *      10000 runs this part alone at that scale);
 *   4. memory and fds per task with 1000 idle tasks: PSS (smaps_rollup)
 *      and corral's fds by kind, against a corral with 1 task.
 *
 * usage: bench_supervisor [--corral PATH] [--quick] [--memory-only] [--idle-tasks N]
 *
 * Prints figures, asserts nothing about timing. Everything it creates lives
 * in a temporary directory under /tmp that is removed at exit; a corral it
 * started is stopped on error, on SIGINT/SIGTERM, and (PR_SET_PDEATHSIG) if
 * this program dies. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

/* ---- settings ---------------------------------------------------------- */

struct settings {
	const char *corral;
	bool quick;
	unsigned start_tasks;    /* part 1: N */
	unsigned repeats;        /* part 1: runs of each variant */
	unsigned restarts;       /* part 2: restarts measured */
	unsigned restart_rounds; /* part 2: corral runs they are split in */
	unsigned idle_tasks;     /* part 3 */
	unsigned idle_seconds;   /* part 3: the quiet period */
	unsigned memory_tasks;   /* part 4 */
	bool memory_only;        /* part 4 alone */
	bool idle_only;          /* part 3 alone (--idle-tasks N) */
};

/* ---- cleanup: the temp dir and the corral we started -------------------- */

static volatile pid_t running_corral; /* 0: none */
static char self_exe[PATH_MAX];

/* Async-signal-safe. corral stops its tasks on SIGTERM, so nothing is left
 * behind. */
static void cleanup(void)
{
	pid_t pid = running_corral;
	if (pid > 0) {
		stop_process(pid, 5000);
		running_corral = 0;
	}
	remove_temp_dir();
}

/* ---- /proc -------------------------------------------------------------- */

/* CPU time the process has run, in ns (its own, not its children's); works
 * on a zombie, so it is read after waitid(WNOWAIT) and before the reap.
 * -1 when unknown. */
static int64_t process_cpu_ns(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	char *content = read_file(path, NULL);
	if (content) {
		long long runtime = -1;
		if (sscanf(content, "%lld", &runtime) != 1)
			runtime = -1;
		free(content);
		if (runtime >= 0)
			return runtime;
	}
	/* Without schedstats: utime + stime, in clock ticks. */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	content = read_file(path, NULL);
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

struct process_sample {
	long long context_switches; /* voluntary + involuntary, every thread */
	unsigned threads;
	int64_t cpu_ns; /* every thread */
	long long rss_kib, hwm_kib;
	unsigned fds;
};

static struct process_sample sample_process(pid_t pid)
{
	struct process_sample sample = {.context_switches = 0, .cpu_ns = 0};
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *threads = opendir(path);
	if (!threads)
		die("opendir %s: %s (did corral die?)", path, strerror(errno));
	struct dirent *entry;
	while ((entry = readdir(threads))) {
		if (entry->d_name[0] == '.')
			continue;
		char file[128];
		snprintf(file, sizeof(file), "/proc/%d/task/%.32s/status", (int)pid, entry->d_name);
		char *status = read_file(file, NULL);
		if (!status)
			continue;
		sample.context_switches += text_field(status, "\nvoluntary_ctxt_switches:") +
					   text_field(status, "\nnonvoluntary_ctxt_switches:");
		free(status);
		snprintf(file, sizeof(file), "/proc/%d/task/%.32s/schedstat", (int)pid,
			 entry->d_name);
		char *schedstat = read_file(file, NULL);
		if (schedstat) {
			sample.cpu_ns += strtoll(schedstat, NULL, 10);
			free(schedstat);
		}
		sample.threads++;
	}
	closedir(threads);

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	char *status = read_file(path, NULL);
	if (!status)
		die("cannot read %s (did corral die?)", path);
	sample.rss_kib = text_field(status, "\nVmRSS:");
	sample.hwm_kib = text_field(status, "\nVmHWM:");
	free(status);

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *fds = opendir(path);
	if (fds) {
		while ((entry = readdir(fds)))
			if (entry->d_name[0] != '.')
				sample.fds++;
		closedir(fds);
	}
	return sample;
}

/* ---- running corral ----------------------------------------------------- */

/* Starts `corral <args...>` with stdin and stdout on /dev/null, stderr on
 * `stderr_path` (NULL: /dev/null). */
static pid_t spawn_corral(const struct settings *settings, const char *const *args,
			  const char *stderr_path)
{
	char *argv[8] = {(char *)settings->corral};
	for (size_t i = 0; args[i] && i + 2 < sizeof(argv) / sizeof(argv[0]); i++)
		argv[i + 1] = (char *)args[i];

	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		/* corral shuts down gracefully if the bench dies. */
		exit_with_parent(SIGTERM);
		int null_fd = open("/dev/null", O_RDWR);
		int err_fd =
		    stderr_path ? open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : null_fd;
		if (null_fd < 0 || err_fd < 0)
			_exit(127);
		dup2(null_fd, STDIN_FILENO);
		dup2(null_fd, STDOUT_FILENO);
		dup2(err_fd, STDERR_FILENO);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execv(argv[0], argv);
		_exit(127);
	}
	running_corral = pid;
	return pid;
}

struct corral_result {
	int exit_code;   /* 128+N for signal N */
	int64_t wall_ns; /* from fork to exit */
	int64_t cpu_ns;  /* corral's own CPU time, -1 unknown */
};

/* Waits for the corral started at `start_ns` (CLOCK_MONOTONIC). */
static struct corral_result wait_corral(pid_t pid, int64_t start_ns)
{
	struct corral_result result = {.cpu_ns = -1};
	siginfo_t info;
	for (;;) {
		memset(&info, 0, sizeof(info));
		if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) == 0)
			break;
		if (errno != EINTR)
			die("waitid: %s", strerror(errno));
	}
	result.wall_ns = now_ns() - start_ns;
	result.cpu_ns = process_cpu_ns(pid); /* still a zombie */
	result.exit_code = exit_code_of(reap_status(pid));
	running_corral = 0;
	return result;
}

/* Runs `corral run [--events EVENTS] CONFIG` to its end. */
static struct corral_result run_corral(const struct settings *settings, const char *config,
				       const char *events)
{
	const char *with_events[] = {"run", "--events", events, config, NULL};
	const char *without[] = {"run", config, NULL};
	int64_t start = now_ns();
	pid_t pid = spawn_corral(settings, events ? with_events : without, NULL);
	return wait_corral(pid, start);
}

/* corral failed where it should not have: rerun it with stderr kept, show
 * the end of what it said, and stop. */
static void explain_corral_failure(const struct settings *settings, const char *config,
				   int exit_code)
{
	char *log = temp_path("corral-stderr.log");
	const char *args[] = {"run", config, NULL};
	pid_t pid = spawn_corral(settings, args, log);
	wait_corral(pid, now_ns());
	char *text = read_file(log, NULL);
	free(log);
	fprintf(stderr, "bench_supervisor: corral run exited with code %d; its last words:\n",
		exit_code);
	if (text)
		fprintf(stderr, "%s\n", text_tail(text, 2000));
	free(text);
	die("corral failed");
}

/* ---- the stamp program (this binary, re-executed) ----------------------- */

/* `bench_supervisor --stamp FILE`: appends "START END\n" to FILE, both in ns
 * of CLOCK_MONOTONIC: START as main() begins, END just before _exit. */
static int stamp_main(int64_t start_ns, const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 1;
	char line[64];
	int64_t end_ns = now_ns();
	int length =
	    snprintf(line, sizeof(line), "%lld %lld\n", (long long)start_ns, (long long)end_ns);
	ssize_t written = write(fd, line, (size_t)length);
	close(fd);
	_exit(written == length ? 0 : 1);
}

/* Adds the gaps end[i] -> start[i+1] of a stamp file to `gaps`, in µs.
 * Returns the number of stamps (runs). */
static size_t stamp_gaps(const char *path, struct series *gaps)
{
	char *content = read_file(path, NULL);
	if (!content)
		die("no stamps in %s", path);
	size_t stamps = 0;
	long long previous_end = -1;
	char *cursor = content;
	for (;;) {
		long long start, end;
		int used = 0;
		if (sscanf(cursor, "%lld %lld\n%n", &start, &end, &used) != 2 || used == 0)
			break;
		cursor += used;
		if (previous_end >= 0)
			series_add(gaps, (double)(start - previous_end) / 1e3);
		previous_end = end;
		stamps++;
	}
	free(content);
	return stamps;
}

/* ---- part 1: start and reap N tasks -------------------------------------- */

static const char *const true_path = "/bin/true";

static pid_t fork_exec(const char *path, char *const argv[])
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		execv(path, argv);
		_exit(127);
	}
	return pid;
}

static void reap(pid_t pid)
{
	int status = reap_status(pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("child %d did not exit with 0 (status 0x%x)", (int)pid, status);
}

struct measure {
	int64_t wall_ns, cpu_ns;
};

/* All started, then all reaped: the shape of corral's parallel start. */
static struct measure plain_parallel(unsigned count, pid_t *pids)
{
	char *argv[] = {(char *)true_path, NULL};
	int64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	int64_t start = now_ns();
	for (unsigned i = 0; i < count; i++)
		pids[i] = fork_exec(true_path, argv);
	for (unsigned i = 0; i < count; i++)
		reap(pids[i]);
	return (struct measure){now_ns() - start, clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu};
}

static struct measure plain_sequential(unsigned count)
{
	char *argv[] = {(char *)true_path, NULL};
	int64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	int64_t start = now_ns();
	for (unsigned i = 0; i < count; i++)
		reap(fork_exec(true_path, argv));
	return (struct measure){now_ns() - start, clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu};
}

static void write_true_config(const char *path, unsigned count)
{
	struct text text = {0};
	text_append(&text, "groups:\n  bench:\n    tasks:\n");
	for (unsigned i = 1; i <= count; i++)
		text_append(&text, "      t%04u: {command: [\"%s\"], restart: {policy: never}}\n",
			    i, true_path);
	write_file(path, text.data, text.length, 0644);
	free(text.data);
}

enum start_variant {
	VARIANT_CORRAL,
	VARIANT_CORRAL_QUARTER,
	VARIANT_CORRAL_ONE,
	VARIANT_CORRAL_CHECK,
	VARIANT_PLAIN_PARALLEL,
	VARIANT_PLAIN_SEQUENTIAL,
	VARIANT_COUNT,
};

static void print_start_row(const char *label, struct series *wall_ms, struct series *cpu_ms,
			    unsigned tasks)
{
	series_sort(wall_ms);
	series_sort(cpu_ms);
	double wall = series_median(wall_ms), cpu = series_median(cpu_ms);
	printf("  %-44s %9.2f %9.2f", label, wall, series_min(wall_ms));
	if (tasks > 0)
		printf(" %9.1f", wall * 1e3 / tasks);
	else
		printf(" %9s", "");
	/* Negative: corral's CPU time was unknown. */
	if (cpu >= 0 && tasks > 0)
		printf(" %11.1f", cpu * 1e3 / tasks);
	else if (cpu >= 0)
		printf(" %8.2f ms", cpu);
	printf("\n");
}

static void bench_start(const struct settings *settings)
{
	unsigned count = settings->start_tasks;
	char *config = temp_path("start.yaml");
	char *config_quarter = temp_path("start-quarter.yaml");
	char *config_one = temp_path("start-one.yaml");
	unsigned quarter = count / 4 ? count / 4 : 1;
	write_true_config(config, count);
	write_true_config(config_quarter, quarter);
	write_true_config(config_one, 1);

	struct series wall[VARIANT_COUNT] = {{0}}, cpu[VARIANT_COUNT] = {{0}};
	pid_t *pids = calloc(count, sizeof(*pids));
	if (!pids)
		die("out of memory");

	/* One warm-up of each, untimed: page cache, dynamic loader. */
	struct corral_result warm = run_corral(settings, config, NULL);
	if (warm.exit_code != 0)
		explain_corral_failure(settings, config, warm.exit_code);
	plain_parallel(count, pids);

	/* Variants interleaved, so that drift hits them all alike. */
	for (unsigned round = 0; round < settings->repeats; round++) {
		struct corral_result result = run_corral(settings, config, NULL);
		if (result.exit_code != 0)
			explain_corral_failure(settings, config, result.exit_code);
		series_add(&wall[VARIANT_CORRAL], (double)result.wall_ns / 1e6);
		series_add(&cpu[VARIANT_CORRAL], (double)result.cpu_ns / 1e6);

		result = run_corral(settings, config_quarter, NULL);
		if (result.exit_code != 0)
			explain_corral_failure(settings, config_quarter, result.exit_code);
		series_add(&wall[VARIANT_CORRAL_QUARTER], (double)result.wall_ns / 1e6);
		series_add(&cpu[VARIANT_CORRAL_QUARTER], (double)result.cpu_ns / 1e6);

		result = run_corral(settings, config_one, NULL);
		if (result.exit_code != 0)
			explain_corral_failure(settings, config_one, result.exit_code);
		series_add(&wall[VARIANT_CORRAL_ONE], (double)result.wall_ns / 1e6);
		series_add(&cpu[VARIANT_CORRAL_ONE], (double)result.cpu_ns / 1e6);

		const char *check_args[] = {"check", config, NULL};
		int64_t start = now_ns();
		result = wait_corral(spawn_corral(settings, check_args, NULL), start);
		if (result.exit_code != 0)
			die("corral check %s exited with code %d", config, result.exit_code);
		series_add(&wall[VARIANT_CORRAL_CHECK], (double)result.wall_ns / 1e6);
		series_add(&cpu[VARIANT_CORRAL_CHECK], (double)result.cpu_ns / 1e6);

		struct measure measure = plain_parallel(count, pids);
		series_add(&wall[VARIANT_PLAIN_PARALLEL], (double)measure.wall_ns / 1e6);
		series_add(&cpu[VARIANT_PLAIN_PARALLEL], (double)measure.cpu_ns / 1e6);

		measure = plain_sequential(count);
		series_add(&wall[VARIANT_PLAIN_SEQUENTIAL], (double)measure.wall_ns / 1e6);
		series_add(&cpu[VARIANT_PLAIN_SEQUENTIAL], (double)measure.cpu_ns / 1e6);
	}
	free(pids);

	printf("1. Start and reap N=%u tasks of %s (%u runs of each, interleaved)\n", count,
	       true_path, settings->repeats);
	printf("  %-44s %9s %9s %9s %11s\n", "", "median", "min", "per task", "CPU/task");
	printf("  %-44s %9s %9s %9s %11s\n", "", "ms", "ms", "us", "us");
	char label[96];
	snprintf(label, sizeof(label), "corral run, %u tasks in one group", count);
	print_start_row(label, &wall[VARIANT_CORRAL], &cpu[VARIANT_CORRAL], count);
	print_start_row("plain fork/exec all, then waitpid all", &wall[VARIANT_PLAIN_PARALLEL],
			&cpu[VARIANT_PLAIN_PARALLEL], count);
	print_start_row("plain fork/exec/waitpid, one at a time", &wall[VARIANT_PLAIN_SEQUENTIAL],
			&cpu[VARIANT_PLAIN_SEQUENTIAL], count);
	snprintf(label, sizeof(label), "corral run, %u tasks (cost per task vs N)", quarter);
	print_start_row(label, &wall[VARIANT_CORRAL_QUARTER], &cpu[VARIANT_CORRAL_QUARTER],
			quarter);
	printf("  fixed costs inside the corral rows (CPU column: total):\n");
	print_start_row("corral run, 1 task", &wall[VARIANT_CORRAL_ONE], &cpu[VARIANT_CORRAL_ONE],
			0);
	snprintf(label, sizeof(label), "corral check (load the %u-task config)", count);
	print_start_row(label, &wall[VARIANT_CORRAL_CHECK], &cpu[VARIANT_CORRAL_CHECK], 0);
	printf("  wall: fork of corral (or of the first task) to the last reap. CPU: corral's\n"
	       "  own (schedstat of the zombie), or the bench's own for the plain loops;\n"
	       "  the tasks' CPU is not counted in either.\n\n");
	for (int variant = 0; variant < VARIANT_COUNT; variant++) {
		free(wall[variant].values);
		free(cpu[variant].values);
	}
	free(config);
	free(config_quarter);
	free(config_one);
}

/* ---- part 2: restart latency --------------------------------------------- */

/* From corral's event log: for each "exited" of task r, the time to the
 * next "started" into `gaps` (µs, CLOCK_REALTIME as written by corral).
 * Returns the number of "restarting" events. */
static size_t event_gaps(const char *path, struct series *gaps)
{
	char *content = read_file(path, NULL);
	if (!content)
		die("corral wrote no event log at %s", path);
	size_t restarting = 0;
	double exited_at = -1;
	char *cursor = content;
	for (char *line; (line = next_line(&cursor));) {
		double time = event_time(line);
		if (strstr(line, "\"task\":\"r\"") && time >= 0) {
			if (strstr(line, "\"event\":\"exited\"")) {
				exited_at = time;
			} else if (strstr(line, "\"event\":\"restarting\"")) {
				restarting++;
			} else if (strstr(line, "\"event\":\"started\"") && exited_at >= 0) {
				series_add(gaps, (time - exited_at) * 1e6);
				exited_at = -1;
			}
		}
	}
	free(content);
	return restarting;
}

static void print_latency_row(const char *label, struct series *gaps)
{
	series_sort(gaps);
	printf("  %-48s %7zu %8.1f %8.1f %8.1f %8.1f\n", label, gaps->count, series_median(gaps),
	       series_quantile(gaps, 0.9), series_min(gaps), series_max(gaps));
}

static void bench_restart(const struct settings *settings)
{
	unsigned rounds = settings->restart_rounds;
	unsigned per_round = settings->restarts / rounds;
	char *config = temp_path("restart.yaml");
	char *events = temp_path("restart-events.jsonl");
	char *corral_stamps = temp_path("restart-corral.stamps");
	char *plain_stamps = temp_path("restart-plain.stamps");

	struct text text = {0};
	text_append(&text,
		    "groups:\n  bench:\n    tasks:\n"
		    "      r:\n"
		    "        command: [\"%s\", \"--stamp\", \"%s\"]\n"
		    "        restart: {policy: always, delay: 0, attempts: %u, interval: 1h}\n",
		    self_exe, corral_stamps, per_round);
	write_file(config, text.data, text.length, 0644);
	free(text.data);

	struct series corral_gaps = {0}, plain_gaps = {0}, corral_event_gaps = {0};
	size_t corral_runs = 0, restarting = 0;
	int64_t corral_cpu_ns = 0;
	/* Rounds of corral and of the plain loop alternate, so that drift in the
	 * machine's speed hits both alike. */
	for (unsigned round = 0; round < rounds; round++) {
		unlink(corral_stamps);
		unlink(plain_stamps);

		/* policy always: once the attempts are spent the task fails for
		 * good and corral exits with 1; that ends the round. */
		struct corral_result result = run_corral(settings, config, events);
		if (result.exit_code != 1)
			explain_corral_failure(settings, config, result.exit_code);
		corral_cpu_ns += result.cpu_ns;

		/* The same program, restarted by hand as fast as a loop can. */
		char *argv[] = {self_exe, "--stamp", plain_stamps, NULL};
		for (unsigned i = 0; i <= per_round; i++)
			reap(fork_exec(self_exe, argv));

		size_t runs = stamp_gaps(corral_stamps, &corral_gaps);
		if (runs != per_round + 1)
			die("corral ran the stamp task %zu times, expected %u", runs,
			    per_round + 1);
		corral_runs += runs;
		stamp_gaps(plain_stamps, &plain_gaps);
		restarting += event_gaps(events, &corral_event_gaps);
	}

	printf("2. Restart latency: task exits -> restarted program runs main()\n"
	       "   (task: this binary in --stamp mode; corral: policy always, delay 0;\n"
	       "   %u rounds of %u restarts, corral and plain loop alternating)\n",
	       rounds, per_round);
	printf("  %-48s %7s %8s %8s %8s %8s\n", "", "samples", "median", "p90", "min", "max");
	printf("  %-48s %7s %8s %8s %8s %8s\n", "", "", "us", "us", "us", "us");
	print_latency_row("corral", &corral_gaps);
	print_latency_row("plain loop: fork/exec/waitpid", &plain_gaps);
	print_latency_row("corral's events: \"exited\" -> \"started\"", &corral_event_gaps);
	printf("  stamp rows: CLOCK_MONOTONIC just before the task's _exit to the first line\n"
	       "  of the next one's main() (includes exit teardown, exec and dynamic loading).\n"
	       "  events row: corral's own view, from handling the exit to the exec confirmed.\n"
	       "  corral: %zu task runs, %zu \"restarting\" events, %.1f us CPU per restart\n"
	       "  (corral's own CPU, its start-up included)\n\n",
	       corral_runs, restarting,
	       corral_gaps.count ? (double)corral_cpu_ns / 1e3 / (double)corral_gaps.count : 0.0);
	free(corral_gaps.values);
	free(plain_gaps.values);
	free(corral_event_gaps.values);
	free(config);
	free(events);
	free(corral_stamps);
	free(plain_stamps);
}

/* ---- part 3: an idle corral ----------------------------------------------- */

/* A corral supervising `tasks` sleeping tasks, every one of them started. */
struct idle_corral {
	pid_t pid;
	int64_t start_ns;       /* CLOCK_MONOTONIC at fork */
	int64_t all_started_ns; /* from fork to the last "started" event seen */
};

static struct idle_corral start_idle_corral(const struct settings *settings, unsigned tasks,
					    const char *name)
{
	char *config = temp_path("%s.yaml", name);
	char *events = temp_path("%s-events.jsonl", name);
	char *log = temp_path("%s-stderr.log", name);

	write_sleep_config(config, tasks, NULL);

	const char *args[] = {"run", "--events", events, config, NULL};
	struct idle_corral corral = {.start_ns = now_ns()};
	corral.pid = spawn_corral(settings, args, log);

	/* Poll the event log until every task has started. */
	for (;;) {
		char *content = read_file(events, NULL);
		size_t started = content ? count_occurrences(content, "\"event\":\"started\"") : 0;
		free(content);
		if (started >= tasks) {
			corral.all_started_ns = now_ns() - corral.start_ns;
			break;
		}
		if (waitpid(corral.pid, NULL, WNOHANG) == corral.pid) {
			running_corral = 0;
			char *said = read_file(log, NULL);
			fprintf(stderr, "%s", said ? said : "");
			free(said);
			die("corral exited before its %u tasks started (%zu did)", tasks, started);
		}
		int64_t limit_s = 30 + tasks / 100; /* 10,000 tasks: 130 s */
		if (now_ns() - corral.start_ns > limit_s * 1000000000LL)
			die("only %zu of %u tasks started within %lld s", started, tasks,
			    (long long)limit_s);
		sleep_ms(tasks > 1000 ? 50 : 5); /* the event log is read whole each time */
	}
	/* Let it finish whatever follows the last start (lifecycle events). */
	sleep_ms(500);
	free(config);
	free(events);
	free(log);
	return corral;
}

/* The median of `calls` runs of `corral status --json` (stdout to
 * /dev/null), fork to exit, in ms; -1 when one failed. */
static double status_all_ms(const struct settings *settings, unsigned calls)
{
	struct series series = {0};
	for (unsigned i = 0; i < calls; i++) {
		int64_t start = now_ns();
		pid_t pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0) {
			int null_fd = open("/dev/null", O_WRONLY);
			if (null_fd < 0)
				_exit(127);
			dup2(null_fd, STDOUT_FILENO);
			execl(settings->corral, settings->corral, "status", "--json", (char *)NULL);
			_exit(127);
		}
		if (reap_status(pid) != 0)
			return -1;
		series_add(&series, (double)(now_ns() - start) / 1e6);
	}
	series_sort(&series);
	double median = series_median(&series);
	free(series.values);
	return median;
}

/* SIGTERM, and the time corral takes to stop its tasks and exit. */
static struct corral_result stop_idle_corral(pid_t pid)
{
	int64_t start = now_ns();
	kill(pid, SIGTERM);
	return wait_corral(pid, start);
}

static void bench_idle(const struct settings *settings)
{
	unsigned tasks = settings->idle_tasks;

	/* Baseline: the same corral with a single task. */
	struct idle_corral one = start_idle_corral(settings, 1, "idle-one");
	struct process_sample baseline = sample_process(one.pid);
	struct corral_result one_stopped = stop_idle_corral(one.pid);

	struct idle_corral corral = start_idle_corral(settings, tasks, "idle");
	struct process_sample before = sample_process(corral.pid);
	sleep_ms(settings->idle_seconds * 1000);
	struct process_sample after = sample_process(corral.pid);
	double status_ms = status_all_ms(settings, 5);
	struct corral_result stopped = stop_idle_corral(corral.pid);

	printf("3. Idle corral supervising %u tasks (sleep 1000, policy never)\n", tasks);
	printf("  %-44s %10.1f ms\n", "all tasks started (fork of corral -> event)",
	       (double)corral.all_started_ns / 1e6);
	printf("  %-44s %10lld    over %u s (expected 0)\n", "context switches while idle",
	       after.context_switches - before.context_switches, settings->idle_seconds);
	printf("  %-44s %10.1f us over %u s\n", "CPU used while idle",
	       (double)(after.cpu_ns - before.cpu_ns) / 1e3, settings->idle_seconds);
	printf("  %-44s %10.1f MiB; with 1 task %.1f MiB\n", "VmRSS", (double)after.rss_kib / 1024,
	       (double)baseline.rss_kib / 1024);
	if (tasks > 1)
		printf("  %-44s %10.1f KiB\n", "  RSS per extra task",
		       (double)(after.rss_kib - baseline.rss_kib) / (tasks - 1));
	printf("  %-44s %10.1f MiB\n", "VmHWM (peak RSS)", (double)after.hwm_kib / 1024);
	printf("  %-44s %10u     with 1 task %u; %u thread%s\n", "open fds", after.fds,
	       baseline.fds, after.threads, after.threads == 1 ? "" : "s");
	printf("  %-44s %10.1f ms (median of 5; -1: a call failed)\n",
	       "corral status --json of every task", status_ms);
	printf("  %-44s %10.1f ms (exit code %d); with 1 task %.1f ms\n",
	       "SIGTERM -> corral exited", (double)stopped.wall_ns / 1e6, stopped.exit_code,
	       (double)one_stopped.wall_ns / 1e6);
}

/* ---- part 4: memory and fds per idle task ---------------------------------- */

/* What corral's fds point at, by kind (readlink of /proc/PID/fd/N). */
enum fd_kind { FD_PIPE, FD_PIDFD, FD_CGROUP, FD_SOCKET, FD_OTHER_ANON, FD_OTHER, FD_KINDS };
static const char *const fd_kind_names[FD_KINDS] = {
    "pipes", "pidfds", "cgroup files and dirs", "sockets", "other anon inodes", "other files",
};

struct memory_sample {
	long long pss_kib, pss_anon_kib, rss_kib;
	unsigned fds[FD_KINDS];
	unsigned fd_total;
};

static enum fd_kind fd_kind_of(const char *target)
{
	if (strncmp(target, "pipe:", 5) == 0)
		return FD_PIPE;
	if (strcmp(target, "anon_inode:[pidfd]") == 0)
		return FD_PIDFD;
	if (strncmp(target, "/sys/fs/cgroup", 14) == 0)
		return FD_CGROUP;
	if (strncmp(target, "socket:", 7) == 0)
		return FD_SOCKET;
	if (strncmp(target, "anon_inode:", 11) == 0)
		return FD_OTHER_ANON;
	return FD_OTHER;
}

static struct memory_sample sample_memory(pid_t pid)
{
	struct memory_sample sample = {0};
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	char *rollup = read_file(path, NULL);
	if (!rollup)
		die("cannot read %s (did corral die?)", path);
	sample.pss_kib = text_field(rollup, "\nPss:");
	sample.pss_anon_kib = text_field(rollup, "\nPss_Anon:");
	sample.rss_kib = text_field(rollup, "\nRss:");
	free(rollup);

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *fds = opendir(path);
	if (!fds)
		die("opendir %s: %s", path, strerror(errno));
	struct dirent *entry;
	while ((entry = readdir(fds))) {
		if (entry->d_name[0] == '.')
			continue;
		char link[PATH_MAX + 64], target[PATH_MAX];
		snprintf(link, sizeof(link), "%s/%.32s", path, entry->d_name);
		ssize_t length = readlink(link, target, sizeof(target) - 1);
		if (length < 0)
			continue; /* closed meanwhile */
		target[length] = '\0';
		sample.fds[fd_kind_of(target)]++;
		sample.fd_total++;
	}
	closedir(fds);
	return sample;
}

/* The settle before sampling: start-up's garbage freed, as an operator
 * would find it a few seconds after `corral run`. */
#define MEMORY_SETTLE_MS 4000

static void bench_memory(const struct settings *settings)
{
	unsigned tasks = settings->memory_tasks;
	struct idle_corral one = start_idle_corral(settings, 1, "memory-one");
	sleep_ms(MEMORY_SETTLE_MS);
	struct memory_sample baseline = sample_memory(one.pid);
	stop_idle_corral(one.pid);

	struct idle_corral corral = start_idle_corral(settings, tasks, "memory");
	sleep_ms(MEMORY_SETTLE_MS);
	struct memory_sample many = sample_memory(corral.pid);
	stop_idle_corral(corral.pid);

	double extra = tasks > 1 ? tasks - 1 : 1;
	printf("4. Memory and fds with %u idle tasks (sleep 1000), %.0f s after the last start\n",
	       tasks, MEMORY_SETTLE_MS / 1e3);
	printf("  %-44s %10s %10s %10s\n", "", tasks == 1 ? "1 task" : "N tasks", "1 task",
	       "per task");
	printf("  %-44s %10.2f %10.2f %10.2f\n", "PSS (smaps_rollup), MiB; per task KiB",
	       (double)many.pss_kib / 1024, (double)baseline.pss_kib / 1024,
	       (double)(many.pss_kib - baseline.pss_kib) / extra);
	printf("  %-44s %10.2f %10.2f %10.2f\n", "  of which anonymous (heap): Pss_Anon",
	       (double)many.pss_anon_kib / 1024, (double)baseline.pss_anon_kib / 1024,
	       (double)(many.pss_anon_kib - baseline.pss_anon_kib) / extra);
	printf("  %-44s %10.2f %10.2f %10.2f\n", "RSS (smaps_rollup), MiB; per task KiB",
	       (double)many.rss_kib / 1024, (double)baseline.rss_kib / 1024,
	       (double)(many.rss_kib - baseline.rss_kib) / extra);
	printf("  %-44s %10u %10u %10.2f\n", "open fds", many.fd_total, baseline.fd_total,
	       (double)((int)many.fd_total - (int)baseline.fd_total) / extra);
	for (int kind = 0; kind < FD_KINDS; kind++)
		printf("  %-44s %10u %10u %10.2f\n", fd_kind_names[kind], many.fds[kind],
		       baseline.fds[kind],
		       (double)((int)many.fds[kind] - (int)baseline.fds[kind]) / extra);
	printf("  per task: (N tasks - 1 task) / (N - 1). PSS shares the libraries' pages with\n"
	       "  every process mapping them, so the 1-task figure moves with what else runs;\n"
	       "  Pss_Anon is corral's own memory.\n");
}

/* ---- main ------------------------------------------------------------------ */

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_supervisor [--corral PATH] [--quick] [--memory-only]\n\n"
		     "  --corral PATH  the corral binary (default build-dev/corral)\n"
		     "  --quick        small sizes, a smoke test of the bench itself\n"
		     "  --memory-only  part 4 alone (memory and fds per idle task)\n"
		     "  --idle-tasks N part 3 alone, with N idle tasks (up to 100000)\n");
}

int main(int argc, char **argv)
{
	int64_t start_ns = now_ns();
	if (argc == 3 && strcmp(argv[1], "--stamp") == 0)
		return stamp_main(start_ns, argv[2]);
	bench_init("bench_supervisor", cleanup);

	struct settings settings = {
	    .corral = "build-dev/corral",
	    .start_tasks = 1000,
	    .repeats = 5,
	    .restarts = 200,
	    .restart_rounds = 4,
	    .idle_tasks = 100,
	    .idle_seconds = 10,
	    .memory_tasks = 1000,
	};
	/* Ours alone: taken out before the options every bench shares. */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--memory-only") == 0) {
			settings.memory_only = true;
			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof(argv[0]));
			argc--;
			break;
		}
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--idle-tasks") == 0) {
			char *end;
			unsigned long count = strtoul(argv[i + 1], &end, 10);
			if (*end || count < 1 || count > 100000) {
				fprintf(stderr,
					"bench_supervisor: --idle-tasks takes 1 to 100000\n");
				return 2;
			}
			settings.idle_tasks = (unsigned)count;
			settings.idle_only = true;
			memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 1) * sizeof(argv[0]));
			argc -= 2;
			break;
		}
	struct bench_options options = {.corral = settings.corral};
	int exit_code = parse_options(argc, argv, false, usage, &options);
	if (exit_code >= 0)
		return exit_code;
	settings.corral = options.corral;
	settings.quick = options.quick;
	if (settings.quick) {
		settings.start_tasks = 50;
		settings.repeats = 2;
		settings.restarts = 20;
		settings.restart_rounds = 2;
		settings.idle_tasks = settings.idle_only ? settings.idle_tasks : 20;
		settings.idle_seconds = 1;
		settings.memory_tasks = 50;
	}
	ssize_t length = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (length <= 0)
		die("readlink /proc/self/exe: %s", strerror(errno));
	self_exe[length] = '\0';

	make_temp_dir("/tmp/corral-bench.XXXXXX");
	catch_fatal_signals();
	use_own_control_socket();

	print_machine_line(settings.quick, settings.corral, NULL);
	printf("\n");
	fflush(stdout);
	if (settings.idle_only) {
		bench_idle(&settings);
		cleanup();
		return 0;
	}
	if (!settings.memory_only) {
		bench_start(&settings);
		fflush(stdout);
		bench_restart(&settings);
		fflush(stdout);
		bench_idle(&settings);
		printf("\n");
		fflush(stdout);
	}
	bench_memory(&settings);
	cleanup();
	return 0;
}
