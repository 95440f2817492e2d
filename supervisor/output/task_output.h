/* The output of one task: a pipe that lives as long as the task (every run
 * writes to the same one; both stdout and stderr, unless log.streams:
 * separate gives stderr a pipe of its own), split into lines that go,
 * a batch for each read, to the task's sinks (output_sinks.h): corral's
 * stdout first, then the ring, the log file and the followers.
 *
 * corral holds the read end only: a write end is opened again from it
 * (/proc/self/fd/N, O_WRONLY) for each spawn of the task or of a hook and
 * closed once the process has it, so an idle task costs one fd, not two.
 * With no writer left the read end hangs up, and is taken out of the loop
 * until the next writer is opened. Where /proc cannot do that, corral keeps
 * the write end, as before.
 *
 * Read in batches of up to 64 KiB; the whole lines of a batch go to the
 * sinks together, from where they lie (only a line cut across reads is
 * copied aside), and the batch goes out in one write. When stdout is full
 * the rest of the batch is held and the pipe is not read until stdout has
 * room: the task then blocks in write(), and nothing is lost. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/loop.h"
#include "supervisor/output/output_sinks.h"
#include "supervisor/output/output_stdout.h"

#define TASK_OUTPUT_LINE_MAX 4096

struct task_output {
	struct loop_watch watch; /* read end */
	bool unwatched;          /* hung up (no writer): out of the loop */
	int write_fd;            /* kept only where /proc cannot open one again, else -1 */
	const char *name;        /* "web/app" */
	size_t name_length;
	enum output_stream stream; /* what the pipe carries */
	/* Where the lines go, corral's stdout first (the task's, shared by
	 * its two pipes when the streams are apart); `sink` is that stdout,
	 * which the reader waits on when it is full. */
	const struct output_sinks *sinks;
	struct output_stdout *sink;
	struct loop *loop;
	/* log.mode non-blocking: when stdout is full, a line goes to the
	 * other sinks only, and is counted (and reported) as dropped. */
	bool drop_when_full;
	bool dropping; /* within a run of drops */
	/* The flags of the groups below, kept here beside the two above:
	 * apart, each took 8 bytes (measured: bench_supervisor --memory-only). */
	bool paused;             /* the sink was full: see `held` */
	bool line_complete;      /* see `line` */
	bool rate_paused;        /* log.rate_limit: the pipe waits for tokens */
	uint64_t dropped_lines;  /* in all, for status */
	uint64_t dropping_lines; /* in the current run of drops, since the last report */
	uint64_t dropping_report_ms;
	/* The sink was full: `held` keeps what was read and not forwarded
	 * yet, and the pipe is not read until it is out. */
	struct output_stdout_waiter waiter;
	char *held;
	size_t held_start, held_end;
	/* A line cut across reads (or longer than the buffer). line_complete:
	 * it is whole and waits for room in the sink. TASK_OUTPUT_LINE_MAX
	 * bytes, allocated the first time a line is cut: whole lines go out
	 * from the read buffer, and a silent task costs nothing. */
	size_t line_length;
	char *line;
	/* log.rate_limit's state; NULL for a task that never had one (72
	 * bytes less a task; bench_supervisor --memory-only). */
	struct output_rate *rate;
};

/* log.rate_limit: bytes a second read from the pipe (0: no limit), a
 * bucket of one second's worth. Past it the pipe waits, and so does the
 * task: a flood costs corral a bounded share of a CPU. */
struct output_rate {
	uint64_t limit;
	int64_t tokens;
	uint64_t refilled_ms;
	struct loop_timer timer;
	uint64_t throttled_ms, report_ms; /* waited in all; last said */
};

/* Sets (or, with 0, lifts) the task's rate limit (config log.rate_limit). */
void task_output_set_rate_limit(struct task_output *output, uint64_t bytes_per_second);

/* `sinks`: corral's stdout (`sink`) first, then the others; kept by the
 * caller as long as the output is open. `pipe_later`: no pipe yet (a
 * takeover, where task_output_adopt brings the old one, saving 1000 tasks
 * 2000 pipes made and closed again); task_output_open_writer makes one
 * if none came. */
int task_output_open(struct task_output *output, struct loop *loop, struct output_stdout *sink,
		     const struct output_sinks *sinks, const char *name, enum output_stream stream,
		     bool pipe_later);

/* Reads what is in the pipe now and flushes a partial last line, so that
 * everything a run wrote is out before its exit is reported. Under back
 * pressure (the sink full) it leaves the output where it is: it comes out
 * later, in order. */
void task_output_drain(struct task_output *output);

/* A write end for a process about to start (the task, as fds 1 and 2 or
 * one of them; a hook, as its stderr): the caller closes it once the
 * process has its copy. -errno on failure. */
int task_output_open_writer(struct task_output *output);

void task_output_close(struct task_output *output);

/* `corral upgrade`: the pipe `fd` of the corral before the exec replaces
 * the one task_output_open made (if it made one), with the partial line it had read
 * (`line_complete`: whole, waiting for room) and the bytes it held for
 * room in stdout, which go out before anything more is read. */
void task_output_adopt(struct task_output *output, int fd, const char *line, size_t line_length,
		       bool line_complete, const char *held, size_t held_length);
