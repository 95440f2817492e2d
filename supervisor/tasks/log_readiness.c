#include "supervisor/tasks/log_readiness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "supervisor/output/output_batch.h"
#include "supervisor/tasks/task.h"

/* How much of the matching line the ready event quotes. */
#define QUOTED_LINE_MAX 60
/* Falling behind is said at most this often per task. */
#define BEHIND_REPORT_MS 60000

static void on_resume(struct loop_timer *timer);

struct log_readiness *log_readiness_make(const struct readiness_config *config, char *error,
					 size_t error_size)
{
	struct log_readiness *log = xcalloc(1, sizeof(*log));
	loop_timer_init(&log->resume, on_resume, NULL);
	char why[512];
	size_t offset;
	log->ready = line_pattern_compile(config->log_ready, &offset, why, sizeof(why));
	if (log->ready && config->log_not_ready)
		log->not_ready =
		    line_pattern_compile(config->log_not_ready, &offset, why, sizeof(why));
	if (!log->ready || (config->log_not_ready && !log->not_ready)) {
		snprintf(error, error_size, "readiness.log: %s", why);
		log_readiness_free(log);
		return NULL;
	}
	return log;
}

void log_readiness_free(struct log_readiness *log)
{
	if (!log)
		return;
	if (log->loop)
		loop_timer_cancel(log->loop, &log->resume);
	line_pattern_free(log->ready);
	line_pattern_free(log->not_ready);
	free(log->pending);
	free(log);
}

void log_readiness_forget(struct log_readiness *log)
{
	if (log->loop)
		loop_timer_cancel(log->loop, &log->resume);
	log->pending_start = log->pending_end = 0;
}

bool log_readiness_behind(const struct log_readiness *log)
{
	return log->pending_start < log->pending_end;
}

static int64_t monotonic_ns(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static void hear(struct task *task, const char *line, size_t length, bool ready)
{
	char quoted[QUOTED_LINE_MAX + 16];
	snprintf(quoted, sizeof(quoted), "line \"%.*s%s\"",
		 (int)(length < QUOTED_LINE_MAX ? length : QUOTED_LINE_MAX), line,
		 length > QUOTED_LINE_MAX ? "..." : "");
	if (ready)
		runner_not_ready(&task->runner, quoted);
	else
		runner_ready(&task->runner, quoted);
}

/* Matches the lines of `text` until LOG_MATCH_BUDGET_NS is spent; the
 * bytes of the whole lines it went through. Each line costs time linear
 * in its length (config/text/line_pattern.h), so a turn overruns the budget by
 * one line's cost at most. */
static size_t match_within_budget(struct task *task, const char *text, size_t length)
{
	const struct log_readiness *log = task->readiness.probes->log;
	struct output_batch view = {.text = text, .length = length};
	const char *cursor = text, *line;
	size_t line_length;
	int64_t deadline = monotonic_ns() + LOG_MATCH_BUDGET_NS;
	while ((line = output_batch_next_line(&view, &cursor, &line_length))) {
		bool ready = runner_is_ready_now(&task->runner);
		if (ready && !log->not_ready)
			return length; /* nothing to hear until the next run */
		if (line_pattern_matches(ready ? log->not_ready : log->ready, line, line_length))
			hear(task, line, line_length, ready);
		if (cursor < text + length && monotonic_ns() >= deadline)
			break;
	}
	return (size_t)(cursor - text);
}

static void keep_pending(struct log_readiness *log, const char *text, size_t length)
{
	if (log->pending_start == log->pending_end)
		log->pending_start = log->pending_end = 0;
	if (log->pending_start > 0) { /* what was matched goes */
		memmove(log->pending, log->pending + log->pending_start,
			log->pending_end - log->pending_start);
		log->pending_end -= log->pending_start;
		log->pending_start = 0;
	}
	if (log->pending_end + length > log->pending_capacity) {
		log->pending_capacity = log->pending_end + length;
		log->pending = xreallocarray(log->pending, log->pending_capacity, 1);
	}
	memcpy(log->pending + log->pending_end, text, length);
	log->pending_end += length;
}

/* Lines wait: the rest goes on at the next turn, and the task's pipes
 * are not read meanwhile. Said once a while, with the task. */
static void fall_behind(struct task *task, struct log_readiness *log)
{
	log->loop = task->services->loop;
	log->resume.data = task;
	loop_timer_arm(log->loop, &log->resume, loop_now_ms());
	uint64_t now = loop_now_ms();
	if (log->said_ms && now - log->said_ms < BEHIND_REPORT_MS)
		return;
	log->said_ms = now;
	log_message(
	    "%s: readiness.log: its pattern takes more than %d ms of corral's loop for a "
	    "read of the task's output; the rest is matched at the next turns, and the task's "
	    "output is read only as fast as it is matched (the task waits)",
	    task->config->full_name, LOG_MATCH_BUDGET_NS / 1000000);
}

static void match_pending(struct task *task, struct log_readiness *log)
{
	log->pending_start += match_within_budget(task, log->pending + log->pending_start,
						  log->pending_end - log->pending_start);
	if (log_readiness_behind(log))
		fall_behind(task, log);
}

static void on_resume(struct loop_timer *timer)
{
	struct task *task = timer->data;
	match_pending(task, task->readiness.probes->log);
}

static void take_lines(void *sink, struct output_batch *batch)
{
	struct task *task = sink;
	struct log_readiness *log = task->readiness.probes->log;
	if (log_readiness_behind(log)) {
		/* Read before the reader saw it behind: after what waits. */
		keep_pending(log, batch->text, batch->length);
		match_pending(task, log);
		return;
	}
	size_t matched = match_within_budget(task, batch->text, batch->length);
	if (matched < batch->length) {
		keep_pending(log, batch->text + matched, batch->length - matched);
		fall_behind(task, log);
	}
}

const struct output_sink_ops log_readiness_sink_ops = {.lines = take_lines};
