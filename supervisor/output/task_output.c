#include "supervisor/output/task_output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"

#define READ_SIZE (64 * 1024)
/* Reads per wakeup: enough to empty a full pipe, few enough that a chatty
 * task cannot starve the others. */
#define READS_PER_WAKEUP 4
/* While a non-blocking task's lines are dropped, how often it is said. */
#define DROP_REPORT_MS 10000

static void report_drops(struct task_output *output, const char *what)
{
	log_message("%s: %s: %llu line%s dropped (log.mode: non-blocking)", output->name, what,
		    (unsigned long long)output->dropping_lines,
		    output->dropping_lines == 1 ? "" : "s");
	output->dropping_lines = 0;
}

/* A line stdout could not take, in non-blocking mode: said when the drops
 * begin, every DROP_REPORT_MS while they go on, and when they end. */
static void note_dropped(struct task_output *output, uint64_t now_ms)
{
	output->dropped_lines++;
	output->dropping_lines++;
	if (!output->dropping) {
		output->dropping = true;
		output->dropping_report_ms = now_ms;
		log_message("%s: stdout cannot keep up: dropping its lines until it does "
			    "(log.mode: non-blocking)",
			    output->name);
	} else if (now_ms - output->dropping_report_ms >= DROP_REPORT_MS) {
		output->dropping_report_ms = now_ms;
		report_drops(output, "stdout still cannot keep up");
	}
}

static void end_of_drops(struct task_output *output)
{
	if (!output->dropping)
		return;
	output->dropping = false;
	report_drops(output, "stdout keeps up again");
}

/* Whole lines (each ending in '\n', none longer than the line buffer) to
 * the sinks, a batch for each run that stdout takes; returns the bytes
 * taken: all, unless stdout is full and the task waits for it (blocking
 * mode). In non-blocking mode a line stdout refuses goes to the other
 * sinks only. */
static size_t emit_lines(struct task_output *output, const char *text, size_t length,
			 uint64_t now_ms)
{
	size_t done = 0;
	while (done < length) {
		struct output_batch batch = {
		    .time_ms = now_ms,
		    .stream = output->stream,
		    .name = output->name,
		    .name_length = output->name_length,
		    .text = text + done,
		    .length = length - done,
		    .line_max = TASK_OUTPUT_LINE_MAX,
		};
		output_sinks_lines(output->sinks, &batch);
		if (batch.lines) {
			end_of_drops(output);
			done += batch.length;
		}
		if (done == length || !output->drop_when_full)
			break;
		const char *newline = memchr(text + done, '\n', length - done);
		size_t line = (size_t)(newline - (text + done)) + 1;
		if (line - 1 > TASK_OUTPUT_LINE_MAX)
			break; /* not refused: too long, for the line buffer to cut */
		/* Refused: this line is dropped from stdout, the next one may fit. */
		note_dropped(output, now_ms);
		batch.text = text + done;
		batch.length = line;
		batch.lines = 1;
		output_sinks_lines_after_first(output->sinks, &batch);
		done += line;
	}
	return done;
}

static bool emit_line_buffer(struct task_output *output, uint64_t now_ms)
{
	output->line[output->line_length] = '\n';
	if (!emit_lines(output, output->line, output->line_length + 1, now_ms))
		return false;
	output->line_length = 0;
	output->line_complete = false;
	return true;
}

/* Splits `data` into lines and forwards them; returns how many bytes it
 * took (all of them unless the sink filled up). Runs of whole lines go
 * out from where they lie, in one call; a line cut across reads, or
 * longer than the line buffer (cut into pieces rather than held back),
 * goes through the line buffer. */
