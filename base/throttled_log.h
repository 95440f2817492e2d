/* A log_throttle (log_throttle.h) with the loop timer that says its
 * summaries when their interval ends: what the control socket, the HTTP
 * endpoint and the signal handling each use for their refusals. The timer
 * is armed only while something is held back: an idle corral makes no
 * wakeup for it. */
#pragma once

#include <stdbool.h>

#include "base/log_throttle.h"
#include "base/loop.h"

struct throttled_log {
	struct log_throttle throttle;
	struct loop_timer timer;
	struct loop *loop;
	const char *refused; /* "control socket: refused" */
	const char *what;    /* "connection" */
};

/* Ready to use before `loop` exists; throttled_log_start gives it. Its
 * summaries read "REFUSED N more WHATs from SOURCE in the last 10 s:
 * REASON"; both strings live as long as `log`. */
void throttled_log_init(struct throttled_log *log, uint64_t interval_ms, const char *refused,
			const char *what);
void throttled_log_start(struct throttled_log *log, struct loop *loop);

/* true: say this one now, in full; false: counted into `source`'s summary. */
bool throttled_log_note(struct throttled_log *log, const char *source, const char *reason);

/* Says what is held back, and disarms the timer (at close). */
void throttled_log_stop(struct throttled_log *log);
