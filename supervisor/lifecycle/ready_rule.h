/* Is a task up and ready? One rule for all that ask: `corral status
 * --ready` (over a status reply's fields, supervisor/control/status_ready.c),
 * and, over a running task's (supervisor/tasks/task_ready.c, the values the
 * status reply is written from), GET /readyz (supervisor/http/) and the
 * READY=1 corral sends its own parent (supervisor/parent/). Pure. */
#pragma once

#include <stdbool.h>

/* The state a status shows (task_schedule_shown_state). */
enum ready_rule_state {
	READY_RULE_PENDING,
	READY_RULE_STARTING,
	READY_RULE_RUNNING,
	READY_RULE_STOPPING,
	READY_RULE_DEAD,
	READY_RULE_WAITING, /* a scheduled task between its runs */
	READY_RULE_UNKNOWN, /* a reply from another version, say */
};

/* "pending", "starting", ...; READY_RULE_UNKNOWN for anything else. */
enum ready_rule_state ready_rule_state_parse(const char *name);

struct ready_rule_facts {
	bool stays_up; /* a main task or a sidecar: the ones asked */
	enum ready_rule_state state;
	bool ready;      /* ready now, and not being stopped */
	bool ready_lost; /* readiness.continuous: ready once in this run, not now */
	bool failed;     /* failed for good */
	/* Of the last exit, false when it never exited. */
	bool last_exit_failed;
	bool last_exit_requested; /* corral stopped it: a stop, a restart */
	bool restart_pending;     /* a restart delay runs */
	/* An instance of a set that a rolling restart goes through, while
	 * the set keeps its min_ready instances ready (instance_roll.h):
	 * the set serves, so this one's readiness is not asked. */
	bool roll_covered;
};

enum ready_verdict {
	READY_VERDICT_NOT_ASKED, /* ephemeral and poststop tasks */
	/* Dead without having failed, and not waiting to be started again:
	 * a one-shot that completed, a scheduled task between its runs, a
	 * task never started (autostart: false). Neither ready nor not. */
	READY_VERDICT_AT_REST,
	READY_VERDICT_READY,
	READY_VERDICT_NOT_READY,
	/* Not ready, but its instance set is, during a rolling restart
	 * (roll_covered): counted as ready, as a Deployment stays Available
	 * while its replicas - maxUnavailable are. */
	READY_VERDICT_ROLLING,
};

enum ready_verdict ready_rule_verdict(const struct ready_rule_facts *facts);
