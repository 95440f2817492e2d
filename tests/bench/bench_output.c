/* bench_output: how fast a supervisor forwards a task's output, and what
 * CPU it spends on it, side by side in one run:
 *
 *   plain        the writer straight into the pipe this program reads (the
 *                floor: what `task | cat` gets);
 *   corral       `corral run`, the task's lines prefixed on corral's stdout;
 *   s6-log       the writer piped into `s6-log 1` (s6-overlay's logger,
 *                forwarding to its stdout);
 *   supervisord  a program with stdout_logfile=/dev/stdout.
 *
 * The writer is this program (--write LINE_BYTES TOTAL_BYTES): whole lines
 * as fast as write() takes them. Each supervisor's stdout is a pipe that
 * this program reads as fast as it can, counting lines, from the first
 * byte (start-up is not forwarding) until all of them came. Figures: MB/s of the writer's bytes,
 * the forwarder's own CPU per MB (its schedstat, not the writer's), and ratios against s6-log and
 * plain. s6-log and supervisord rows are skipped, with a note, when not installed
 * (scripts/install-deps.sh installs them).
 *
 * usage: bench_output [--corral PATH] [--quick]
 *
 * Prints figures, asserts nothing about timing; it does check that every
 * line arrived. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

enum forwarder { PLAIN, CORRAL, S6_LOG, SUPERVISORD, FORWARDER_COUNT };
static const char *const forwarder_names[FORWARDER_COUNT] = {"plain pipe", "corral", "s6-log",
							     "supervisord"};

struct workload {
	const char *label;
	size_t line_bytes; /* newline included */
	size_t total_bytes;
};

struct measure {
	bool done;
	double seconds;
	double forwarder_cpu_ms;
};

static char self_exe[PATH_MAX];
static volatile pid_t running_pids[3];

static void cleanup(void)
{
	for (size_t i = 0; i < sizeof(running_pids) / sizeof(running_pids[0]); i++)
		if (running_pids[i] > 0)
			kill(running_pids[i], SIGKILL);
	remove_temp_dir();
}

/* ---- the writer ------------------------------------------------------------ */

static int write_lines(size_t line_bytes, size_t total_bytes)
{
	/* A buffer of whole lines, written again and again, as `yes` does. */
	size_t per_buffer = line_bytes >= 65536 ? 1 : 65536 / line_bytes;
	size_t size = per_buffer * line_bytes;
	char *buffer = malloc(size);
	if (!buffer)
		return 1;
	for (size_t i = 0; i < size; i++)
		buffer[i] = (i + 1) % line_bytes == 0 ? '\n' : 'a' + (char)(i % 26);
	size_t lines = total_bytes / line_bytes;
	while (lines) {
		size_t now = lines < per_buffer ? lines : per_buffer;
		size_t left = now * line_bytes;
		const char *cursor = buffer;
		while (left) {
			ssize_t written = write(STDOUT_FILENO, cursor, left);
			if (written < 0 && errno == EINTR)
				continue;
			if (written < 0)
				return 1;
			cursor += written;
			left -= (size_t)written;
		}
		lines -= now;
	}
	free(buffer);
	return 0;
}

/* ---- processes --------------------------------------------------------------- */

static char *find_program(const char *name)
{
	const char *path = getenv("PATH");
	char *copy = strdup(path ? path : "/usr/bin:/bin");
	char *result = NULL;
	for (char *dir = strtok(copy, ":"); dir && !result; dir = strtok(NULL, ":")) {
		char candidate[PATH_MAX];
		snprintf(candidate, sizeof(candidate), "%s/%s", dir, name);
		if (access(candidate, X_OK) == 0)
			result = strdup(candidate);
	}
	free(copy);
	return result;
}

/* Forks `argv` with stdin from `in` (or /dev/null) and stdout into `out`;
 * stderr to /dev/null. */
static pid_t spawn(char *const argv[], int in, int out)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		exit_with_parent(SIGKILL);
		int null_fd = open("/dev/null", O_RDWR);
		dup2(in >= 0 ? in : null_fd, STDIN_FILENO);
		dup2(out, STDOUT_FILENO);
		dup2(null_fd, STDERR_FILENO);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int64_t process_cpu_ns(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *threads = opendir(path);
	if (!threads)
		return -1;
	int64_t total = 0;
	struct dirent *entry;
	while ((entry = readdir(threads))) {
		if (entry->d_name[0] == '.')
			continue;
		char file[128];
		snprintf(file, sizeof(file), "/proc/%d/task/%.32s/schedstat", (int)pid,
			 entry->d_name);
		char *content = read_file(file, NULL);
		if (content) {
			total += strtoll(content, NULL, 10);
			free(content);
		}
	}
	closedir(threads);
	return total;
}

