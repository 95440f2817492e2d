/* GET /metrics: the running groups and corral's own counters as the text
 * Prometheus scrapes, in OpenMetrics 1.0.0 (https://openmetrics.io) or
 * Prometheus' text format 0.0.4 (metrics_format.h). Written straight
 * from the groups into one buffer, as the status reply is; the families,
 * their labels and meanings are listed in docs/metrics.md.
 *
 * A scrape reads no cgroup file but, as a status of many tasks does, the
 * first TASK_USAGE_FIRST_READS_MAX of tasks that have no reading at all:
 * it serves each task's last usage reading (task_usage.h), and has the
 * missing and stale ones read after it (`usage_stale`), so that the next
 * scrape finds them fresh. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "supervisor/control/corral_counters.h"
#include "supervisor/metrics/metrics_format.h"
#include "supervisor/tasks/group.h"

struct metrics_source {
	struct group *const *groups;
	size_t group_count;
	const struct corral_counters *counters;
	enum metrics_format format; /* as the scraper's Accept header asks */
	/* The wall clock now and at corral's start, in milliseconds since
	 * the epoch: tasks' start times are told in it. wall_now_ms 0: read
	 * now. */
	uint64_t wall_now_ms;
	uint64_t started_wall_ms;
	/* corral's stdout (output_stdout.h): lines dropped once it was gone,
	 * and the bytes waiting for it now. */
	uint64_t output_dropped_lines;
	uint64_t output_buffered_bytes;
	uint64_t starts_put_off;       /* shortage_report.h's put_off_total */
	uint64_t longest_loop_turn_us; /* loop_longest_turn_us */
	/* Called once, before metrics_text returns, when a task's usage
	 * reading was missing or older than TASK_USAGE_REFRESH_MS: the caller
	 * has them read after the reply is out
	 * (control_commands_refresh_usage). NULL: nobody to tell. */
	void (*usage_stale)(void *context);
	void *context;
};

/* The exposition (OpenMetrics' ends in "# EOF\n"), in a buffer the
 * caller frees; its length in *length. `now_ms`: the loop's clock
 * (loop_now_ms), which runners' times are in. */
char *metrics_text(const struct metrics_source *source, uint64_t now_ms, size_t *length);
