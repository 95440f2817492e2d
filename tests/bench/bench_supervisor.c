/* bench_supervisor: what corral costs next to doing the same work by hand,
 * measured side by side in one run.
 *
 *   1. start and reap N trivial tasks (/bin/true): `corral run` against a
 *      plain fork/exec loop in this program (parallel, and one at a time);
 *   2. restart latency, from a task's exit to its restarted program running
 *      main(): corral (policy always, delay 0) against a plain
 *      fork/exec/waitpid loop, both running this program's --stamp mode;
 *   3. an idle corral supervising sleeping tasks: context switches over a
 *      quiet period (an idle supervisor makes no wakeups), memory, fds.
 *
 * usage: bench_supervisor [--corral PATH] [--quick]
 *
 * Prints figures, asserts nothing about timing. Everything it creates lives
 * in a temporary directory under /tmp that is removed at exit; a corral it
 * started is stopped on error, on SIGINT/SIGTERM, and (PR_SET_PDEATHSIG) if
 * this program dies. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
};

/* ---- cleanup: temp files and the corral we started ---------------------- */

#define MAX_TEMP_FILES 16

static char temp_dir[64];
static char temp_files[MAX_TEMP_FILES][128];
static volatile sig_atomic_t temp_file_count;
static volatile pid_t running_corral; /* 0: none */
static char self_exe[PATH_MAX];

static void sleep_ms(unsigned ms)
{
	struct timespec pause = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
		;
}

/* Async-signal-safe: SIGTERM, a few seconds' grace, then SIGKILL. corral
 * stops its tasks on SIGTERM, so nothing is left behind. */
static void stop_running_corral(void)
{
	pid_t pid = running_corral;
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	for (int i = 0; i < 500; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			running_corral = 0;
			return;
		}
		sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	running_corral = 0;
}

/* Async-signal-safe as well. */
static void remove_temp_files(void)
{
	for (int i = 0; i < temp_file_count; i++)
		unlink(temp_files[i]);
	temp_file_count = 0;
	if (temp_dir[0])
		rmdir(temp_dir);
	temp_dir[0] = '\0';
}

static void cleanup(void)
{
	stop_running_corral();
	remove_temp_files();
}

static void on_fatal_signal(int signal_number)
{
	cleanup();
	_exit(128 + signal_number);
}

static void die(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *format, ...)
{
	va_list args;
	fflush(stdout);
	fprintf(stderr, "bench_supervisor: ");
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fprintf(stderr, "\n");
	cleanup();
	exit(1);
}

/* A path in the temp dir, registered for removal. */
static const char *temp_path(const char *name)
{
	if (temp_file_count >= MAX_TEMP_FILES)
		die("too many temporary files");
	char *path = temp_files[temp_file_count];
	snprintf(path, sizeof(temp_files[0]), "%s/%.40s", temp_dir, name);
	temp_file_count++;
	return path;
}

/* ---- clocks, statistics ------------------------------------------------- */

static int64_t now_ns(clockid_t clock)
{
	struct timespec now;
	clock_gettime(clock, &now);
	return (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct stats {
	size_t count;
	double median, p90, min, max;
};

/* Sorts `values` in place. */
static struct stats compute_stats(double *values, size_t count)
{
	struct stats stats = {.count = count};
	if (count == 0)
		return stats;
	qsort(values, count, sizeof(*values), compare_doubles);
	stats.min = values[0];
	stats.max = values[count - 1];
	stats.median =
	    count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
	size_t p90_index = (count * 9 + 9) / 10; /* ceil(0.9 n), 1-based */
	stats.p90 = values[p90_index - 1];
	return stats;
}

/* ---- files -------------------------------------------------------------- */

static void write_file(const char *path, const char *content, size_t length)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	while (length > 0) {
		ssize_t written = write(fd, content, length);
		if (written < 0) {
			if (errno == EINTR)
				continue;
			die("write %s: %s", path, strerror(errno));
		}
		content += written;
		length -= (size_t)written;
	}
	close(fd);
}

/* The whole file, NUL-terminated; NULL when it does not exist. */
static char *read_file(const char *path, size_t *length_out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t capacity = 4096, length = 0;
	char *buffer = malloc(capacity);
	if (!buffer)
		die("out of memory");
	for (;;) {
		if (length + 1 >= capacity) {
			capacity *= 2;
			buffer = realloc(buffer, capacity);
			if (!buffer)
				die("out of memory");
		}
		ssize_t got = read(fd, buffer + length, capacity - length - 1);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			die("read %s: %s", path, strerror(errno));
		}
		if (got == 0)
			break;
		length += (size_t)got;
	}
	close(fd);
	buffer[length] = '\0';
	if (length_out)
		*length_out = length;
	return buffer;
}