/* Reads `fd` until `lines` newlines came (or EOF); true when they did.
 * *first_ns: when the first bytes came, so that a supervisor's start-up
 * (python's, for supervisord) is not counted as forwarding time. */
static bool read_lines(int fd, size_t lines, int64_t *first_ns)
{
	static char buffer[1 << 16];
	size_t seen = 0;
	*first_ns = 0;
	while (seen < lines) {
		ssize_t got = read(fd, buffer, sizeof(buffer));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		if (!*first_ns)
			*first_ns = now_ns();
		for (const char *cursor = buffer, *end = buffer + got;
		     (cursor = memchr(cursor, '\n', (size_t)(end - cursor))); cursor++)
			seen++;
	}
	return true;
}

/* ---- the forwarders ------------------------------------------------------ */

static char *format_number(size_t value)
{
	char *text;
	if (asprintf(&text, "%zu", value) < 0)
		die("out of memory");
	return text;
}

static void write_corral_config(const char *path, const struct workload *load)
{
	struct text text = {0};
	text_append(&text,
		    "groups:\n  bench:\n    tasks:\n      w:\n"
		    "        command: [\"%s\", \"--write\", \"%zu\", \"%zu\"]\n"
		    "        restart: {policy: never}\n",
		    self_exe, load->line_bytes, load->total_bytes);
	write_file(path, text.data, text.length, 0644);
	free(text.data);
}

static void write_supervisord_config(const char *path, const struct workload *load)
{
	struct text text = {0};
	char *pidfile = temp_path("supervisord.pid");
	text_append(&text,
		    "[supervisord]\nnodaemon=true\nuser=root\nlogfile=/dev/null\n"
		    "logfile_maxbytes=0\npidfile=%s\nloglevel=warn\n\n"
		    "[program:w]\ncommand=%s --write %zu %zu\nautorestart=false\nstartsecs=0\n"
		    "stdout_logfile=/dev/stdout\nstdout_logfile_maxbytes=0\n",
		    pidfile, self_exe, load->line_bytes, load->total_bytes);
	write_file(path, text.data, text.length, 0644);
	free(text.data);
	free(pidfile);
}

struct programs {
	const char *corral;
	char *s6_log;
	char *supervisord;
};

static struct measure run_one(enum forwarder which, const struct programs *programs,
			      const struct workload *load)
{
	struct measure measure = {0};
	char *line_bytes = format_number(load->line_bytes);
	char *total_bytes = format_number(load->total_bytes);
	char *writer[] = {self_exe, "--write", line_bytes, total_bytes, NULL};
	int out[2];
	if (pipe2(out, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));

	pid_t forwarder = -1, writer_pid = -1;
	switch (which) {
	case PLAIN:
		forwarder = writer_pid = spawn(writer, -1, out[1]);
		break;
	case CORRAL: {
		char *config = temp_path("corral.yaml");
		write_corral_config(config, load);
		char *argv[] = {(char *)programs->corral, "run", config, NULL};
		forwarder = spawn(argv, -1, out[1]);
		free(config);
		break;
	}
	case S6_LOG: {
		int middle[2];
		if (pipe2(middle, O_CLOEXEC) < 0)
			die("pipe: %s", strerror(errno));
		writer_pid = spawn(writer, -1, middle[1]);
		char *argv[] = {programs->s6_log, "1", NULL};
		forwarder = spawn(argv, middle[0], out[1]);
		close(middle[0]);
		close(middle[1]);
		break;
	}
	case SUPERVISORD: {
		char *config = temp_path("supervisord.conf");
		write_supervisord_config(config, load);
		char *argv[] = {programs->supervisord, "-c", config, NULL};
		forwarder = spawn(argv, -1, out[1]);
		free(config);
		break;
	}
	case FORWARDER_COUNT:
		break;
	}
	running_pids[0] = forwarder;
	running_pids[1] = writer_pid;
	close(out[1]);

	int64_t first;
	measure.done = read_lines(out[0], load->total_bytes / load->line_bytes, &first);
	measure.seconds = (double)(now_ns() - first) / 1e9;
	int64_t cpu = process_cpu_ns(forwarder);
	measure.forwarder_cpu_ms = cpu < 0 ? -1 : (double)cpu / 1e6;

	/* corral and the plain writer end by themselves; the others wait for
	 * more and are stopped. */
	if (which == S6_LOG || which == SUPERVISORD)
		stop_process(forwarder, 5000); /* which reaps it */
	else
		reap_status(forwarder);
	if (writer_pid > 0 && writer_pid != forwarder)
		reap_status(writer_pid);
	running_pids[0] = running_pids[1] = 0;
	close(out[0]);
	free(line_bytes);
	free(total_bytes);
	return measure;
}

