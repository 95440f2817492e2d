/* A rolling restart of a task's instances (`corral restart --rolling`, or a
 * reload of a task with `update: {strategy: rolling}`): Kubernetes'
 * RollingUpdate with maxSurge 0, pm2's reload. The instances are replaced
 * in instance order, at most max_unavailable at a time, and the next old
 * one stops only once a new one is ready; a new one that never becomes
 * ready stops the roll, and the instances not reached keep their old
 * process.
 *
 * No surge: an instance is one name, one cgroup (GROUP/TASK@N), one
 * CORRAL_INSTANCE, which a program often turns into its port; a second
 * process of the same instance beside the first could not be told apart
 * from it, nor bind its port. So each step stops an old process and
 * starts its new one, and with max_unavailable below the number of
 * instances some always run (docs/cli.md, "corral restart --rolling").
 *
 * Pure: the runtime (supervisor/tasks/instance_roll.c) hands in what it
 * sees and does what is decided. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "supervisor/lifecycle/runner.h"

/* Where each instance of a roll is. */
enum roll_phase {
	ROLL_WAITING,   /* its turn has not come */
	ROLL_REPLACING, /* stopped and started again; its new run not ready yet */
	ROLL_REPLACED,  /* its new run is ready */
	ROLL_SKIPPED,   /* not running when its turn came: left as it was */
	ROLL_FAILED,    /* its new run never became ready: the roll stopped at it */
	ROLL_LEFT,      /* the roll stopped before its turn: its old process runs on */
};

/* "waiting", "replacing", ... as status shows them. */
const char *roll_phase_name(enum roll_phase phase);

/* What the runner of an instance being replaced shows. */
enum roll_seen {
	ROLL_SEEN_NOTHING, /* the old run still stops, or the new one is not ready yet */
	ROLL_SEEN_READY,   /* the new run is ready (started, without readiness:) */
	ROLL_SEEN_FAILED,  /* the new run failed: not ready in time, exited, did not start */
	ROLL_SEEN_GONE,    /* stopped by someone else meanwhile (a stop, its group) */
};

/* `restarts_before`: its restart_count when the roll restarted it; the
 * old run's end adds one, and the restart policy adds another when the
 * new run fails and is tried again. */
enum roll_seen roll_observe(const struct runner *runner, unsigned restarts_before);

/* The next instance to replace now, in instance order: the first waiting
 * one while fewer than `max_unavailable` are being replaced and the roll
 * has not stopped; SIZE_MAX for none. */
size_t roll_next(const enum roll_phase *phases, size_t count, unsigned max_unavailable);

enum roll_outcome {
	ROLL_GOING,
	ROLL_DONE,    /* every instance replaced (or skipped) */
	ROLL_STOPPED, /* an instance failed: nothing more is replaced */
};

enum roll_outcome roll_outcome_of(const enum roll_phase *phases, size_t count);

/* An instance being replaced failed (or was stopped by someone): the
 * roll stops there; the instances not reached are left with their old
 * process. */
void roll_stop_at(enum roll_phase *phases, size_t count, size_t failed);

/* How many of a rolled set's `count` instances must be ready for the set
 * to count as ready while the roll goes on (/readyz, `status --ready`,
 * READY=1; ready_rule.h): `update.min_ready` when written
 * (`configured_set`), else all but max_unavailable, and at least 1, since a
 * set with none ready serves nothing (a Deployment's minimum availability,
 * replicas - maxUnavailable). */
unsigned roll_min_ready(size_t count, unsigned max_unavailable, bool configured_set,
			unsigned configured);