/* A growing text buffer for generated configs. */
struct text {
	char *data;
	size_t length, capacity;
};

static void text_append(struct text *text, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static void text_append(struct text *text, const char *format, ...)
{
	for (;;) {
		va_list args;
		va_start(args, format);
		size_t room = text->capacity - text->length;
		int needed =
		    vsnprintf(text->data ? text->data + text->length : NULL, room, format, args);
		va_end(args);
		if (needed < 0)
			die("vsnprintf failed");
		if ((size_t)needed < room) {
			text->length += (size_t)needed;
			return;
		}
		text->capacity = text->capacity ? text->capacity * 2 : 4096;
		while (text->capacity - text->length <= (size_t)needed)
			text->capacity *= 2;
		text->data = realloc(text->data, text->capacity);
		if (!text->data)
			die("out of memory");
	}
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

/* The value of `key` (e.g. "VmRSS:") in a /proc status file, or -1. */
static long long status_field(const char *status, const char *key)
{
	const char *at = strstr(status, key);
	if (!at)
		return -1;
	return strtoll(at + strlen(key), NULL, 10);
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
		sample.context_switches += status_field(status, "\nvoluntary_ctxt_switches:") +
					   status_field(status, "\nnonvoluntary_ctxt_switches:");
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
	sample.rss_kib = status_field(status, "\nVmRSS:");
	sample.hwm_kib = status_field(status, "\nVmHWM:");
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
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(127);
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
	result.wall_ns = now_ns(CLOCK_MONOTONIC) - start_ns;
	result.cpu_ns = process_cpu_ns(pid); /* still a zombie */
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	running_corral = 0;
	result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return result;
}

/* Runs `corral run [--events EVENTS] CONFIG` to its end. */
static struct corral_result run_corral(const struct settings *settings, const char *config,
				       const char *events)
{
	const char *with_events[] = {"run", "--events", events, config, NULL};
	const char *without[] = {"run", config, NULL};
	int64_t start = now_ns(CLOCK_MONOTONIC);
	pid_t pid = spawn_corral(settings, events ? with_events : without, NULL);
	return wait_corral(pid, start);
}

/* corral failed where it should not have: rerun it with stderr kept, show
 * the end of what it said, and stop. */
static void explain_corral_failure(const struct settings *settings, const char *config,
				   int exit_code)
{
	const char *log = temp_path("corral-stderr.log");
	const char *args[] = {"run", config, NULL};
	pid_t pid = spawn_corral(settings, args, log);
	wait_corral(pid, now_ns(CLOCK_MONOTONIC));
	size_t length = 0;
	char *text = read_file(log, &length);
	fprintf(stderr, "bench_supervisor: corral run exited with code %d; its last words:\n",
		exit_code);
	if (text) {
		size_t from = length > 2000 ? length - 2000 : 0;
		fprintf(stderr, "%s\n", text + from);
		free(text);
	}
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
	int64_t end_ns = now_ns(CLOCK_MONOTONIC);
	int length =
	    snprintf(line, sizeof(line), "%lld %lld\n", (long long)start_ns, (long long)end_ns);
	ssize_t written = write(fd, line, (size_t)length);
	close(fd);
	_exit(written == length ? 0 : 1);
}

/* Gaps end[i] -> start[i+1] in µs, from a stamp file. Returns the count. */
static size_t stamp_gaps(const char *path, double **gaps_out, size_t *stamps_out)
{
	char *content = read_file(path, NULL);
	if (!content)
		die("no stamps in %s", path);
	size_t lines = 0;
	for (const char *c = content; *c; c++)
		lines += *c == '\n';
	double *gaps = calloc(lines ? lines : 1, sizeof(*gaps));
	if (!gaps)
		die("out of memory");
	size_t count = 0, stamps = 0;
	long long previous_end = -1;
	char *cursor = content;
	for (;;) {
		long long start, end;
		int used = 0;
		if (sscanf(cursor, "%lld %lld\n%n", &start, &end, &used) != 2 || used == 0)
			break;
		cursor += used;
		if (previous_end >= 0)
			gaps[count++] = (double)(start - previous_end) / 1e3;
		previous_end = end;
		stamps++;
	}
	free(content);
	*gaps_out = gaps;
	*stamps_out = stamps;
	return count;
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
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid %d: %s", (int)pid, strerror(errno));
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
	int64_t cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	int64_t start = now_ns(CLOCK_MONOTONIC);
	for (unsigned i = 0; i < count; i++)
		pids[i] = fork_exec(true_path, argv);
	for (unsigned i = 0; i < count; i++)
		reap(pids[i]);
	return (struct measure){now_ns(CLOCK_MONOTONIC) - start,
				now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu};
}

static struct measure plain_sequential(unsigned count)
{
	char *argv[] = {(char *)true_path, NULL};
	int64_t cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	int64_t start = now_ns(CLOCK_MONOTONIC);
	for (unsigned i = 0; i < count; i++)
		reap(fork_exec(true_path, argv));
	return (struct measure){now_ns(CLOCK_MONOTONIC) - start,
				now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu};
}

static void write_true_config(const char *path, unsigned count)
{
	struct text text = {0};
	text_append(&text, "groups:\n  bench:\n    tasks:\n");
	for (unsigned i = 1; i <= count; i++)
		text_append(&text, "      t%04u: {command: [\"%s\"], restart: {policy: never}}\n",
			    i, true_path);
	write_file(path, text.data, text.length);
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

static void print_start_row(const char *label, double *wall_ms, double *cpu_ms, size_t repeats,
			    unsigned tasks)
{
	struct stats wall = compute_stats(wall_ms, repeats);
	struct stats cpu = compute_stats(cpu_ms, repeats);
	printf("  %-44s %9.2f %9.2f", label, wall.median, wall.min);
	if (tasks > 0)
		printf(" %9.1f", wall.median * 1e3 / tasks);
	else
		printf(" %9s", "");
	if (cpu.median >= 0 && tasks > 0)
		printf(" %11.1f", cpu.median * 1e3 / tasks);
	else if (cpu.median >= 0)
		printf(" %8.2f ms", cpu.median);
	printf("\n");
}

static void bench_start(const struct settings *settings)
{
	unsigned count = settings->start_tasks;
	const char *config = temp_path("start.yaml");
	const char *config_quarter = temp_path("start-quarter.yaml");
	const char *config_one = temp_path("start-one.yaml");
	unsigned quarter = count / 4 ? count / 4 : 1;
	write_true_config(config, count);
	write_true_config(config_quarter, quarter);
	write_true_config(config_one, 1);

	double wall[VARIANT_COUNT][16], cpu[VARIANT_COUNT][16];
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
		wall[VARIANT_CORRAL][round] = (double)result.wall_ns / 1e6;
		cpu[VARIANT_CORRAL][round] = (double)result.cpu_ns / 1e6;

		result = run_corral(settings, config_quarter, NULL);
		if (result.exit_code != 0)
			explain_corral_failure(settings, config_quarter, result.exit_code);
		wall[VARIANT_CORRAL_QUARTER][round] = (double)result.wall_ns / 1e6;
		cpu[VARIANT_CORRAL_QUARTER][round] = (double)result.cpu_ns / 1e6;

		result = run_corral(settings, config_one, NULL);
		if (result.exit_code != 0)
			explain_corral_failure(settings, config_one, result.exit_code);
		wall[VARIANT_CORRAL_ONE][round] = (double)result.wall_ns / 1e6;
		cpu[VARIANT_CORRAL_ONE][round] = (double)result.cpu_ns / 1e6;

		const char *check_args[] = {"check", config, NULL};
		int64_t start = now_ns(CLOCK_MONOTONIC);
		result = wait_corral(spawn_corral(settings, check_args, NULL), start);
		if (result.exit_code != 0)
			die("corral check %s exited with code %d", config, result.exit_code);
		wall[VARIANT_CORRAL_CHECK][round] = (double)result.wall_ns / 1e6;
		cpu[VARIANT_CORRAL_CHECK][round] = (double)result.cpu_ns / 1e6;

		struct measure measure = plain_parallel(count, pids);
		wall[VARIANT_PLAIN_PARALLEL][round] = (double)measure.wall_ns / 1e6;
		cpu[VARIANT_PLAIN_PARALLEL][round] = (double)measure.cpu_ns / 1e6;

		measure = plain_sequential(count);
		wall[VARIANT_PLAIN_SEQUENTIAL][round] = (double)measure.wall_ns / 1e6;
		cpu[VARIANT_PLAIN_SEQUENTIAL][round] = (double)measure.cpu_ns / 1e6;
	}
	free(pids);

	printf("1. Start and reap N=%u tasks of %s (%u runs of each, interleaved)\n", count,
	       true_path, settings->repeats);
	printf("  %-44s %9s %9s %9s %11s\n", "", "median", "min", "per task", "CPU/task");
	printf("  %-44s %9s %9s %9s %11s\n", "", "ms", "ms", "us", "us");
	char label[96];
	snprintf(label, sizeof(label), "corral run, %u tasks in one group", count);
	print_start_row(label, wall[VARIANT_CORRAL], cpu[VARIANT_CORRAL], settings->repeats, count);
	print_start_row("plain fork/exec all, then waitpid all", wall[VARIANT_PLAIN_PARALLEL],
			cpu[VARIANT_PLAIN_PARALLEL], settings->repeats, count);
	print_start_row("plain fork/exec/waitpid, one at a time", wall[VARIANT_PLAIN_SEQUENTIAL],
			cpu[VARIANT_PLAIN_SEQUENTIAL], settings->repeats, count);
	snprintf(label, sizeof(label), "corral run, %u tasks (cost per task vs N)", quarter);
	print_start_row(label, wall[VARIANT_CORRAL_QUARTER], cpu[VARIANT_CORRAL_QUARTER],
			settings->repeats, quarter);
	printf("  fixed costs inside the corral rows (CPU column: total):\n");
	print_start_row("corral run, 1 task", wall[VARIANT_CORRAL_ONE], cpu[VARIANT_CORRAL_ONE],
			settings->repeats, 0);
	snprintf(label, sizeof(label), "corral check (load the %u-task config)", count);
	print_start_row(label, wall[VARIANT_CORRAL_CHECK], cpu[VARIANT_CORRAL_CHECK],
			settings->repeats, 0);
	printf("  wall: fork of corral (or of the first task) to the last reap. CPU: corral's\n"
	       "  own (schedstat of the zombie), or the bench's own for the plain loops;\n"
	       "  the tasks' CPU is not counted in either.\n\n");
}

/* ---- part 2: restart latency --------------------------------------------- */

/* From corral's event log: for each "exited" of task r, the time to the
 * next "started" (µs, CLOCK_REALTIME as written by corral). */
static size_t event_gaps(const char *path, double **gaps_out, size_t *restarting_out)
{
	char *content = read_file(path, NULL);
	if (!content)
		die("corral wrote no event log at %s", path);
	size_t lines = 1;
	for (const char *c = content; *c; c++)
		lines += *c == '\n';
	double *gaps = calloc(lines, sizeof(*gaps));
	if (!gaps)
		die("out of memory");
	size_t count = 0, restarting = 0;
	double exited_at = -1;
	for (char *line = content; line && *line;) {
		char *newline = strchr(line, '\n');
		if (newline)
			*newline = '\0';
		const char *time_field = strstr(line, "\"time\":");
		double time = time_field ? strtod(time_field + 7, NULL) : -1;
		if (strstr(line, "\"task\":\"r\"") && time >= 0) {
			if (strstr(line, "\"event\":\"exited\"")) {
				exited_at = time;
			} else if (strstr(line, "\"event\":\"restarting\"")) {
				restarting++;
			} else if (strstr(line, "\"event\":\"started\"") && exited_at >= 0) {
				gaps[count++] = (time - exited_at) * 1e6;
				exited_at = -1;
			}
		}
		line = newline ? newline + 1 : NULL;
	}
	free(content);
	*gaps_out = gaps;
	*restarting_out = restarting;
	return count;
}

static void print_latency_row(const char *label, double *gaps, size_t count)
{
	struct stats stats = compute_stats(gaps, count);
	printf("  %-48s %7zu %8.1f %8.1f %8.1f %8.1f\n", label, stats.count, stats.median,
	       stats.p90, stats.min, stats.max);
}

/* Appends `count` values to a growing array. */
static void append_values(double **all, size_t *all_count, const double *values, size_t count)
{
	*all = realloc(*all, (*all_count + count + 1) * sizeof(**all));
	if (!*all)
		die("out of memory");
	memcpy(*all + *all_count, values, count * sizeof(*values));
	*all_count += count;
}

static void bench_restart(const struct settings *settings)
{
	unsigned rounds = settings->restart_rounds;
	unsigned per_round = settings->restarts / rounds;
	const char *config = temp_path("restart.yaml");
	const char *events = temp_path("restart-events.jsonl");
	const char *corral_stamps = temp_path("restart-corral.stamps");
	const char *plain_stamps = temp_path("restart-plain.stamps");

	struct text text = {0};
	text_append(&text,
		    "groups:\n  bench:\n    tasks:\n"
		    "      r:\n"
		    "        command: [\"%s\", \"--stamp\", \"%s\"]\n"
		    "        restart: {policy: always, delay: 0, attempts: %u, interval: 1h}\n",
		    self_exe, corral_stamps, per_round);
	write_file(config, text.data, text.length);
	free(text.data);

	double *corral_gaps = NULL, *plain_gaps = NULL, *event_gap_values = NULL;
	size_t corral_count = 0, plain_count = 0, event_count = 0;
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
		char *argv[] = {self_exe, "--stamp", (char *)plain_stamps, NULL};
		for (unsigned i = 0; i <= per_round; i++)
			reap(fork_exec(self_exe, argv));

		double *gaps;
		size_t runs, count, restarting_events;
		count = stamp_gaps(corral_stamps, &gaps, &runs);
		if (runs != per_round + 1)
			die("corral ran the stamp task %zu times, expected %u", runs,
			    per_round + 1);
		append_values(&corral_gaps, &corral_count, gaps, count);
		corral_runs += runs;
		free(gaps);
		count = stamp_gaps(plain_stamps, &gaps, &runs);
		append_values(&plain_gaps, &plain_count, gaps, count);
		free(gaps);
		count = event_gaps(events, &gaps, &restarting_events);
		append_values(&event_gap_values, &event_count, gaps, count);
		restarting += restarting_events;
		free(gaps);
	}

	printf("2. Restart latency: task exits -> restarted program runs main()\n"
	       "   (task: this binary in --stamp mode; corral: policy always, delay 0;\n"
	       "   %u rounds of %u restarts, corral and plain loop alternating)\n",
	       rounds, per_round);
	printf("  %-48s %7s %8s %8s %8s %8s\n", "", "samples", "median", "p90", "min", "max");
	printf("  %-48s %7s %8s %8s %8s %8s\n", "", "", "us", "us", "us", "us");
	print_latency_row("corral", corral_gaps, corral_count);
	print_latency_row("plain loop: fork/exec/waitpid", plain_gaps, plain_count);
	print_latency_row("corral's events: \"exited\" -> \"started\"", event_gap_values,
			  event_count);
	printf("  stamp rows: CLOCK_MONOTONIC just before the task's _exit to the first line\n"
	       "  of the next one's main() (includes exit teardown, exec and dynamic loading).\n"
	       "  events row: corral's own view, from handling the exit to the exec confirmed.\n"
	       "  corral: %zu task runs, %zu \"restarting\" events, %.1f us CPU per restart\n"
	       "  (corral's own CPU, its start-up included)\n\n",
	       corral_runs, restarting,
	       corral_count ? (double)corral_cpu_ns / 1e3 / (double)corral_count : 0.0);
	free(corral_gaps);
	free(plain_gaps);
	free(event_gap_values);
}

/* ---- part 3: an idle corral ----------------------------------------------- */

static size_t count_occurrences(const char *haystack, const char *needle)
{
	size_t count = 0;
	for (const char *at = haystack; (at = strstr(at, needle)); at += strlen(needle))
		count++;
	return count;
}

/* A corral supervising `tasks` sleeping tasks, every one of them started. */
struct idle_corral {
	pid_t pid;
	int64_t start_ns;       /* CLOCK_MONOTONIC at fork */
	int64_t all_started_ns; /* from fork to the last "started" event seen */
};

static struct idle_corral start_idle_corral(const struct settings *settings, unsigned tasks,
					    const char *name)
{
	char file[64];
	snprintf(file, sizeof(file), "%s.yaml", name);
	const char *config = temp_path(file);
	snprintf(file, sizeof(file), "%s-events.jsonl", name);
	const char *events = temp_path(file);
	snprintf(file, sizeof(file), "%s-stderr.log", name);
	const char *log = temp_path(file);

	struct text text = {0};
	text_append(&text, "groups:\n  bench:\n    tasks:\n");
	for (unsigned i = 1; i <= tasks; i++)
		text_append(
		    &text,
		    "      s%03u: {command: [\"sleep\", \"1000\"], restart: {policy: never}}\n", i);
	write_file(config, text.data, text.length);
	free(text.data);

	const char *args[] = {"run", "--events", events, config, NULL};
	struct idle_corral corral = {.start_ns = now_ns(CLOCK_MONOTONIC)};
	corral.pid = spawn_corral(settings, args, log);

	/* Poll the event log until every task has started. */
	for (;;) {
		char *content = read_file(events, NULL);
		size_t started = content ? count_occurrences(content, "\"event\":\"started\"") : 0;
		free(content);
		if (started >= tasks) {
			corral.all_started_ns = now_ns(CLOCK_MONOTONIC) - corral.start_ns;
			break;
		}
		if (waitpid(corral.pid, NULL, WNOHANG) == corral.pid) {
			running_corral = 0;
			char *said = read_file(log, NULL);
			fprintf(stderr, "%s", said ? said : "");
			free(said);
			die("corral exited before its %u tasks started (%zu did)", tasks, started);
		}
		if (now_ns(CLOCK_MONOTONIC) - corral.start_ns > 30LL * 1000000000LL)
			die("only %zu of %u tasks started within 30 s", started, tasks);
		sleep_ms(5);
	}
	/* Let it finish whatever follows the last start (lifecycle events). */
	sleep_ms(500);
	return corral;
}

/* SIGTERM, and the time corral takes to stop its tasks and exit. */
static struct corral_result stop_idle_corral(pid_t pid)
{
	int64_t start = now_ns(CLOCK_MONOTONIC);
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
	printf("  %-44s %10.1f ms (exit code %d); with 1 task %.1f ms\n",
	       "SIGTERM -> corral exited", (double)stopped.wall_ns / 1e6, stopped.exit_code,
	       (double)one_stopped.wall_ns / 1e6);
}

/* ---- main ------------------------------------------------------------------ */

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_supervisor [--corral PATH] [--quick]\n\n"
		     "  --corral PATH  the corral binary (default build-dev/corral)\n"
		     "  --quick        small sizes, a smoke test of the bench itself\n");
}