/* The best of `runs`: the machine's noise only ever slows a run down. */
static struct measure best_of(enum forwarder which, const struct programs *programs,
			      const struct workload *load, unsigned runs)
{
	struct measure best = {0};
	for (unsigned run = 0; run < runs; run++) {
		struct measure measure = run_one(which, programs, load);
		if (!measure.done)
			die("%s: not every line of the %s workload arrived", forwarder_names[which],
			    load->label);
		if (!best.done || measure.seconds < best.seconds)
			best = measure;
	}
	return best;
}

static void bench_workload(const struct programs *programs, const struct workload *load,
			   unsigned runs)
{
	struct measure results[FORWARDER_COUNT] = {0};
	bool present[FORWARDER_COUNT] = {true, true, programs->s6_log != NULL,
					 programs->supervisord != NULL};
	double megabytes = (double)load->total_bytes / 1e6;

	printf("\n%s: %.0f MB in lines of %zu bytes, best of %u\n", load->label, megabytes,
	       load->line_bytes, runs);
	printf("  %-12s %10s %16s %12s %12s\n", "forwarder", "MB/s", "CPU ms per MB", "x s6-log",
	       "% of plain");
	for (int which = 0; which < FORWARDER_COUNT; which++)
		if (present[which])
			results[which] = best_of((enum forwarder)which, programs, load, runs);
	for (int which = 0; which < FORWARDER_COUNT; which++) {
		if (!present[which]) {
			printf("  %-12s (not installed: skipped)\n", forwarder_names[which]);
			continue;
		}
		double rate = megabytes / results[which].seconds;
		char versus_s6[32] = "-";
		if (present[S6_LOG])
			snprintf(versus_s6, sizeof(versus_s6), "%.2f",
				 results[S6_LOG].seconds / results[which].seconds);
		printf("  %-12s %10.1f %16.2f %12s %11.1f%%\n", forwarder_names[which], rate,
		       which == PLAIN ? 0.0 : results[which].forwarder_cpu_ms / megabytes,
		       versus_s6, 100.0 * results[PLAIN].seconds / results[which].seconds);
	}
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_output [--corral PATH] [--quick]\n"
		     "Forwarding throughput and CPU of corral, s6-log and supervisord, next to a "
		     "plain pipe.\n");
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--write") == 0)
		return write_lines(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));

	bench_init("bench_output", cleanup);
	struct bench_options options = {.corral = "build/corral"};
	int exit_code = parse_options(argc, argv, false, usage, &options);
	if (exit_code >= 0)
		return exit_code;
	ssize_t length = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (length < 0)
		die("readlink /proc/self/exe: %s", strerror(errno));
	self_exe[length] = '\0';
	catch_fatal_signals();
	make_temp_dir("/tmp/bench_output.XXXXXX");
	use_own_control_socket();
	print_machine_line(options.quick, options.corral, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	struct programs programs = {
	    .corral = options.corral,
	    .s6_log = find_program("s6-log"),
	    .supervisord = find_program("supervisord"),
	};
	size_t scale = options.quick ? 1 : 10;
	unsigned runs = options.quick ? 1 : 3;
	const struct workload loads[] = {
	    {"77-byte lines", 77, 20 * 1000 * 1000 * scale},
	    {"2-byte lines (yes)", 2, 2 * 1000 * 1000 * scale},
	    {"1 KiB lines", 1024, 20 * 1000 * 1000 * scale},
	};
	for (size_t i = 0; i < sizeof(loads) / sizeof(loads[0]); i++)
		bench_workload(&programs, &loads[i], runs);
	free(programs.s6_log);
	free(programs.supervisord);
	remove_temp_dir();
	return 0;
}