static size_t forward(struct task_output *output, const char *data, size_t size, uint64_t now_ms)
{
	size_t done = 0;
	if (output->line_complete && !emit_line_buffer(output, now_ms))
		return 0;
	while (done < size) {
		const char *start = data + done;
		size_t left = size - done;
		if (output->line_length == 0) {
			const char *last = memrchr(start, '\n', left);
			size_t whole = last ? (size_t)(last - start) + 1 : 0;
			size_t taken = whole ? emit_lines(output, start, whole, now_ms) : 0;
			done += taken;
			if (taken < whole) {
				/* Stopped before a line longer than the buffer, or at
				 * a full sink. */
				const char *newline = memchr(start + taken, '\n', whole - taken);
				if ((size_t)(newline - (start + taken)) <= TASK_OUTPUT_LINE_MAX)
					break;
			}
			if (done == size)
				break;
			start = data + done;
			left = size - done;
		}
		const char *newline = memchr(start, '\n', left);
		size_t chunk = newline ? (size_t)(newline - start) : left;
		size_t room = TASK_OUTPUT_LINE_MAX - output->line_length;
		if (!output->line)
			output->line = xmalloc(TASK_OUTPUT_LINE_MAX + 1); /* and a newline */
		if (!newline && chunk < room) {
			/* The start of a line whose end has not come yet. */
			memcpy(output->line + output->line_length, start, chunk);
			output->line_length += chunk;
			done += chunk;
			continue;
		}
		/* The buffered start and what completes it (its end, or as much
		 * as fills the buffer). */
		bool ends_here = newline && chunk <= room;
		size_t take = ends_here ? chunk : room;
		memcpy(output->line + output->line_length, start, take);
		output->line_length += take;
		done += take + (ends_here ? 1 : 0);
		output->line_complete = true;
		if (!emit_line_buffer(output, now_ms))
			break;
	}
	return done;
}

/* ---- the read end in the loop ---- */

/* EPOLLIN unless reading waits (sink full, rate limit). */
static void update_interest(struct task_output *output)
{
	uint32_t events = output->paused || output->rate_paused ? 0 : EPOLLIN;
	if (!output->unwatched) {
		loop_watch_modify(output->loop, &output->watch, events);
		return;
	}
	/* Back in the loop to read what is left: it hangs up again at the end. */
	if (events && loop_watch_add(output->loop, &output->watch, events) == 0)
		output->unwatched = false;
}

/* No writer is left: epoll would report the hang-up at every wait, asked
 * for or not, so the read end leaves the loop until a writer is opened. */
static void unwatch_hung_up(struct task_output *output)
{
	if (output->unwatched)
		return;
	loop_watch_remove(output->loop, &output->watch);
	output->unwatched = true;
}

static void pause_reading(struct task_output *output, const char *rest, size_t size)
{
	output->held = xmalloc(size + 1); /* never 0 bytes: held is a valid pointer */
	memcpy(output->held, rest, size);
	output->held_start = 0;
	output->held_end = size;
	if (!output->paused) {
		output->paused = true;
		update_interest(output);
	}
	output_stdout_wait(output->sink, &output->waiter);
}

static void tell_kept(const struct task_output *output)
{
	if (output->sinks && output->sinks->kept)
		output->sinks->kept(output->sinks);
}

/* The sink has room again: what was held goes first, then the pipe. */
static void on_room(struct output_stdout_waiter *waiter)
{
	struct task_output *output =
	    (struct task_output *)((char *)waiter - offsetof(struct task_output, waiter));
	size_t held = output->held_end - output->held_start;
	size_t taken = forward(output, output->held + output->held_start, held, wall_clock_ms());
	output->held_start += taken;
	output_stdout_flush(output->sink);
	tell_kept(output);
	if (output->held_start < output->held_end || output->line_complete) {
		output_stdout_wait(output->sink, waiter);
		return;
	}
	free(output->held);
	output->held = NULL;
	output->held_start = output->held_end = 0;
	output->paused = false;
	update_interest(output);
}

/* Reads and forwards one batch. Returns the bytes read (held for room in
 * the sink or not: they count against the rate limit either way), 0 at
 * EOF or when nothing is there. */
static ssize_t read_batch(struct task_output *output, char *buffer)
{
	ssize_t got;
	do
		got = read(output->watch.fd, buffer, READ_SIZE);
	while (got < 0 && errno == EINTR);
	if (got <= 0)
		return got;
	bool kept_before = output->line_length || output->line_complete;
	size_t taken = forward(output, buffer, (size_t)got, wall_clock_ms());
	if (taken < (size_t)got || output->line_complete)
		pause_reading(output, buffer + taken, (size_t)got - taken);
	if (kept_before || output->line_length || output->line_complete || output->held)
		tell_kept(output);
	return got;
}

/* ---- log.rate_limit ---- */

static uint64_t rate_limit(const struct task_output *output)
{
	return output->rate ? output->rate->limit : 0;
}

