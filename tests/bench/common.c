/* common: the plumbing the benchmark programs share; see common.h. */
#include "common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

char temp_dir[64];
pid_t main_pid;

static const char *program_name = "bench";
static void (*cleanup_hook)(void);

void bench_init(const char *program, void (*cleanup)(void))
{
	program_name = program;
	cleanup_hook = cleanup;
	main_pid = getpid();
}

static void on_fatal_signal(int signal_number)
{
	if (getpid() == main_pid && cleanup_hook)
		cleanup_hook();
	_exit(128 + signal_number);
}

void catch_fatal_signals(void)
{
	struct sigaction action = {.sa_handler = on_fatal_signal};
	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
	sigaction(SIGHUP, &action, NULL);
}

void die(const char *format, ...)
{
	va_list args;
	if (getpid() != main_pid)
		_exit(1); /* a forked child: the bench itself cleans up */
	fflush(stdout);
	fprintf(stderr, "%s: ", program_name);
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fprintf(stderr, "\n");
	if (cleanup_hook)
		cleanup_hook();
	exit(1);
}

void make_temp_dir(const char *template)
{
	snprintf(temp_dir, sizeof(temp_dir), "%s", template);
	if (!mkdtemp(temp_dir)) {
		temp_dir[0] = '\0';
		die("mkdtemp: %s", strerror(errno));
	}
}

unsigned scan_dir(int fd, const char *prefix, unsigned passes,
		  void (*visit)(int fd, const char *name, int depth), int depth)
{
	unsigned visits = 0;
	size_t prefix_length = strlen(prefix);
	for (unsigned pass = 0; pass < passes; pass++) {
		bool found = false;
		char buffer[4096];
		ssize_t got;
		lseek(fd, 0, SEEK_SET);
		while ((got = getdents64(fd, buffer, sizeof(buffer))) > 0) {
			for (ssize_t offset = 0; offset < got;) {
				struct dirent64 *entry = (struct dirent64 *)(buffer + offset);
				offset += entry->d_reclen;
				const char *n = entry->d_name;
				if ((n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]))) ||
				    strncmp(n, prefix, prefix_length) != 0)
					continue;
				visit(fd, n, depth);
				visits++;
				found = true;
			}
		}
		if (!found)
			break;
	}
	return visits;
}

/* rm -rf, with the fds and buffers it needs on the stack, so that a signal
 * handler may use it. */
static void remove_tree_at(int parent_fd, const char *name, int depth)
{
	if (unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT)
		return;
	if (depth > 16)
		return;
	int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	/* Rescan until empty: removing while reading may skip entries. */
	scan_dir(fd, "", 100, remove_tree_at, depth + 1);
	close(fd);
	unlinkat(parent_fd, name, AT_REMOVEDIR);
}

void remove_temp_dir(void)
{
	if (temp_dir[0] && !getenv("BENCH_KEEP_TEMP")) {
		remove_tree_at(AT_FDCWD, temp_dir, 0);
		temp_dir[0] = '\0';
	}
}

char *temp_path(const char *format, ...)
{
	char *path = malloc(PATH_MAX);
	if (!path)
		die("out of memory");
	int length = snprintf(path, PATH_MAX, "%s/", temp_dir);
	va_list args;
	va_start(args, format);
	vsnprintf(path + length, PATH_MAX - (size_t)length, format, args);
	va_end(args);
	return path;
}

static bool corral_runnable(const char *corral)
{
	if (access(corral, X_OK) == 0)
		return true;
	fprintf(stderr, "%s: %s: %s (build corral first, or --corral PATH)\n", program_name, corral,
		strerror(errno));
	return false;
}

