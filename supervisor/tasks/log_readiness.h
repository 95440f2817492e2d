/* readiness.log: a task is ready when a line of its output matches a
 * pattern (process-compose's ready_log_line, for the databases and JVMs
 * that print "ready to accept connections" and open no port to probe
 * before they are). With `continuous`, a line matching `not_ready` makes
 * a ready task not ready until the next ready line (a replica that lost
 * its primary says so in its log). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "base/loop.h"
#include "config/model/config.h"
#include "config/text/line_pattern.h"
#include "supervisor/output/output_sinks.h"

struct log_readiness {
	struct line_pattern *ready;
	struct line_pattern *not_ready; /* NULL without `not_ready` */
	/* Lines read and not matched yet: a batch takes at most
	 * LOG_MATCH_BUDGET_NS of a loop turn, the rest waits here for the
	 * next turn (`resume`), and while it does the task's pipes are not
	 * read (log_readiness_behind): the task waits, as for a full stdout. */
	char *pending;
	size_t pending_start, pending_end, pending_capacity;
	struct loop_timer resume;
	struct loop *loop; /* where `resume` is armed */
	uint64_t said_ms;  /* when falling behind was last said */
};

/* Matching time a batch (or a resumed turn) may take before the rest of
 * its lines wait for the next turn. */
#define LOG_MATCH_BUDGET_NS 2000000

/* The patterns of `config` compiled (the loader checked them): NULL only
 * when the library cannot (out of memory), said in `error`. */
struct log_readiness *log_readiness_make(const struct readiness_config *config, char *error,
					 size_t error_size);
void log_readiness_free(struct log_readiness *log);

/* A new run: lines of the last one still waiting are not heard. */
void log_readiness_forget(struct log_readiness *log);

/* Whether lines wait to be matched: the task's readers read no more of
 * its pipes until they are (task.c's output_sinks `behind`). */
bool log_readiness_behind(const struct log_readiness *log);

/* A sink of the task's lines (output_sinks.h) whose object is the task:
 * it reads them and says ready or not ready to the task's runner. */
extern const struct output_sink_ops log_readiness_sink_ops;
