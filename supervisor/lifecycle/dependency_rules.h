/* The decisions of the dependency graph (config `after:`), pure: task
 * states in, verdicts and orders out. No fds, no clock, no allocation but
 * the caller's arrays. supervisor/tasks/task_dependencies.c applies them to
 * running tasks. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "supervisor/lifecycle/runner.h"

/* What a dependency's condition needs to know of its target. */
struct dependency_target {
	enum task_state state;
	bool stopping;      /* running, and a stop of it is under way */
	bool ready;         /* running, and its readiness passed */
	bool healthy;       /* running, and its health probe passed since the start */
	bool succeeded;     /* dead after an exit that counts as success */
	bool failed;        /* dead, failed for good */
	bool may_run_again; /* its group is active: a start request can revive it */
};

enum dependency_verdict {
	DEPENDENCY_HOLDS,
	DEPENDENCY_WAITS,  /* not now; it may hold later */
	DEPENDENCY_BROKEN, /* it can never hold: the dependent must not start */
};

/* Whether `condition` holds for `target`:
 * - started: running, or dead after a run that succeeded;
 * - ready: running and ready, or dead after a run that succeeded (a
 *   one-shot was ready while it ran);
 * - healthy: running, and its health probe passed since this run began;
 * - completed: dead after a run that succeeded;
 * - exited: dead, whatever ended it.
 * A target being stopped is not started, ready nor healthy any more.
 * A target that failed for good breaks every condition but exited; a dead
 * one that cannot run again breaks what it did not reach. */
enum dependency_verdict dependency_verdict(enum dependency_condition condition,
					   const struct dependency_target *target);

/* Stop tiers of one group, lowest first (today's order without
 * dependencies): main and one-shot tasks, then poststart sidecars, then
 * prestart sidecars. Poststop tasks are never stopped by a tier. */
enum { STOP_TIER_COUNT = 3, STOP_TIER_NONE = 3 };
unsigned dependency_stop_tier(enum lifecycle_stage stage);

/* One edge: task `from` waits for task `to` (numbers of the caller's). */
struct dependency_edge {
	size_t from;
	size_t to;
};

/* A stop order of `count` tasks, as a position per task: every task comes
 * before the tasks it waits for (the graph reversed), and otherwise the
 * lower tier first, then the lower number. The graph must have no cycle
 * (the loader refuses them); `position` gets 0..count-1. `scratch` holds
 * 3 * count + 1 + edge_count numbers. */
void dependency_stop_order(size_t count, const unsigned *tier, const struct dependency_edge *edges,
			   size_t edge_count, size_t *scratch, size_t *position);
