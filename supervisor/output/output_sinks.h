/* Where a task's lines go: one list of sinks, each behind the same small
 * interface, handed each batch of lines in turn (output_batch.h).
 *
 * The first sink paces the others: it is corral's stdout (output_sink.h),
 * the only one that can be full. It takes what it has room for and cuts
 * the batch to that; the sinks after it (the ring kept for `corral logs`,
 * the log file, the followers of `corral logs -f`) get the lines stdout
 * took, in the order it took them, and never refuse any. What stdout
 * could not take waits in the task's reader (task_output.h), or, under
 * log.mode: non-blocking, is dropped from stdout only: the reader hands
 * it to the sinks after the first (output_sinks_lines_after_first). */
#pragma once

#include <stddef.h>

#include "supervisor/output/output_batch.h"

struct output_sink_ops {
	/* Takes the lines of `batch`. The first sink counts them (sets
	 * `lines`, output_batch.h), and if it can be full, cuts `batch`
	 * (length, lines) to the lines it took; the others take them all. */
	void (*lines)(void *sink, struct output_batch *batch);
};

/* A task's ring, file, stdout and followers: four at most. */
#define OUTPUT_SINKS_MAX 4

struct output_sinks {
	struct {
		const struct output_sink_ops *ops;
		void *sink;
	} list[OUTPUT_SINKS_MAX];
	size_t count;
};

static inline void output_sinks_clear(struct output_sinks *sinks)
{
	sinks->count = 0;
}

/* Appends a sink; the first one added paces the others. */
void output_sinks_add(struct output_sinks *sinks, const struct output_sink_ops *ops, void *sink);

/* Hands `batch` to every sink in turn; on return it holds what the first
 * one took (it may have cut it). */
void output_sinks_lines(const struct output_sinks *sinks, struct output_batch *batch);

/* A batch the first sink refused, for the others only (log.mode:
 * non-blocking drops a line from stdout, not from the log). */
void output_sinks_lines_after_first(const struct output_sinks *sinks, struct output_batch *batch);