static void print_header(const struct settings *settings)
{
	struct utsname uts;
	uname(&uts);
	printf("bench_supervisor%s: corral %s, kernel %s %s, %ld CPUs online\n\n",
	       settings->quick ? " --quick" : "", settings->corral, uts.release, uts.machine,
	       sysconf(_SC_NPROCESSORS_ONLN));
}

int main(int argc, char **argv)
{
	int64_t start_ns = now_ns(CLOCK_MONOTONIC);
	if (argc == 3 && strcmp(argv[1], "--stamp") == 0)
		return stamp_main(start_ns, argv[2]);

	struct settings settings = {
	    .corral = "build-dev/corral",
	    .start_tasks = 1000,
	    .repeats = 5,
	    .restarts = 200,
	    .restart_rounds = 4,
	    .idle_tasks = 100,
	    .idle_seconds = 10,
	};
	static const struct option options[] = {
	    {"corral", required_argument, NULL, 'c'},
	    {"quick", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int option;
	while ((option = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (option) {
		case 'c':
			settings.corral = optarg;
			break;
		case 'q':
			settings.quick = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (settings.quick) {
		settings.start_tasks = 50;
		settings.repeats = 2;
		settings.restarts = 20;
		settings.restart_rounds = 2;
		settings.idle_tasks = 20;
		settings.idle_seconds = 1;
	}
	if (access(settings.corral, X_OK) != 0) {
		fprintf(stderr, "bench_supervisor: %s: %s (build corral first, or --corral PATH)\n",
			settings.corral, strerror(errno));
		return 1;
	}
	ssize_t length = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (length <= 0)
		die("readlink /proc/self/exe: %s", strerror(errno));
	self_exe[length] = '\0';

	snprintf(temp_dir, sizeof(temp_dir), "/tmp/corral-bench.XXXXXX");
	if (!mkdtemp(temp_dir)) {
		temp_dir[0] = '\0';
		die("mkdtemp: %s", strerror(errno));
	}
	struct sigaction action = {.sa_handler = on_fatal_signal};
	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
	sigaction(SIGHUP, &action, NULL);

	print_header(&settings);
	fflush(stdout);
	bench_start(&settings);
	fflush(stdout);
	bench_restart(&settings);
	fflush(stdout);
	bench_idle(&settings);
	cleanup();
	return 0;
}