static void refill(struct output_rate *rate, uint64_t now_ms)
{
	uint64_t elapsed = now_ms - rate->refilled_ms;
	rate->refilled_ms = now_ms;
	rate->tokens += (int64_t)(rate->limit * elapsed / 1000);
	if (rate->tokens > (int64_t)rate->limit)
		rate->tokens = (int64_t)rate->limit; /* a burst of one second */
}

static void on_rate_refilled(struct loop_timer *timer)
{
	struct task_output *output = timer->data;
	output->rate_paused = false;
	update_interest(output);
}

/* Over the rate: the pipe is not read until the bucket has a read's worth
 * again. Said at once and every DROP_REPORT_MS while it goes on. */
static void throttle(struct task_output *output, uint64_t now_ms)
{
	struct output_rate *rate = output->rate;
	uint64_t wait_ms =
	    rate->limit ? (uint64_t)(-rate->tokens + READ_SIZE) * 1000 / rate->limit + 1 : 0;
	output->rate_paused = true;
	rate->throttled_ms += wait_ms;
	update_interest(output);
	loop_timer_arm(output->loop, &rate->timer, now_ms + wait_ms);
	if (rate->report_ms && now_ms - rate->report_ms < DROP_REPORT_MS)
		return;
	rate->report_ms = now_ms;
	log_message("%s: output over log.rate_limit (%llu bytes/s): read at that rate, the task "
		    "waits (%llu ms so far)",
		    output->name, (unsigned long long)rate->limit,
		    (unsigned long long)rate->throttled_ms);
}

/* The state is made at the first limit, and kept once made (a reload may
 * lift the limit while the pipe waits for its timer). */
void task_output_set_rate_limit(struct task_output *output, uint64_t bytes_per_second)
{
	if (!bytes_per_second && !output->rate)
		return;
	if (!output->rate) {
		output->rate = xcalloc(1, sizeof(*output->rate));
		loop_timer_init(&output->rate->timer, on_rate_refilled, output);
	}
	output->rate->limit = bytes_per_second;
	output->rate->tokens = (int64_t)bytes_per_second;
	output->rate->refilled_ms = loop_now_ms();
}

static void read_batches(struct task_output *output, int limit)
{
	static char buffer[READ_SIZE]; /* one loop, one reader at a time */
	for (int reads = 0; reads < limit && !output->paused && !output->rate_paused; reads++) {
		if (output->sinks->behind && output->sinks->behind(output->sinks))
			break; /* the pipe stays readable: tried again next turn */
		uint64_t now = loop_now_ms();
		if (rate_limit(output)) {
			refill(output->rate, now);
			if (output->rate->tokens <= 0) {
				throttle(output, now);
				break;
			}
		}
		ssize_t got = read_batch(output, buffer);
		if (got == 0)
			unwatch_hung_up(output); /* end of file: every writer is gone */
		if (rate_limit(output) && got > 0)
			output->rate->tokens -= got;
		if (got < READ_SIZE)
			break;
	}
	output_stdout_flush(output->sink);
}

static void on_readable(struct loop_watch *watch, uint32_t events)
{
	struct task_output *output = watch->data;
	if (!(events & EPOLLIN) && (events & EPOLLHUP)) {
		/* Nothing to read, no writer (or reading waits, and nothing
		 * more can come). */
		unwatch_hung_up(output);
		return;
	}
	read_batches(output, READS_PER_WAKEUP);
}

/* A new write end of the pipe, through /proc (a pipe opened for writing
 * again is the same pipe). */
static int reopen_write_end(int read_fd)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", read_fd);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The pipe, its read end out of the loop until the first writer. */
static int make_pipe(struct task_output *output)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	/* Room for a burst of four of corral's reads before the task blocks;
	 * the kernel allocates the pages only as they fill. */
	fcntl(fds[0], F_SETPIPE_SZ, 256 * 1024);
	output->watch.fd = fds[0];
	output->write_fd = fds[1];
	int again = reopen_write_end(fds[0]);
	if (again >= 0) {
		/* Writers are opened when needed: ours goes (task_output.h). */
		close(again);
		close(fds[1]);
		output->write_fd = -1;
	}
	return 0;
}

