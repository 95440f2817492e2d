/* Decides what happens after a task exits: restart now, after a delay, or
 * give up. Pure logic, the clock passed in (milliseconds, monotonic).
 *
 * Semantics follow Nomad's restart tracker: `attempts` restarts are allowed
 * within a window of `interval` that opens at the first restart; once they
 * are spent, mode fail gives up and mode delay waits for the window to end.
 * On top of Nomad, the delay doubles with every restart of the window, from
 * `delay` up to `max_delay` (no jitter, so behaviour is reproducible). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config/model/config.h"

struct restart_tracker {
	uint64_t window_start_ms; /* when the current interval opened */
	unsigned restarts;        /* restarts charged within it */
	bool window_open;
};

enum restart_verdict {
	RESTART_VERDICT_RESTART,    /* run again after delay_ms (may be 0) */
	RESTART_VERDICT_NO_RESTART, /* the policy does not restart this exit: done */
	RESTART_VERDICT_GIVE_UP,    /* attempts spent: the task failed for good */
};

struct restart_decision {
	enum restart_verdict verdict;
	uint64_t delay_ms;
	/* The restart being charged, counted from 1 within the window, and the
	 * limit, for messages like "restart 2 of 3". */
	unsigned attempt;
	unsigned attempts;
	const char *reason; /* static text: "policy never", "attempts spent", ... */
};

void restart_tracker_init(struct restart_tracker *tracker);

/* An exit happened at now_ms; `failed` is true for a non-zero exit, a
 * signal, or a start that failed. Charges the restart when one is decided. */
struct restart_decision restart_tracker_decide(struct restart_tracker *tracker,
					       const struct restart_policy *policy, bool failed,
					       uint64_t now_ms);

/* Forget the history, e.g. when the whole group is restarted on request. */
void restart_tracker_reset(struct restart_tracker *tracker);
