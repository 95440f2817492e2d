/* The reply to a `status` request (docs/control-protocol.md#status),
 * written as JSON text straight from the running groups: with 1000 tasks
 * a jansson tree of it took 25000 nodes to build, dump and free. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervisor/control/control_scope.h"
#include "supervisor/tasks/group.h"

struct status_reply {
	/* A reply about one task serves a reading at most
	 * TASK_USAGE_FRESH_MS old, or reads one now; a reply about many
	 * serves the cached readings, however old (task_usage.h)... */
	bool recent_usage;
	/* ...and says here that some were missing or stale: the caller has
	 * them read once the reply is out. */
	bool stale_usage;
	/* What this reply may still read of the tasks without any reading
	 * (TASK_USAGE_FIRST_READS_MAX); set at the start of each reply. */
	size_t first_reads_left;
	/* The last reply's length: the next one's buffer starts that big. */
	size_t size_hint;
};

/* corral itself, the reply's "corral" object: the process that runs the
 * loop is the caller. */
struct status_self {
	uint64_t started_wall_ms; /* since the epoch */
	uint64_t upgrades, restores;
};

/* {"ok": true, "corral": {...}, "groups": [...]} of the tasks in `scope`,
 * as one line with its newline, in a buffer of `capacity` bytes; the
 * caller frees it. */
char *status_reply_line(struct status_reply *reply, const struct status_self *self,
			struct group *const *groups, size_t group_count,
			const struct control_scope *scope, uint64_t now_ms, size_t *length,
			size_t *capacity);
