#include "base/throttled_log.h"

#include <string.h>

#include "base/log.h"

static void on_timer(struct loop_timer *timer)
{
	struct throttled_log *log = timer->data;
	uint64_t next = log_throttle_flush(&log->throttle, loop_now_ms());
	if (next)
		loop_timer_arm(log->loop, &log->timer, next);
}

static void say_summary(void *context, const char *source, uint64_t count, const char *reason)
{
	struct throttled_log *log = context;
	char interval[32];
	log_throttle_describe_interval(&log->throttle, interval, sizeof(interval));
	log_message("%s %llu more %s%s from %s in the last %s: %s", log->refused,
		    (unsigned long long)count, log->what, count == 1 ? "" : "s", source, interval,
		    reason);
}

void throttled_log_init(struct throttled_log *log, uint64_t interval_ms, const char *refused,
			const char *what)
{
	memset(log, 0, sizeof(*log));
	log->refused = refused;
	log->what = what;
	log_throttle_init(&log->throttle, interval_ms, say_summary, log);
	loop_timer_init(&log->timer, on_timer, log);
}

void throttled_log_start(struct throttled_log *log, struct loop *loop)
{
	log->loop = loop;
}

bool throttled_log_note(struct throttled_log *log, const char *source, const char *reason)
{
	uint64_t now = loop_now_ms();
	if (log_throttle_note(&log->throttle, source, reason, now))
		return true;
	if (log->loop && !loop_timer_armed(&log->timer))
		loop_timer_arm(log->loop, &log->timer, log_throttle_flush(&log->throttle, now));
	return false;
}

void throttled_log_stop(struct throttled_log *log)
{
	/* Far past every interval: whatever is held back is said now. */
	log_throttle_flush(&log->throttle, UINT64_MAX / 2);
	if (log->loop)
		loop_timer_cancel(log->loop, &log->timer);
}
