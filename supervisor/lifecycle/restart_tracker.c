/* The restart decision after a task exits: Nomad's restart tracker
 * (client/allocrunner/taskrunner/restarts/restarts.go) with an exponential
 * backoff instead of jitter.
 *
 * Over the limit, both give-up and the delayed restart of mode delay report
 * attempt = attempts + 1: the restart that the window did not allow. */
#include "supervisor/lifecycle/restart_tracker.h"

#include <limits.h>

#define REASON_POLICY_NEVER         "policy never"
#define REASON_EXITED_SUCCESSFULLY  "exited successfully"
#define REASON_WITHIN_POLICY        "within policy"
#define REASON_ATTEMPTS_SPENT       "attempts spent"
#define REASON_WAITING_FOR_INTERVAL "attempts spent, waiting for interval end"

void restart_tracker_init(struct restart_tracker *tracker)
{
	*tracker = (struct restart_tracker){0};
}

void restart_tracker_reset(struct restart_tracker *tracker)
{
	restart_tracker_init(tracker);
}

static struct restart_decision no_restart(const struct restart_policy *policy, const char *reason)
{
	return (struct restart_decision){
	    .verdict = RESTART_VERDICT_NO_RESTART,
	    .attempts = policy->attempts,
	    .reason = reason,
	};
}

/* Written as elapsed >= interval rather than now >= start + interval, which
 * would overflow for a huge interval. A clock behind the window start (it is
 * monotonic, so only through a caller bug) counts as no time elapsed. */
static bool window_expired(const struct restart_tracker *tracker, uint64_t interval_ms,
			   uint64_t now_ms)
{
	if (now_ms < tracker->window_start_ms)
		return false;
	return now_ms - tracker->window_start_ms >= interval_ms;
}

static uint64_t window_time_left(const struct restart_tracker *tracker, uint64_t interval_ms,
				 uint64_t now_ms)
{
	uint64_t elapsed =
	    now_ms > tracker->window_start_ms ? now_ms - tracker->window_start_ms : 0;

	return elapsed < interval_ms ? interval_ms - elapsed : 0;
}

static void open_window(struct restart_tracker *tracker, uint64_t now_ms)
{
	tracker->window_open = true;
	tracker->window_start_ms = now_ms;
	tracker->restarts = 0;
}

/* Saturates, so that a task that keeps exiting after its last restart can
 * never wrap the count back to "within policy". */
static unsigned charge_restart(struct restart_tracker *tracker)
{
	if (tracker->restarts < UINT_MAX)
		tracker->restarts++;
	return tracker->restarts;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* delay << doublings, capped. The cap is tested before shifting so that no
 * value, however large, overflows. A cap below the base delay (which
 * validation refuses) is read as the base delay. */
static uint64_t backoff_delay(const struct restart_policy *policy, unsigned doublings)
{
	uint64_t base = policy->delay_ms;
	uint64_t cap = max_u64(policy->max_delay_ms, base);

	if (base == 0)
		return 0;
	if (doublings >= 64 || base > (cap >> doublings))
		return cap;
	return base << doublings;
}

/* NULL when the policy restarts this exit. Unknown kinds restart nothing. */
static const char *reason_not_to_restart(const struct restart_policy *policy, bool failed)
{
	switch (policy->policy) {
	case RESTART_ALWAYS:
		return NULL;
	case RESTART_ON_FAILURE:
		return failed ? NULL : REASON_EXITED_SUCCESSFULLY;
	case RESTART_NEVER:
		break;
	}
	return REASON_POLICY_NEVER;
}

/* Attempts are spent for this window. Mode delay waits until the window
 * ends, and closes it: the exit after that restart opens a fresh window, so
 * counting starts again from then rather than from the old window's end. */
static struct restart_decision over_the_limit(struct restart_tracker *tracker,
					      const struct restart_policy *policy, unsigned attempt,
					      uint64_t now_ms)
{
	struct restart_decision decision = {
	    .attempt = attempt,
	    .attempts = policy->attempts,
	};

	if (policy->mode != RESTART_MODE_DELAY) {
		decision.verdict = RESTART_VERDICT_GIVE_UP;
		decision.reason = REASON_ATTEMPTS_SPENT;
		return decision;
	}

	decision.verdict = RESTART_VERDICT_RESTART;
	decision.reason = REASON_WAITING_FOR_INTERVAL;
	decision.delay_ms =
	    max_u64(window_time_left(tracker, policy->interval_ms, now_ms), policy->delay_ms);
	tracker->window_open = false;
	tracker->restarts = 0;
	return decision;
}

struct restart_decision restart_tracker_decide(struct restart_tracker *tracker,
					       const struct restart_policy *policy, bool failed,
					       uint64_t now_ms)
{
	const char *refusal = reason_not_to_restart(policy, failed);

	if (refusal)
		return no_restart(policy, refusal);

	if (!tracker->window_open || window_expired(tracker, policy->interval_ms, now_ms))
		open_window(tracker, now_ms);

	unsigned attempt = charge_restart(tracker);

	if (policy->attempts != RESTART_ATTEMPTS_UNLIMITED && attempt > policy->attempts)
		return over_the_limit(tracker, policy, attempt, now_ms);

	return (struct restart_decision){
	    .verdict = RESTART_VERDICT_RESTART,
	    .delay_ms = backoff_delay(policy, attempt - 1),
	    .attempt = attempt,
	    .attempts = policy->attempts,
	    .reason = REASON_WITHIN_POLICY,
	};
}
