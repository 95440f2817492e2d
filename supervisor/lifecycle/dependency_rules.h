/* The decisions of the dependency graph (config `after:`), pure: task
 * states in, verdicts and orders out. No fds, no clock, no allocation but
 * the caller's arrays. supervisor/tasks/task_dependencies.c applies them to
 * running tasks. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/model/config.h"
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
	/* Of one wait only (dependency_wait_verdict): */
	DEPENDENCY_TIMED_OUT, /* not within its timeout: the dependent must not start */
	DEPENDENCY_WAIVED,    /* optional and not there: the dependent starts without it */
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

/* One pending dependent's wait on one dependency: the condition and what
 * an `after:` entry adds to it. */
struct dependency_wait {
	enum dependency_condition condition;
	bool optional;  /* compose's `required: false` */
	bool timed_out; /* its `timeout` has run out since the wait began */
};

/* The condition's verdict, then:
 * - required (the default): a wait that has timed out is TIMED_OUT, a
 *   broken one BROKEN, as compose's `up --wait` fails;
 * - optional: a target that is dead without holding (never started,
 *   failed, or done without reaching the condition), broken, or not
 *   there in time is WAIVED: the dependent goes ahead, as compose starts
 *   a service whose optional dependency did not start. A target on its
 *   way (pending, starting, running and not ready yet) is waited for. */
enum dependency_verdict dependency_wait_verdict(const struct dependency_wait *wait,
						const struct dependency_target *target);

/* Whether a verdict lets the dependent start. */
bool dependency_verdict_allows_start(enum dependency_verdict verdict);

/* The first moment after now_ms at which a wait that began at began_ms
 * with `timeout_ms` (0: none) runs out; 0 when none is ahead. */
uint64_t dependency_wait_deadline(uint64_t began_ms, uint64_t timeout_ms, uint64_t now_ms);

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
