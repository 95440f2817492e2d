/* GET /metrics: the running groups and corral's own counters as
 * OpenMetrics text (https://openmetrics.io), which Prometheus scrapes.
 * Written straight from the groups, as the status reply is. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "supervisor/tasks/group.h"

/* Counters corral keeps over its whole run, whatever reloads do to its
 * groups. */
struct metrics_counters {
	uint64_t reloads_succeeded;
	uint64_t reloads_failed;
};

struct metrics_source {
	struct group *const *groups;
	size_t group_count;
	const struct metrics_counters *counters;
};

/* The exposition, ending in "# EOF\n", in a buffer the caller frees;
 * its length in *length. */
char *metrics_text(const struct metrics_source *source, uint64_t now_ms, size_t *length);
