/* Where a task's lines go: one list of sinks, each behind the same small
 * interface, handed each batch of lines in turn (output_batch.h).
 *
 * The first sink paces the others: it is corral's stdout (output_stdout.h),
 * the only one that can be full. It takes what it has room for and cuts
 * the batch to that; the sinks after it (the ring kept for `corral logs`,
 * the log file, the followers of `corral logs -f`) get the lines stdout
 * took, in the order it took them, and never refuse any. What stdout
 * could not take waits in the task's reader (task_output.h), or, under
 * log.mode: non-blocking, is dropped from stdout only: the reader hands
 * it to the sinks after the first (output_sinks_lines_after_first). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "supervisor/output/output_batch.h"

struct output_sink_ops {
	/* Takes the lines of `batch`. The first sink counts them (sets
	 * `lines`, output_batch.h), and if it can be full, cuts `batch`
	 * (length, lines) to the lines it took; the others take them all. */
	void (*lines)(void *sink, struct output_batch *batch);
};

/* The sinks of one stream of lines, in order: a task's are a list it keeps
 * (output_sink_list below), made again only when a sink comes or goes. */
struct output_sinks {
	/* Hands `batch` to the sinks from the `first`th on (0: every one),
	 * each after the one before, while it has lines. */
	void (*hand)(const struct output_sinks *sinks, size_t first, struct output_batch *batch);
	/* Optional: whether a sink still holds lines it has not taken in (a
	 * readiness.log pattern whose matching waits for the next loop turn,
	 * log_readiness.h). The reader reads no more while it does, and tries
	 * again at its next wake-up: the task waits, a turn stays short. */
	bool (*behind)(const struct output_sinks *sinks);
	/* Optional: what the reader keeps in memory between reads (a line
	 * cut across reads, bytes held for room in the sink) changed: corral's
	 * keeper records it, so that a restore neither loses nor doubles it. */
	void (*kept)(const struct output_sinks *sinks);
};

/* Hands `batch` to every sink in turn; on return it holds what the first
 * one took (it may have cut it). */
static inline void output_sinks_lines(const struct output_sinks *sinks, struct output_batch *batch)
{
	sinks->hand(sinks, 0, batch);
}

/* A batch the first sink refused, for the others only (log.mode:
 * non-blocking drops a line from stdout, not from the log). */
static inline void output_sinks_lines_after_first(const struct output_sinks *sinks,
						  struct output_batch *batch)
{
	sinks->hand(sinks, 1, batch);
}

/* A holder's sinks, `count` of them, from the `first`th: the walk every
 * `hand` makes. */
void output_sinks_hand_each(const struct output_sink_ops *const *ops, void *const *sinks,
			    size_t count, size_t first, struct output_batch *batch);

/* Sinks kept as a list: a task's (stdout, its ring, its log file, the
 * followers of `corral logs -f`, its readiness pattern; task.c). */
#define OUTPUT_SINK_LIST_MAX 5

struct output_sink_list {
	struct output_sinks sinks; /* what task_output_open takes: &list->sinks */
	const struct output_sink_ops *ops[OUTPUT_SINK_LIST_MAX];
	void *sink[OUTPUT_SINK_LIST_MAX];
	size_t count;
};

/* An empty list handing batches to its sinks; `behind` and `kept` as the
 * holder sets them after. */
void output_sink_list_init(struct output_sink_list *list);
/* Empties it, to be filled again (its callbacks stay). */
void output_sink_list_clear(struct output_sink_list *list);
/* Appends a sink; the first one added paces the others. */
void output_sink_list_add(struct output_sink_list *list, const struct output_sink_ops *ops,
			  void *sink);
