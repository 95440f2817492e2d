/* The rules of a rolling restart (rolling_update.h): which instance is
 * replaced next, when the roll is over or stops, and what a runner being
 * replaced shows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "supervisor/lifecycle/rolling_update.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void test_one_at_a_time_in_instance_order(void **state)
{
	(void)state;
	enum roll_phase phases[] = {ROLL_WAITING, ROLL_WAITING, ROLL_WAITING};
	assert_int_equal(roll_next(phases, 3, 1), 0);
	phases[0] = ROLL_REPLACING;
	assert_int_equal(roll_next(phases, 3, 1), SIZE_MAX); /* the first is not ready yet */
	assert_int_equal(roll_outcome_of(phases, 3), ROLL_GOING);
	phases[0] = ROLL_REPLACED;
	assert_int_equal(roll_next(phases, 3, 1), 1);
	phases[1] = ROLL_SKIPPED; /* was not running when its turn came */
	assert_int_equal(roll_next(phases, 3, 1), 2);
	phases[2] = ROLL_REPLACED;
	assert_int_equal(roll_next(phases, 3, 1), SIZE_MAX);
	assert_int_equal(roll_outcome_of(phases, 3), ROLL_DONE);
}

static void test_max_unavailable_replaces_several_at_once(void **state)
{
	(void)state;
	enum roll_phase phases[] = {ROLL_REPLACING, ROLL_WAITING, ROLL_WAITING, ROLL_WAITING};
	assert_int_equal(roll_next(phases, COUNT(phases), 2), 1);
	phases[1] = ROLL_REPLACING;
	assert_int_equal(roll_next(phases, COUNT(phases), 2), SIZE_MAX);
	phases[1] = ROLL_REPLACED; /* the second may finish first */
	assert_int_equal(roll_next(phases, COUNT(phases), 2), 2);
}

static void test_a_failure_stops_the_roll_and_leaves_the_rest(void **state)
{
	(void)state;
	enum roll_phase phases[] = {ROLL_REPLACED, ROLL_REPLACING, ROLL_REPLACING, ROLL_WAITING,
				    ROLL_WAITING};
	roll_stop_at(phases, COUNT(phases), 1);
	assert_int_equal(phases[1], ROLL_FAILED);
	assert_int_equal(phases[2], ROLL_REPLACING); /* under way: it goes on by itself */
	assert_int_equal(phases[3], ROLL_LEFT);
	assert_int_equal(phases[4], ROLL_LEFT);
	assert_int_equal(roll_next(phases, COUNT(phases), 5), SIZE_MAX);
	assert_int_equal(roll_outcome_of(phases, COUNT(phases)), ROLL_STOPPED);
	assert_string_equal(roll_phase_name(ROLL_LEFT), "left");
}

/* A runner as the roll finds it `restarts` restarts after it asked. */
static struct runner runner_in(enum task_state state, enum runner_stop_intent intent,
			       unsigned restarts)
{
	struct runner runner = {.state = state, .stop_intent = intent};
	runner.restart_count = 5 + restarts;
	return runner;
}

static void test_what_a_runner_being_replaced_shows(void **state)
{
	(void)state;
	/* The old run is being stopped: nothing yet. */
	struct runner runner = runner_in(TASK_RUNNING, RUNNER_STOP_RESTART, 0);
	runner.readiness = RUNNER_READY;
	assert_int_equal(roll_observe(&runner, 5), ROLL_SEEN_NOTHING);
	/* The new run, not ready yet, then ready. */
	runner = runner_in(TASK_RUNNING, RUNNER_STOP_NONE, 1);
	assert_int_equal(roll_observe(&runner, 5), ROLL_SEEN_NOTHING);
	runner.readiness = RUNNER_READY;
	assert_int_equal(roll_observe(&runner, 5), ROLL_SEEN_READY);
	/* Not ready within its readiness timeout: stopped for it. */
	runner = runner_in(TASK_RUNNING, RUNNER_STOP_NOT_READY, 1);
	assert_int_equal(roll_observe(&runner, 5), ROLL_SEEN_FAILED);
	/* Exited, and its policy restarts it: a second restart. */
	runner = runner_in(TASK_PENDING, RUNNER_STOP_NONE, 2);
	assert_int_equal(roll_observe(&runner, 5), ROLL_SEEN_FAILED);
	/* Restarted by someone else (a watch, corral restart): not its failure. */
	runner = runner_in(TASK_PENDING, RUNNER_STOP_NONE, 2);
	runner.last_exit_requested = true;
	assert_int_equal(roll_observe(&runner, 5), ROLL_SEEN_GONE);
	/* Exited, and its policy gave up, or it was done. */
	runner = runner_in(TASK_DEAD, RUNNER_STOP_NONE, 1);
	assert_int_equal(roll_observe(&runner, 5), ROLL_SEEN_FAILED);
	/* `corral stop` meanwhile, of the old run or of the new. */
	runner = runner_in(TASK_RUNNING, RUNNER_STOP_FOR_GOOD, 0);
	assert_int_equal(roll_observe(&runner, 5), ROLL_SEEN_GONE);
	runner = runner_in(TASK_DEAD, RUNNER_STOP_NONE, 0);
	runner.last_exit_requested = true;
	assert_int_equal(roll_observe(&runner, 5), ROLL_SEEN_GONE);
	runner = runner_in(TASK_DEAD, RUNNER_STOP_NONE, 1);
	runner.last_exit_requested = true;
	assert_int_equal(roll_observe(&runner, 5), ROLL_SEEN_GONE);
}

/* What a set keeps ready during a roll: all but max_unavailable, at
 * least one; update.min_ready when written, even 0 or above the count. */
static void test_min_ready_of_a_roll(void **state)
{
	(void)state;
	assert_int_equal(roll_min_ready(4, 1, false, 0), 3);
	assert_int_equal(roll_min_ready(4, 2, false, 0), 2);
	assert_int_equal(roll_min_ready(4, 4, false, 0), 1);
	assert_int_equal(roll_min_ready(1, 1, false, 0), 1);
	assert_int_equal(roll_min_ready(4, 1, true, 0), 0);
	assert_int_equal(roll_min_ready(4, 1, true, 5), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_at_a_time_in_instance_order),
	    cmocka_unit_test(test_max_unavailable_replaces_several_at_once),
	    cmocka_unit_test(test_a_failure_stops_the_roll_and_leaves_the_rest),
	    cmocka_unit_test(test_what_a_runner_being_replaced_shows),
	    cmocka_unit_test(test_min_ready_of_a_roll),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