int task_output_open_writer(struct task_output *output)
{
	/* Taken over without a pipe (task_output_open's `pipe_later`), and
	 * none was handed over: made for its first process. */
	int made = output->watch.fd < 0 ? make_pipe(output) : 0;
	if (made < 0)
		return made;
	int fd = output->write_fd >= 0 ? fcntl(output->write_fd, F_DUPFD_CLOEXEC, 0)
				       : reopen_write_end(output->watch.fd);
	if (fd < 0)
		return output->write_fd >= 0 ? -errno : fd;
	if (output->unwatched)
		update_interest(output); /* back in the loop */
	return fd;
}

int task_output_open(struct task_output *output, struct loop *loop, struct output_stdout *sink,
		     const struct output_sinks *sinks, const char *name, enum output_stream stream,
		     bool pipe_later)
{
	memset(output, 0, sizeof(*output));
	output->watch.fd = -1;
	output->write_fd = -1;
	output->watch.callback = on_readable;
	output->watch.data = output;
	int made = pipe_later ? 0 : make_pipe(output);
	if (made < 0)
		return made;
	output->name = name;
	output->name_length = strlen(name);
	output->stream = stream;
	output->sink = sink;
	output->sinks = sinks;
	output->waiter.resume = on_room;
	output->loop = loop;
	/* Without a writer yet, it would only hang up: in the loop from the
	 * first writer on. */
	output->unwatched = output->write_fd < 0;
	int failure = output->unwatched ? 0 : loop_watch_add(loop, &output->watch, EPOLLIN);
	if (failure < 0) {
		task_output_close(output);
		return failure;
	}
	return 0;
}

void task_output_adopt(struct task_output *output, int fd, const char *line, size_t line_length,
		       bool line_complete, const char *held, size_t held_length)
{
	if (!output->unwatched)
		loop_watch_remove(output->loop, &output->watch);
	if (output->watch.fd >= 0)
		close(output->watch.fd); /* a pipe task_output_open made */
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	output->watch.fd = fd;
	output->unwatched = true;
	if (line_length || line_complete) {
		if (!output->line)
			output->line = xmalloc(TASK_OUTPUT_LINE_MAX + 1);
		memcpy(output->line, line, line_length);
		output->line_length = line_length;
		output->line_complete = line_complete;
	}
	/* What the old corral held for room in stdout goes out first; the
	 * pipe is read after it, as it would have been. */
	if (held_length || line_complete)
		pause_reading(output, held, held_length);
	else
		update_interest(output);
}

void task_output_drain(struct task_output *output)
{
	if (output->watch.fd < 0 || output->paused)
		return;
	/* The run is over: what it left in the pipe (at most its size) goes
	 * out before its exit is said, whatever the rate limit. */
	uint64_t limit = rate_limit(output);
	if (output->rate)
		output->rate->limit = 0;
	if (output->rate_paused) {
		loop_timer_cancel(output->loop, &output->rate->timer);
		output->rate_paused = false;
	}
	/* Bounded: a leftover process that keeps writing cannot hold us. */
	read_batches(output, 16);
	if (output->rate)
		output->rate->limit = limit;
	if (output->paused || !output->line_length)
		return;
	output->line_complete = true;
	if (!emit_line_buffer(output, wall_clock_ms()))
		pause_reading(output, "", 0);
	output_stdout_flush(output->sink);
}

void task_output_close(struct task_output *output)
{
	if (output->loop && output->rate)
		loop_timer_cancel(output->loop, &output->rate->timer);
	free(output->rate);
	output->rate = NULL;
	output->rate_paused = false;
	if (output->watch.fd >= 0) {
		/* The sink waits for room now (output_stdout_begin_close): what
		 * was held, then the pipe, then a partial line. */
		output_stdout_cancel_wait(output->sink, &output->waiter);
		if (output->paused)
			forward(output, output->held + output->held_start,
				output->held_end - output->held_start, wall_clock_ms());
		output->paused = false;
		task_output_drain(output);
		if (!output->unwatched)
			loop_watch_remove(output->loop, &output->watch);
		close(output->watch.fd);
		output->watch.fd = -1;
	}
	free(output->held);
	output->held = NULL;
	free(output->line);
	output->line = NULL;
	if (output->dropping)
		report_drops(output, "at exit, stdout still could not keep up");
	if (output->write_fd >= 0) {
		close(output->write_fd);
		output->write_fd = -1;
	}
}
