/* common: the plumbing the benchmark programs share (clocks, samples,
 * files, the temp dir, dying cleanly). Benchmarks print figures; what they
 * measure stays in the bench_*.c files, this is only what serves them. */
#ifndef CORRAL_BENCH_COMMON_H
#define CORRAL_BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/* ---- the program, dying, and cleanup ------------------------------------- */

/* The temp dir (empty: none yet, or removed) and the pid of the bench
 * itself, as opposed to the children it forks. */
extern char temp_dir[64];
extern pid_t main_pid;

/* Call first in main(): `program` prefixes die()'s messages, and `cleanup`
 * (async-signal-safe) runs on die() and on a fatal signal, in the bench
 * only, never in a child it forked. */
void bench_init(const char *program, void (*cleanup)(void));

/* SIGINT, SIGTERM and SIGHUP run the cleanup, then exit with 128+N. */
void catch_fatal_signals(void);

/* Prints "PROGRAM: message", cleans up and exits 1; in a forked child it
 * only exits, as the bench itself cleans up. */
void die(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Creates temp_dir from `template` ("/tmp/NAME.XXXXXX"), or dies. */
void make_temp_dir(const char *template);

/* Calls `visit(fd, name, depth)` for each entry of the directory `fd` but
 * . and .. whose name starts with `prefix`, rescanning from the start until
 * a pass finds none or `passes` are done (a visit that removes its entry
 * may make the scan skip others). Only syscalls and a buffer on the stack:
 * async-signal-safe. Returns the number of visits. */
unsigned scan_dir(int fd, const char *prefix, unsigned passes,
		  void (*visit)(int fd, const char *name, int depth), int depth);

/* rm -rf temp_dir; async-signal-safe. */
void remove_temp_dir(void);

/* The path in temp_dir of the name `format` makes, malloc'd. */
char *temp_path(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* What every bench takes on the command line. */
struct bench_options {
	const char *corral;
	bool quick;
	unsigned tasks; /* --tasks N, 0 when not given */
};

/* Parses --corral PATH, --quick, --help and, with `takes_tasks`, --tasks N
 * (1 to 9999) into `options`, which holds the defaults. Returns -1 to go
 * on, or the code main() should exit with (after --help, a bad option, or
 * a corral binary that cannot be run: it says why on stderr). */
int parse_options(int argc, char **argv, bool takes_tasks, void (*usage)(FILE *out),
		  struct bench_options *options);

/* The first line of every bench's output: "PROGRAM[ --quick]: corral
 * PATH[ (VERSION)], kernel RELEASE MACHINE, N CPUs online". */
void print_machine_line(bool quick, const char *corral, const char *version);

/* Points CORRAL_SOCKET into temp_dir: another corral may hold the default
 * socket, and corral refuses to take a live one. */
void use_own_control_socket(void);

/* ---- processes ------------------------------------------------------------ */

/* In a child just forked: `signal_number` when the bench dies, and exit at
 * once if it already has (the signal would never come). */
void exit_with_parent(int signal_number);

/* Reaps `pid`, retrying on EINTR; returns its wait status. */
int reap_status(pid_t pid);

/* A wait status as an exit code: 128+N for signal N. */
int exit_code_of(int status);

/* SIGTERM, up to `grace_ms` to exit, then SIGKILL; async-signal-safe.
 * Returns the time the process took to exit in ns, or -1 if it had to be
 * killed. */
int64_t stop_process(pid_t pid, unsigned grace_ms);

/* ---- clocks ---------------------------------------------------------------- */

int64_t clock_ns(clockid_t clock);

/* CLOCK_MONOTONIC, the clock of every wall time measured. */
int64_t now_ns(void);

/* Sleeps the whole time, through signals; async-signal-safe. */
void sleep_ms(unsigned ms);

/* ---- samples --------------------------------------------------------------- */

/* A growing list of samples. The statistics want it sorted first. */
struct series {
	double *values;
	size_t count, capacity;
};

void series_add(struct series *series, double value);
void series_sort(struct series *series);
/* Of a sorted series; 0 when empty. */
double series_median(const struct series *series);
double series_quantile(const struct series *series, double q);
double series_min(const struct series *series);
double series_max(const struct series *series);

/* ---- text and files -------------------------------------------------------- */

/* A growing NUL-terminated text buffer. */
struct text {
	char *data;
	size_t length, capacity;
};

/* Room for `more` bytes and a NUL after `length`. */
void text_reserve(struct text *text, size_t more);
void text_append(struct text *text, const char *format, ...) __attribute__((format(printf, 2, 3)));

void write_file(const char *path, const char *content, size_t length, mode_t mode);

/* A corral config at `path`: group "bench" of `count` tasks s001... that
 * sleep and are never restarted, with `resources` (YAML) when not NULL. */
void write_sleep_config(const char *path, unsigned count, const char *resources);

/* The whole file, NUL-terminated; NULL when it cannot be read. */
char *read_file(const char *path, size_t *length_out);

/* The line at *cursor, cut at its newline in place, and *cursor moved past
 * it; NULL at the end of the text. */
char *next_line(char **cursor);

/* The "time" of a line of corral's event log (s, CLOCK_REALTIME as corral
 * writes it), or -1 when the line has none. */
double event_time(const char *line);

/* The last `max` bytes of `text`, "" for NULL: the end of what a program
 * said, to show when it failed. */
const char *text_tail(const char *text, size_t max);

size_t count_occurrences(const char *haystack, const char *needle);

/* The number after `key` (e.g. "\nVmRSS:") in a /proc status-like text,
 * or -1. */
long long text_field(const char *text, const char *key);

#endif
