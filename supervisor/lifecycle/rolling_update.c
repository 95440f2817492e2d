#include "supervisor/lifecycle/rolling_update.h"

#include <stdint.h>

const char *roll_phase_name(enum roll_phase phase)
{
	static const char *const names[] = {
	    [ROLL_WAITING] = "waiting",   [ROLL_REPLACING] = "replacing",
	    [ROLL_REPLACED] = "replaced", [ROLL_SKIPPED] = "skipped",
	    [ROLL_FAILED] = "failed",     [ROLL_LEFT] = "left",
	};
	return (unsigned)phase < sizeof(names) / sizeof(names[0]) ? names[phase] : "unknown";
}

enum roll_seen roll_observe(const struct runner *runner, unsigned restarts_before)
{
	/* The new run ended and runs again: it failed and its policy tries
	 * again, or someone restarted it (a watch, corral restart). */
	if (runner->restart_count > restarts_before + 1)
		return runner->last_exit_requested ? ROLL_SEEN_GONE : ROLL_SEEN_FAILED;
	bool new_run = runner->restart_count == restarts_before + 1;
	switch (runner->stop_intent) {
	case RUNNER_STOP_NONE:
	case RUNNER_STOP_RESTART: /* the roll's own stop of the old run */
		break;
	case RUNNER_STOP_NOT_READY:
		return new_run ? ROLL_SEEN_FAILED : ROLL_SEEN_GONE;
	default: /* stopped for good, or by its group or a dependency */
		return ROLL_SEEN_GONE;
	}
	if (runner->state == TASK_DEAD)
		/* Dead after its new run, which nobody stopped: it ended on
		 * its own (failed, or done for its policy) and is not up. */
		return new_run && !runner->last_exit_requested ? ROLL_SEEN_FAILED : ROLL_SEEN_GONE;
	if (new_run && runner->stop_intent == RUNNER_STOP_NONE && runner_is_ready(runner))
		return ROLL_SEEN_READY;
	return ROLL_SEEN_NOTHING;
}

size_t roll_next(const enum roll_phase *phases, size_t count, unsigned max_unavailable)
{
	size_t replacing = 0, waiting = SIZE_MAX;
	for (size_t i = 0; i < count; i++) {
		if (phases[i] == ROLL_FAILED)
			return SIZE_MAX;
		replacing += phases[i] == ROLL_REPLACING;
		if (phases[i] == ROLL_WAITING && waiting == SIZE_MAX)
			waiting = i;
	}
	return replacing < max_unavailable ? waiting : SIZE_MAX;
}

enum roll_outcome roll_outcome_of(const enum roll_phase *phases, size_t count)
{
	bool going = false;
	for (size_t i = 0; i < count; i++) {
		if (phases[i] == ROLL_FAILED)
			return ROLL_STOPPED;
		going |= phases[i] == ROLL_WAITING || phases[i] == ROLL_REPLACING;
	}
	return going ? ROLL_GOING : ROLL_DONE;
}

void roll_stop_at(enum roll_phase *phases, size_t count, size_t failed)
{
	phases[failed] = ROLL_FAILED;
	for (size_t i = 0; i < count; i++)
		if (phases[i] == ROLL_WAITING)
			phases[i] = ROLL_LEFT;
}

unsigned roll_min_ready(size_t count, unsigned max_unavailable, bool configured_set,
			unsigned configured)
{
	if (configured_set)
		return configured;
	return count > max_unavailable ? (unsigned)(count - max_unavailable) : 1;
}