int parse_options(int argc, char **argv, bool takes_tasks, void (*usage)(FILE *out),
		  struct bench_options *options)
{
	/* --tasks last, so that a bench without it can cut the table short. */
	const struct option table[] = {
	    {"corral", required_argument, NULL, 'c'},
	    {"quick", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {takes_tasks ? "tasks" : NULL, required_argument, NULL, 'n'},
	    {NULL, 0, NULL, 0},
	};
	int option;
	while ((option = getopt_long(argc, argv, "h", table, NULL)) != -1) {
		switch (option) {
		case 'c':
			options->corral = optarg;
			break;
		case 'n': {
			char *end;
			unsigned long value = strtoul(optarg, &end, 10);
			if (*end || value < 1 || value > 9999) {
				fprintf(stderr, "%s: --tasks: 1 to 9999\n", program_name);
				return 2;
			}
			options->tasks = (unsigned)value;
			break;
		}
		case 'q':
			options->quick = true;
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
	return corral_runnable(options->corral) ? -1 : 1;
}

void print_machine_line(bool quick, const char *corral, const char *version)
{
	struct utsname uts;
	uname(&uts);
	printf("%s%s: corral %s%s%s%s, kernel %s %s, %ld CPUs online\n", program_name,
	       quick ? " --quick" : "", corral, version ? " (" : "", version ? version : "",
	       version ? ")" : "", uts.release, uts.machine, sysconf(_SC_NPROCESSORS_ONLN));
}

void use_own_control_socket(void)
{
	char *socket_path = temp_path("control.sock");
	setenv("CORRAL_SOCKET", socket_path, 1);
	free(socket_path);
}

/* ---- processes ------------------------------------------------------------ */

void exit_with_parent(int signal_number)
{
	prctl(PR_SET_PDEATHSIG, signal_number);
	if (getppid() != main_pid)
		_exit(127);
}

int reap_status(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid %d: %s", (int)pid, strerror(errno));
	return status;
}

int exit_code_of(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int64_t stop_process(pid_t pid, unsigned grace_ms)
{
	int64_t start = now_ns();
	kill(pid, SIGTERM);
	for (unsigned waited = 0; waited < grace_ms; waited += 5) {
		pid_t done = waitpid(pid, NULL, WNOHANG);
		if (done == pid || (done < 0 && errno == ECHILD))
			return now_ns() - start;
		sleep_ms(5);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return -1;
}

/* ---- clocks ---------------------------------------------------------------- */

int64_t clock_ns(clockid_t clock)
{
	struct timespec now;
	clock_gettime(clock, &now);
	return (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
}

int64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

void sleep_ms(unsigned ms)
{
	struct timespec pause = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
		;
}

/* ---- samples --------------------------------------------------------------- */

void series_add(struct series *series, double value)
{
	if (series->count == series->capacity) {
		series->capacity = series->capacity ? series->capacity * 2 : 64;
		series->values = realloc(series->values, series->capacity * sizeof(double));
		if (!series->values)
			die("out of memory");
	}
	series->values[series->count++] = value;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void series_sort(struct series *series)
{
	if (series->count)
		qsort(series->values, series->count, sizeof(double), compare_doubles);
}

double series_median(const struct series *series)
{
	size_t n = series->count;
	if (n == 0)
		return 0;
	return n % 2 ? series->values[n / 2]
		     : (series->values[n / 2 - 1] + series->values[n / 2]) / 2;
}

/* Nearest rank: the smallest sample with at least q of them at or below
 * it. The epsilon keeps q * count from rounding up past an exact rank. */
double series_quantile(const struct series *series, double q)
{
	if (series->count == 0)
		return 0;
	size_t rank = (size_t)(q * (double)series->count + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > series->count)
		rank = series->count;
	return series->values[rank - 1];
}

double series_min(const struct series *series)
{
	return series->count ? series->values[0] : 0;
}

double series_max(const struct series *series)
{
	return series->count ? series->values[series->count - 1] : 0;
}

/* ---- text and files -------------------------------------------------------- */

void text_reserve(struct text *text, size_t more)
{
	if (text->capacity - text->length > more)
		return;
	size_t capacity = text->capacity ? text->capacity : 4096;
	while (capacity - text->length <= more)
		capacity *= 2;
	text->data = realloc(text->data, capacity);
	if (!text->data)
		die("out of memory");
	text->capacity = capacity;
}

void text_append(struct text *text, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	int needed = vsnprintf(NULL, 0, format, args);
	va_end(args);
	if (needed < 0)
		die("vsnprintf failed");
	text_reserve(text, (size_t)needed);
	va_start(args, format);
	vsnprintf(text->data + text->length, (size_t)needed + 1, format, args);
	va_end(args);
	text->length += (size_t)needed;
}

void write_file(const char *path, const char *content, size_t length, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
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

void write_sleep_config(const char *path, unsigned count, const char *resources)
{
	struct text text = {0};
	text_append(&text, "groups:\n  bench:\n");
	if (resources)
		text_append(&text, "    resources: %s\n", resources);
	text_append(&text, "    tasks:\n");
	for (unsigned i = 1; i <= count; i++)
		text_append(
		    &text,
		    "      s%03u: {command: [\"sleep\", \"1000\"], restart: {policy: never}}\n", i);
	write_file(path, text.data, text.length, 0644);
	free(text.data);
}

/* A read error counts as unreadable: in /proc it means the process went
 * away while it was read, which callers handle as its absence. */
char *read_file(const char *path, size_t *length_out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct text text = {0};
	for (;;) {
		text_reserve(&text, 4096);
		ssize_t got = read(fd, text.data + text.length, text.capacity - text.length - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			close(fd);
			free(text.data);
			return NULL;
		}
		if (got == 0)
			break;
		text.length += (size_t)got;
	}
	close(fd);
	text.data[text.length] = '\0';
	if (length_out)
		*length_out = text.length;
	return text.data;
}

char *next_line(char **cursor)
{
	char *line = *cursor;
	if (!line || !*line)
		return NULL;
	char *newline = strchr(line, '\n');
	if (newline)
		*newline = '\0';
	*cursor = newline ? newline + 1 : NULL;
	return line;
}

double event_time(const char *line)
{
	const char *field = strstr(line, "\"time\":");
	return field ? strtod(field + strlen("\"time\":"), NULL) : -1;
}

const char *text_tail(const char *text, size_t max)
{
	if (!text)
		return "";
	size_t length = strlen(text);
	return text + (length > max ? length - max : 0);
}

size_t count_occurrences(const char *haystack, const char *needle)
{
	size_t count = 0;
	for (const char *at = haystack; (at = strstr(at, needle)); at += strlen(needle))
		count++;
	return count;
}

long long text_field(const char *text, const char *key)
{
	const char *at = strstr(text, key);
	if (!at)
		return -1;
	return strtoll(at + strlen(key), NULL, 10);
}
