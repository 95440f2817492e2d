/* The runner state machine, driven through fake effects that record what it
 * asks for: no processes, an explicit clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/lifecycle/runner.h"

#define MAX_EVENTS 32

struct fake {
	int spawn_result; /* what the next spawn returns */
	unsigned spawns;
	int last_signal;
	unsigned signals;
	unsigned kills;
	bool timer_armed[RUNNER_TIMER_COUNT];
	uint64_t timer_deadline[RUNNER_TIMER_COUNT];
	enum task_event_type events[MAX_EVENTS];
	char messages[MAX_EVENTS][256]; /* the runner's own are up to 512 */
	unsigned event_count;
	unsigned changes;
	bool hooks_wait[HOOK_STAGE_COUNT]; /* run_hooks answers true */
	unsigned hook_runs[HOOK_STAGE_COUNT];
	unsigned hook_cancels[HOOK_STAGE_COUNT];
	enum hook_stage hook_order[MAX_EVENTS];
	unsigned hook_order_count;
	unsigned resource_waits, first_resource_waits;
	unsigned waits_over, waits_over_started;
};

static struct fake *fake_of(struct runner *runner)
{
	return runner->context;
}

static int fake_spawn(struct runner *runner, char *message, size_t size)
{
	fake_of(runner)->spawns++;
	if (fake_of(runner)->spawn_result < 0)
		snprintf(message, size, "clone3: Resource temporarily unavailable");
	return fake_of(runner)->spawn_result;
}

static void fake_signal(struct runner *runner, int signal_number)
{
	fake_of(runner)->last_signal = signal_number;
	fake_of(runner)->signals++;
}

static void fake_kill_all(struct runner *runner)
{
	fake_of(runner)->kills++;
}

static void fake_arm(struct runner *runner, enum runner_timer timer, uint64_t deadline)
{
	fake_of(runner)->timer_armed[timer] = true;
	fake_of(runner)->timer_deadline[timer] = deadline;
}

static void fake_cancel(struct runner *runner, enum runner_timer timer)
{
	fake_of(runner)->timer_armed[timer] = false;
}

static void fake_event(struct runner *runner, enum task_event_type type, const char *message)
{
	struct fake *fake = fake_of(runner);
	assert_true(fake->event_count < MAX_EVENTS);
	fake->events[fake->event_count] = type;
	snprintf(fake->messages[fake->event_count], sizeof(fake->messages[0]), "%s", message);
	fake->event_count++;
}

static void fake_changed(struct runner *runner)
{
	fake_of(runner)->changes++;
}

static bool fake_run_hooks(struct runner *runner, enum hook_stage stage)
{
	struct fake *fake = fake_of(runner);
	fake->hook_runs[stage]++;
	assert_true(fake->hook_order_count < MAX_EVENTS);
	fake->hook_order[fake->hook_order_count++] = stage;
	return fake->hooks_wait[stage];
}

static void fake_cancel_hooks(struct runner *runner, enum hook_stage stage)
{
	fake_of(runner)->hook_cancels[stage]++;
}

static void fake_resource_wait(struct runner *runner, const char *reason, bool first,
			       uint64_t now_ms)
{
	fake_of(runner)->resource_waits++;
	fake_of(runner)->first_resource_waits += first;
	(void)reason;
	(void)now_ms;
}

static void fake_resource_wait_over(struct runner *runner, bool started)
{
	fake_of(runner)->waits_over++;
	fake_of(runner)->waits_over_started += started;
}

static const struct runner_effects fake_effects = {
    .spawn = fake_spawn,
    .signal = fake_signal,
    .kill_all = fake_kill_all,
    .arm_timer = fake_arm,
    .cancel_timer = fake_cancel,
    .event = fake_event,
    .changed = fake_changed,
    .run_hooks = fake_run_hooks,
    .cancel_hooks = fake_cancel_hooks,
    .resource_wait = fake_resource_wait,
    .resource_wait_over = fake_resource_wait_over,
};

struct fixture {
	struct task_config config;
	struct readiness_config readiness; /* config.readiness */
	struct fake fake;
	struct runner runner;
};

static struct fixture *fixture_new(enum restart_policy_kind policy, unsigned attempts,
				   uint64_t delay_ms)
{
	struct fixture *fixture = test_calloc(1, sizeof(*fixture));
	fixture->config.name = "app";
	fixture->config.readiness = &fixture->readiness;
	fixture->config.full_name = "web/app";
	fixture->config.stage = STAGE_MAIN;
	fixture->config.kill_signal = 15;
	fixture->config.kill_timeout_ms = 5000;
	fixture->config.restart = (struct restart_policy){
	    .policy = policy,
	    .attempts = attempts,
	    .interval_ms = 60000,
	    .delay_ms = delay_ms,
	    .max_delay_ms = delay_ms * 8,
	    .mode = RESTART_MODE_FAIL,
	};
	runner_init(&fixture->runner, &fixture->config, &fake_effects, &fixture->fake);
	return fixture;
}

static void fixture_free(struct fixture *fixture)
{
	runner_free(&fixture->runner);
	test_free(fixture);
}

static bool last_event_is(struct fixture *fixture, enum task_event_type type)
{
	return fixture->fake.event_count &&
	       fixture->fake.events[fixture->fake.event_count - 1] == type;
}

static const struct task_exit exit_code_1 = {.kind = TASK_EXIT_CODE, .code = 1};
static const struct task_exit exit_code_0 = {.kind = TASK_EXIT_CODE, .code = 0};
static const struct task_exit killed_by_9 = {.kind = TASK_EXIT_SIGNAL, .signal = 9};

static void run_to_running(struct fixture *fixture, uint64_t now)
{
	runner_start(&fixture->runner, now);
	assert_int_equal(fixture->runner.state, TASK_STARTING);
	runner_exec_succeeded(&fixture->runner, now);
	assert_int_equal(fixture->runner.state, TASK_RUNNING);
}

static void test_received_says_what_it_waits_for(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	runner_received(&fixture->runner);
	assert_true(last_event_is(fixture, TASK_EVENT_RECEIVED));
	assert_string_equal(
	    fixture->fake.messages[0],
	    "received: starts once its group's prestart tasks are done, if it has any");
	assert_int_equal(fixture->runner.state, TASK_PENDING);
	fixture_free(fixture);
}

static void test_start_then_running(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	assert_true(runner_ready_to_start(&fixture->runner));
	run_to_running(fixture, 1000);
	assert_int_equal(fixture->fake.spawns, 1);
	assert_true(last_event_is(fixture, TASK_EVENT_STARTED));
	assert_false(runner_ready_to_start(&fixture->runner));
	fixture_free(fixture);
}

static void test_failure_restarts_after_delay(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ON_FAILURE, 3, 100);
	run_to_running(fixture, 1000);
	runner_exited(&fixture->runner, &exit_code_1, 1200);
	assert_int_equal(fixture->runner.state, TASK_PENDING);
	assert_true(runner_waiting_out_delay(&fixture->runner));
	assert_false(runner_ready_to_start(&fixture->runner));
	assert_true(fixture->fake.timer_armed[RUNNER_TIMER_RESTART_DELAY]);
	assert_int_equal(fixture->fake.timer_deadline[RUNNER_TIMER_RESTART_DELAY], 1300);
	assert_true(last_event_is(fixture, TASK_EVENT_RESTARTING));
	assert_string_equal(fixture->fake.messages[fixture->fake.event_count - 1],
			    "restarting in 100ms (restart 1 of 3)");

	runner_timer_fired(&fixture->runner, RUNNER_TIMER_RESTART_DELAY, 1300);
	assert_true(runner_ready_to_start(&fixture->runner));
	assert_int_equal(fixture->runner.restart_count, 1);
	fixture_free(fixture);
}

static void test_backoff_then_give_up(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 2, 100);
	uint64_t now = 1000;
	uint64_t expected_delays[] = {100, 200};
	for (int run = 0; run < 2; run++) {
		run_to_running(fixture, now);
		runner_exited(&fixture->runner, &exit_code_1, now + 10);
		assert_int_equal(fixture->fake.timer_deadline[RUNNER_TIMER_RESTART_DELAY],
				 now + 10 + expected_delays[run]);
		now += 10 + expected_delays[run];
		runner_timer_fired(&fixture->runner, RUNNER_TIMER_RESTART_DELAY, now);
	}
	run_to_running(fixture, now);
	runner_exited(&fixture->runner, &exit_code_1, now + 10);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_true(fixture->runner.failed);
	assert_true(last_event_is(fixture, TASK_EVENT_NOT_RESTARTING));
	assert_non_null(
	    strstr(fixture->fake.messages[fixture->fake.event_count - 1], "failed for good"));
	assert_int_equal(runner_failure_exit_code(&fixture->runner), 1);
	fixture_free(fixture);
}

static void test_success_is_final_for_on_failure(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ON_FAILURE, 3, 100);
	run_to_running(fixture, 0);
	runner_exited(&fixture->runner, &exit_code_0, 50);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_false(fixture->runner.failed);
	fixture_free(fixture);
}

static void test_policy_never_failure_is_failed(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_NEVER, 3, 100);
	run_to_running(fixture, 0);
	runner_exited(&fixture->runner, &killed_by_9, 50);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_true(fixture->runner.failed);
	assert_int_equal(runner_failure_exit_code(&fixture->runner), 137);
	fixture_free(fixture);
}

static void test_restart_running_is_not_charged(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 1, 100);
	run_to_running(fixture, 0);
	assert_int_equal(runner_restart(&fixture->runner, 10), RUNNER_REQUEST_DONE);
	assert_int_equal(fixture->fake.last_signal, 15);
	assert_true(fixture->fake.timer_armed[RUNNER_TIMER_KILL]);
	assert_int_equal(fixture->fake.timer_deadline[RUNNER_TIMER_KILL], 5010);
	assert_int_equal(fixture->runner.state, TASK_RUNNING);

	/* The exit caused by the restart starts it again at once... */
	runner_exited(&fixture->runner, &exit_code_1, 20);
	assert_true(runner_ready_to_start(&fixture->runner));
	assert_false(fixture->fake.timer_armed[RUNNER_TIMER_KILL]);
	assert_int_equal(fixture->runner.restart_count, 1);
	/* ...and is not charged: with attempts 1, one real failure is still
	 * restarted, and only the second gives up. */
	run_to_running(fixture, 30);
	runner_exited(&fixture->runner, &exit_code_1, 40);
	assert_int_equal(fixture->runner.state, TASK_PENDING);
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_RESTART_DELAY, 140);
	run_to_running(fixture, 140);
	runner_exited(&fixture->runner, &exit_code_1, 150);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	fixture_free(fixture);
}

static void test_restart_refused_when_not_running(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_NEVER, 0, 100);
	assert_int_equal(runner_restart(&fixture->runner, 0), RUNNER_REQUEST_NOT_RUNNING);
	run_to_running(fixture, 0);
	runner_exited(&fixture->runner, &exit_code_0, 10);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	unsigned events = fixture->fake.event_count;
	assert_int_equal(runner_restart(&fixture->runner, 20), RUNNER_REQUEST_NOT_RUNNING);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_int_equal(fixture->fake.event_count, events);
	fixture_free(fixture);
}

static void test_force_restart_dead_task(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_NEVER, 0, 100);
	run_to_running(fixture, 0);
	runner_exited(&fixture->runner, &exit_code_1, 10);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_true(fixture->runner.failed);

	assert_int_equal(runner_force_restart(&fixture->runner, false, 20),
			 RUNNER_REQUEST_GATE_CLOSED);
	assert_int_equal(fixture->runner.state, TASK_DEAD);

	assert_int_equal(runner_force_restart(&fixture->runner, true, 30), RUNNER_REQUEST_DONE);
	assert_int_equal(fixture->runner.state, TASK_PENDING);
	assert_false(fixture->runner.failed);
	assert_true(runner_ready_to_start(&fixture->runner));
	assert_true(last_event_is(fixture, TASK_EVENT_RESTART_REQUESTED));
	fixture_free(fixture);
}

static void test_force_restart_skips_delay(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 10000);
	run_to_running(fixture, 0);
	runner_exited(&fixture->runner, &exit_code_1, 10);
	assert_true(runner_waiting_out_delay(&fixture->runner));
	assert_int_equal(runner_force_restart(&fixture->runner, true, 20), RUNNER_REQUEST_DONE);
	assert_false(fixture->fake.timer_armed[RUNNER_TIMER_RESTART_DELAY]);
	assert_true(runner_ready_to_start(&fixture->runner));
	fixture_free(fixture);
}

/* Item 9 of issue 28: 30 runs of a schedule are not 30 restarts. */
static void test_a_scheduled_run_is_counted_as_a_run_not_a_restart(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ON_FAILURE, 3, 100);
	fixture->config.schedule.set = true;
	fixture->config.manual_start = true;
	runner_received(&fixture->runner);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	for (unsigned run = 1; run <= 3; run++) {
		assert_int_equal(
		    runner_run_scheduled(&fixture->runner, "its time came", true, run * 100),
		    RUNNER_REQUEST_DONE);
		assert_int_equal(fixture->runner.state, TASK_PENDING);
		char said[64];
		snprintf(said, sizeof(said), "run %u of its schedule: its time came", run);
		assert_true(last_event_is(fixture, TASK_EVENT_SCHEDULED));
		assert_string_equal(fixture->fake.messages[fixture->fake.event_count - 1], said);
		run_to_running(fixture, run * 100);
		runner_exited(&fixture->runner, &exit_code_0, run * 100 + 10);
		assert_int_equal(fixture->runner.state, TASK_DEAD);
	}
	assert_int_equal(fixture->runner.run_count, 3);
	assert_int_equal(fixture->runner.restart_count, 0);
	/* corral start between the runs: one run more, still no restart. */
	assert_int_equal(runner_force_restart(&fixture->runner, true, 400), RUNNER_REQUEST_DONE);
	assert_int_equal(fixture->runner.run_count, 4);
	assert_int_equal(fixture->runner.restart_count, 0);
	/* A failed run's retry is a restart. */
	run_to_running(fixture, 400);
	runner_exited(&fixture->runner, &exit_code_1, 410);
	assert_int_equal(fixture->runner.restart_count, 1);
	fixture_free(fixture);
}

static void test_a_scheduled_run_replaces_the_one_still_going(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ON_FAILURE, 3, 100);
	fixture->config.schedule.set = true;
	run_to_running(fixture, 0);
	assert_int_equal(runner_run_scheduled(&fixture->runner, "its time came", true, 10),
			 RUNNER_REQUEST_DONE);
	assert_int_equal(fixture->fake.signals, 1);
	runner_exited(&fixture->runner, &killed_by_9, 20);
	assert_int_equal(fixture->runner.state, TASK_PENDING);
	assert_true(runner_ready_to_start(&fixture->runner));
	bool said = false;
	for (unsigned e = 0; e < fixture->fake.event_count; e++)
		said |= fixture->fake.events[e] == TASK_EVENT_KILLED &&
			strcmp(fixture->fake.messages[e],
			       "stopped: its schedule's next run replaces it") == 0;
	assert_true(said);
	assert_int_equal(fixture->runner.run_count, 1);
	assert_int_equal(fixture->runner.restart_count, 0);
	/* Already about to start: nothing new to begin. */
	assert_int_equal(runner_run_scheduled(&fixture->runner, "its time came", true, 30),
			 RUNNER_REQUEST_NOT_RUNNING);
	assert_int_equal(fixture->runner.run_count, 1);
	fixture_free(fixture);
}

static void test_force_restart_running_restarts(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	run_to_running(fixture, 0);
	assert_int_equal(runner_force_restart(&fixture->runner, false, 10), RUNNER_REQUEST_DONE);
	assert_int_equal(fixture->fake.signals, 1);
	fixture_free(fixture);
}

static void test_stop_for_good_escalates_to_sigkill(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	run_to_running(fixture, 0);
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "shutdown requested", 100);
	assert_int_equal(fixture->fake.last_signal, 15);
	assert_true(last_event_is(fixture, TASK_EVENT_KILLING));
	assert_string_equal(fixture->fake.messages[fixture->fake.event_count - 1],
			    "sending SIGTERM: shutdown requested");
	/* Stopping twice sends nothing more. */
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "again", 200);
	assert_int_equal(fixture->fake.signals, 1);

	runner_timer_fired(&fixture->runner, RUNNER_TIMER_KILL, 5100);
	assert_int_equal(fixture->fake.kills, 1);
	assert_true(last_event_is(fixture, TASK_EVENT_KILL_TIMEOUT));

	runner_exited(&fixture->runner, &killed_by_9, 5110);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_false(fixture->runner.failed); /* asked for: ended well */
	assert_true(last_event_is(fixture, TASK_EVENT_KILLED));
	fixture_free(fixture);
}

static void test_stop_for_good_overrides_restart(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	run_to_running(fixture, 0);
	runner_restart(&fixture->runner, 10);
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "shutdown requested", 20);
	assert_int_equal(fixture->fake.signals, 1);
	assert_int_equal(runner_restart(&fixture->runner, 25), RUNNER_REQUEST_STOPPING);
	runner_exited(&fixture->runner, &exit_code_0, 30);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	fixture_free(fixture);
}

static void test_stop_pending_task_dies_at_once(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "sibling failed", 0);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_false(fixture->runner.failed);
	assert_int_equal(fixture->fake.spawns, 0);
	assert_int_equal(fixture->fake.signals, 0);
	fixture_free(fixture);
}

static void test_group_restart_stop_makes_pending(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_NEVER, 0, 100);
	run_to_running(fixture, 0);
	runner_stop(&fixture->runner, RUNNER_STOP_GROUP_RESTART, "group restart", 10);
	runner_exited(&fixture->runner, &exit_code_0, 20);
	assert_int_equal(fixture->runner.state, TASK_PENDING);
	assert_true(runner_ready_to_start(&fixture->runner));
	fixture_free(fixture);
}

static void test_rearm_dead_task(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ON_FAILURE, 3, 100);
	run_to_running(fixture, 0);
	runner_exited(&fixture->runner, &exit_code_0, 10);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	runner_rearm(&fixture->runner);
	assert_true(runner_ready_to_start(&fixture->runner));
	fixture_free(fixture);
}

static void test_synchronous_spawn_failure(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_NEVER, 0, 100);
	fixture->fake.spawn_result = -EPERM;
	runner_start(&fixture->runner, 0);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_true(fixture->runner.failed);
	assert_int_equal(fixture->fake.events[0], TASK_EVENT_START_FAILED);
	assert_string_equal(fixture->fake.messages[0], "clone3: Resource temporarily unavailable");
	fixture_free(fixture);
}

/* Short of a resource (clone's EAGAIN under pids.max): tried again with
 * back-off, never counted, even under `restart: never`. */
static void test_a_resource_shortage_postpones_the_start(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_NEVER, 0, 100);
	fixture->fake.spawn_result = -EAGAIN;
	runner_start(&fixture->runner, 0);
	assert_int_equal(fixture->runner.state, TASK_PENDING);
	assert_false(fixture->runner.failed);
	assert_true(runner_waiting_out_delay(&fixture->runner));
	assert_int_equal(fixture->fake.timer_deadline[RUNNER_TIMER_RESTART_DELAY], 100);
	assert_string_equal(fixture->fake.messages[0],
			    "clone3: Resource temporarily unavailable: corral is short of a "
			    "resource; trying again in 100ms, then up to every 5s until it "
			    "starts (not counted against the restart policy)");
	unsigned events = fixture->fake.event_count;

	/* The retries after the first are not events: the effects sum them up. */
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_RESTART_DELAY, 100);
	assert_true(runner_ready_to_start(&fixture->runner));
	runner_start(&fixture->runner, 100);
	assert_int_equal(fixture->fake.timer_deadline[RUNNER_TIMER_RESTART_DELAY], 300);
	assert_int_equal(fixture->fake.event_count, events);
	assert_int_equal(fixture->fake.resource_waits, 2);
	assert_int_equal(fixture->fake.first_resource_waits, 1);

	fixture->fake.spawn_result = 0;
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_RESTART_DELAY, 300);
	runner_start(&fixture->runner, 300);
	assert_int_equal(fixture->runner.state, TASK_STARTING);
	assert_int_equal(fixture->runner.resource_retry_ms, 0);
	assert_int_equal(fixture->runner.restart_count, 0);
	assert_int_equal(fixture->fake.waits_over_started, 1);
	fixture_free(fixture);
}

/* A task stopped while it waits for a resource: its wait is over, and a
 * start after that is a new try, said again. */
static void test_a_stop_ends_a_resource_wait(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 0, 100);
	fixture->fake.spawn_result = -EMFILE;
	runner_start(&fixture->runner, 0);
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_RESTART_DELAY, 100);
	runner_start(&fixture->runner, 100);
	assert_int_equal(fixture->fake.resource_waits, 2);
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "corral stop", 150);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_int_equal(fixture->fake.waits_over, 1);
	assert_int_equal(fixture->fake.waits_over_started, 0);
	assert_int_equal(fixture->runner.resource_retry_ms, 0);
	fixture_free(fixture);
}

static void test_exec_failure_counts_as_failed_start(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ON_FAILURE, 1, 100);
	runner_start(&fixture->runner, 0);
	runner_start_failed(&fixture->runner, "exec /usr/bin/ap: No such file or directory", 127,
			    5);
	assert_int_equal(fixture->runner.state, TASK_PENDING); /* one restart allowed */
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_RESTART_DELAY, 105);
	runner_start(&fixture->runner, 105);
	runner_start_failed(&fixture->runner, "exec /usr/bin/ap: No such file or directory", 127,
			    110);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_true(fixture->runner.failed);
	assert_int_equal(runner_failure_exit_code(&fixture->runner), 127);
	fixture_free(fixture);
}

static void test_kill_now(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	run_to_running(fixture, 0);
	runner_kill_now(&fixture->runner, "shutdown_timeout passed");
	assert_int_equal(fixture->fake.kills, 1);
	assert_int_equal(fixture->fake.signals, 0);
	runner_exited(&fixture->runner, &killed_by_9, 10);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_false(fixture->runner.failed);
	fixture_free(fixture);
}

/* ---- readiness ---- */

static void test_without_readiness_started_is_ready(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	run_to_running(fixture, 10);
	assert_true(runner_is_ready(&fixture->runner));
	assert_false(fixture->fake.timer_armed[RUNNER_TIMER_READINESS]);
	fixture_free(fixture);
}

static void test_ready_when_the_task_says_so(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	fixture->readiness.kind = READINESS_NOTIFY_SYSTEMD;
	fixture->readiness.timeout_ms = 3000;
	run_to_running(fixture, 10);
	assert_false(runner_is_ready(&fixture->runner));
	assert_true(fixture->fake.timer_armed[RUNNER_TIMER_READINESS]);
	assert_int_equal(fixture->fake.timer_deadline[RUNNER_TIMER_READINESS], 3010);
	unsigned changes = fixture->fake.changes;

	runner_ready(&fixture->runner, "READY=1");
	assert_true(runner_is_ready(&fixture->runner));
	assert_true(last_event_is(fixture, TASK_EVENT_READY));
	assert_string_equal(fixture->fake.messages[fixture->fake.event_count - 1],
			    "ready (READY=1)");
	assert_false(fixture->fake.timer_armed[RUNNER_TIMER_READINESS]);
	/* The group hears of it: its coordinator may move on. */
	assert_int_equal(fixture->fake.changes, changes + 1);
	/* Said twice: once is what counts. */
	unsigned events = fixture->fake.event_count;
	runner_ready(&fixture->runner, "READY=1");
	assert_int_equal(fixture->fake.event_count, events);

	/* A new run must say it again. */
	runner_exited(&fixture->runner, &exit_code_1, 500);
	assert_false(runner_is_ready(&fixture->runner));
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_RESTART_DELAY, 600);
	run_to_running(fixture, 600);
	assert_false(runner_is_ready(&fixture->runner));
	fixture_free(fixture);
}

static void test_readiness_timeout_stops_and_counts_as_a_failure(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ON_FAILURE, 3, 100);
	fixture->readiness.kind = READINESS_PROBE;
	fixture->readiness.timeout_ms = 2000;
	fixture->fake.hooks_wait[HOOK_STAGE_PREKILL] = true;
	run_to_running(fixture, 0);
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_READINESS, 2000);
	/* A stop as any other: prekill hooks, then the kill signal, SIGKILL
	 * only after the kill timeout. */
	assert_int_equal(fixture->fake.kills, 0);
	assert_int_equal(fixture->fake.hook_runs[HOOK_STAGE_PREKILL], 1);
	assert_string_equal(fixture->fake.messages[fixture->fake.event_count - 2],
			    "not ready within 2s: stopping it");
	runner_hooks_finished(&fixture->runner, HOOK_STAGE_PREKILL, true, "", 2100);
	assert_int_equal(fixture->fake.last_signal, 15);
	assert_true(fixture->fake.timer_armed[RUNNER_TIMER_KILL]);
	assert_int_equal(fixture->fake.timer_deadline[RUNNER_TIMER_KILL], 2100 + 5000);
	/* Ready too late: nothing may start on it now. */
	runner_ready(&fixture->runner, "READY=1");
	assert_false(runner_is_ready(&fixture->runner));
	/* A clean exit on SIGTERM is still a failed run. */
	runner_exited(&fixture->runner, &exit_code_0, 2200);
	assert_true(runner_last_exit_failed(&fixture->runner));
	assert_string_equal(runner_failure(&fixture->runner), "not ready within 2s");
	assert_true(last_event_is(fixture, TASK_EVENT_RESTARTING));
	assert_string_equal(fixture->runner.exit_rule, "restart.policy");
	fixture_free(fixture);
}

static void test_readiness_timeout_escalates_after_the_kill_timeout(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_NEVER, 3, 100);
	fixture->readiness.kind = READINESS_NOTIFY_SYSTEMD;
	fixture->readiness.timeout_ms = 2000;
	run_to_running(fixture, 0);
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_READINESS, 2000);
	assert_int_equal(fixture->fake.last_signal, 15);
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_KILL, 7000);
	assert_int_equal(fixture->fake.kills, 1);
	runner_exited(&fixture->runner, &killed_by_9, 7010);
	assert_true(fixture->runner.failed);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	fixture_free(fixture);
}

/* ---- exit-code rules ---- */

static void set_code(struct exit_status_set *set, int code)
{
	set->codes[code / 64] |= UINT64_C(1) << (code % 64);
}

static void test_success_exit_code_is_a_success(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ON_FAILURE, 3, 100);
	const struct task_exit exit_143 = {.kind = TASK_EXIT_CODE, .code = 143};
	set_code(&fixture->config.restart.success_exit, 143);
	run_to_running(fixture, 0);
	runner_exited(&fixture->runner, &exit_143, 100);
	assert_string_equal(fixture->fake.messages[fixture->fake.event_count - 2],
			    "exited with code 143 (a success: listed in restart.success_exit)");
	assert_true(last_event_is(fixture, TASK_EVENT_NOT_RESTARTING));
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_false(fixture->runner.failed);
	assert_true(runner_last_run_succeeded(&fixture->runner));
	assert_string_equal(fixture->runner.exit_rule, "restart.success_exit");
	fixture_free(fixture);
}

static void test_success_exit_signal_but_never_an_oom_kill(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ON_FAILURE, 3, 100);
	const struct task_exit oom = {.kind = TASK_EXIT_SIGNAL, .signal = 9, .oom_kills = 1};
	fixture->config.restart.success_exit.signals = UINT64_C(1) << (9 - 1) | UINT64_C(1)
										    << (15 - 1);
	run_to_running(fixture, 0);
	runner_exited(&fixture->runner, &oom, 100);
	assert_true(runner_last_exit_failed(&fixture->runner));
	assert_true(last_event_is(fixture, TASK_EVENT_RESTARTING));
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_RESTART_DELAY, 200);
	run_to_running(fixture, 200);
	const struct task_exit term = {.kind = TASK_EXIT_SIGNAL, .signal = 15};
	runner_exited(&fixture->runner, &term, 300);
	assert_false(runner_last_exit_failed(&fixture->runner));
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	fixture_free(fixture);
}

/* The texts are made when there is something to say (an idle
 * task carries none; bench_supervisor --memory-only), and a new run clears the failure, not the
 * decision. */
static void test_texts_are_made_when_said(void **state)
{
	(void)state;
	struct fixture *fixture = fixture_new(RESTART_ON_FAILURE, 1, 0);
	run_to_running(fixture, 0);
	assert_null(fixture->runner.texts);
	assert_null(runner_decision(&fixture->runner));
	assert_string_equal(runner_failure(&fixture->runner), "");

	const struct task_exit exit_1 = {.kind = TASK_EXIT_CODE, .code = 1};
	runner_exited(&fixture->runner, &exit_1, 10);
	assert_non_null(fixture->runner.texts);
	assert_string_equal(runner_decision(&fixture->runner),
			    fixture->fake.messages[fixture->fake.event_count - 1]);
	assert_string_equal(runner_failure(&fixture->runner), "");

	runner_start(&fixture->runner, 20);
	runner_exec_succeeded(&fixture->runner, 20);
	runner_exited(&fixture->runner, &exit_1, 30);
	assert_true(fixture->runner.failed);
	assert_string_equal(runner_failure(&fixture->runner),
			    "exited with code 1, 1 restart within 1m spent");
	assert_non_null(runner_decision(&fixture->runner));

	runner_force_restart(&fixture->runner, true, 40);
	runner_start(&fixture->runner, 40);
	assert_string_equal(runner_failure(&fixture->runner), "");
	assert_non_null(runner_decision(&fixture->runner));
	fixture_free(fixture);
}

static void test_no_restart_exit_overrides_always(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	const struct task_exit exit_78 = {.kind = TASK_EXIT_CODE, .code = 78};
	set_code(&fixture->config.restart.no_restart_exit, 78);
	set_code(&fixture->config.restart.no_restart_exit, 0);
	run_to_running(fixture, 0);
	runner_exited(&fixture->runner, &exit_78, 100);
	assert_string_equal(fixture->fake.messages[fixture->fake.event_count - 1],
			    "not restarting: exited with code 78, listed in "
			    "restart.no_restart_exit; failed for good");
	assert_true(fixture->runner.failed);
	assert_string_equal(fixture->runner.exit_rule, "restart.no_restart_exit");
	assert_string_equal(runner_decision(&fixture->runner),
			    fixture->fake.messages[fixture->fake.event_count - 1]);

	/* A success it lists ends the task without failing it. */
	runner_force_restart(&fixture->runner, true, 200);
	runner_start(&fixture->runner, 200);
	runner_exec_succeeded(&fixture->runner, 200);
	runner_exited(&fixture->runner, &exit_code_0, 300);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_false(fixture->runner.failed);
	fixture_free(fixture);
}

static void test_no_restart_exit_ignores_other_codes(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	set_code(&fixture->config.restart.no_restart_exit, 78);
	run_to_running(fixture, 0);
	runner_exited(&fixture->runner, &exit_code_1, 100);
	assert_true(last_event_is(fixture, TASK_EVENT_RESTARTING));
	assert_string_equal(fixture->runner.exit_rule, "restart.policy");
	fixture_free(fixture);
}

static void test_readiness_timeout_after_ready_does_nothing(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	fixture->readiness.kind = READINESS_NOTIFY_FD;
	fixture->readiness.timeout_ms = 2000;
	run_to_running(fixture, 0);
	runner_ready(&fixture->runner, "fd 3");
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_READINESS, 2000);
	assert_int_equal(fixture->fake.kills, 0);
	assert_true(runner_is_ready(&fixture->runner));
	fixture_free(fixture);
}

/* The loop may hear the task's readiness (a newline on its notify fd,
 * READY=1) before the EOF of its error pipe that confirms the exec: both
 * fds are ready in the same epoll batch, or the task writes first. The
 * newline is said once; dropped, the task never became ready and its
 * group hung in `main` (test_failed_poststart_task_stops_the_group). */
static void test_ready_said_before_the_exec_is_confirmed(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	fixture->readiness.kind = READINESS_NOTIFY_FD;
	fixture->readiness.timeout_ms = 2000;
	runner_start(&fixture->runner, 0);
	assert_int_equal(fixture->runner.state, TASK_STARTING);

	runner_ready(&fixture->runner, "newline on fd 3");
	/* Not running yet: nothing starts on it before the exec is known. */
	assert_int_equal(fixture->runner.state, TASK_STARTING);
	assert_false(runner_is_ready(&fixture->runner));

	runner_exec_succeeded(&fixture->runner, 10);
	assert_int_equal(fixture->runner.state, TASK_RUNNING);
	assert_true(runner_is_ready(&fixture->runner));
	assert_false(fixture->fake.timer_armed[RUNNER_TIMER_READINESS]);
	unsigned count = fixture->fake.event_count;
	assert_int_equal(fixture->fake.events[count - 2], TASK_EVENT_STARTED);
	assert_int_equal(fixture->fake.events[count - 1], TASK_EVENT_READY);
	assert_string_equal(fixture->fake.messages[count - 1], "ready (newline on fd 3)");

	/* The next run must say it again. */
	runner_exited(&fixture->runner, &exit_code_1, 500);
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_RESTART_DELAY, 600);
	run_to_running(fixture, 600);
	assert_false(runner_is_ready(&fixture->runner));
	assert_true(fixture->fake.timer_armed[RUNNER_TIMER_READINESS]);
	fixture_free(fixture);
}

/* Said early, then gone before the exec was confirmed, or stopped: the
 * early word counts for no later run, nor for a task being stopped. */
static void test_early_ready_is_forgotten_with_its_run(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 0);
	fixture->readiness.kind = READINESS_NOTIFY_SYSTEMD;
	runner_start(&fixture->runner, 0);
	runner_ready(&fixture->runner, "READY=1");
	runner_exited(&fixture->runner, &exit_code_1, 5);
	assert_int_equal(fixture->runner.state, TASK_PENDING);
	run_to_running(fixture, 10);
	assert_false(runner_is_ready(&fixture->runner));
	runner_exited(&fixture->runner, &exit_code_1, 20);

	runner_start(&fixture->runner, 30);
	runner_ready(&fixture->runner, "READY=1");
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "stop requested", 31);
	runner_exec_succeeded(&fixture->runner, 32);
	assert_false(runner_is_ready(&fixture->runner));

	/* Starting with its prestart hooks: no process, nothing to hear. */
	struct fixture *hooked = fixture_new(RESTART_ALWAYS, 3, 0);
	hooked->readiness.kind = READINESS_NOTIFY_SYSTEMD;
	hooked->fake.hooks_wait[HOOK_STAGE_PRESTART] = true;
	runner_start(&hooked->runner, 0);
	runner_ready(&hooked->runner, "READY=1");
	runner_hooks_finished(&hooked->runner, HOOK_STAGE_PRESTART, true, "", 5);
	runner_exec_succeeded(&hooked->runner, 6);
	assert_false(runner_is_ready(&hooked->runner));
	fixture_free(hooked);
	fixture_free(fixture);
}

/* ---- hooks ---- */

static void test_prestart_hooks_come_before_the_spawn(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	struct fake *fake = &fixture->fake;
	fake->hooks_wait[HOOK_STAGE_PRESTART] = true;
	runner_start(&fixture->runner, 0);
	assert_int_equal(fixture->runner.state, TASK_STARTING);
	assert_int_equal(fixture->runner.step, RUNNER_STEP_PRESTART_HOOKS);
	assert_int_equal(fake->spawns, 0);
	/* Answers for other stages change nothing. */
	runner_hooks_finished(&fixture->runner, HOOK_STAGE_PREKILL, true, NULL, 5);
	assert_int_equal(fake->spawns, 0);
	runner_hooks_finished(&fixture->runner, HOOK_STAGE_PRESTART, true, NULL, 10);
	assert_int_equal(fake->spawns, 1);
	assert_int_not_equal(fixture->runner.step, RUNNER_STEP_PRESTART_HOOKS);
	assert_int_equal(fixture->runner.state, TASK_STARTING);
	runner_exec_succeeded(&fixture->runner, 20);
	assert_int_equal(fixture->runner.state, TASK_RUNNING);
	assert_int_equal(fake->hook_runs[HOOK_STAGE_POSTSTART], 1);
	fixture_free(fixture);
}

static void test_prestart_failure_is_a_failed_start_that_counts(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ON_FAILURE, 1, 100);
	struct fake *fake = &fixture->fake;
	fake->hooks_wait[HOOK_STAGE_PRESTART] = true;
	runner_start(&fixture->runner, 0);
	runner_hooks_finished(&fixture->runner, HOOK_STAGE_PRESTART, false,
			      "hook volumes: exited with code 1", 10);
	assert_int_equal(fake->spawns, 0);
	assert_int_equal(fake->events[fake->event_count - 2], TASK_EVENT_START_FAILED);
	assert_string_equal(fake->messages[fake->event_count - 2],
			    "hook volumes: exited with code 1");
	assert_int_equal(fixture->runner.state, TASK_PENDING);
	assert_true(runner_waiting_out_delay(&fixture->runner));
	runner_timer_fired(&fixture->runner, RUNNER_TIMER_RESTART_DELAY, 200);
	runner_start(&fixture->runner, 200);
	runner_hooks_finished(&fixture->runner, HOOK_STAGE_PRESTART, false, "hook volumes: x", 210);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_true(fixture->runner.failed);
	assert_int_equal(runner_failure_exit_code(&fixture->runner), 126);
	/* No process ever ran: no exited hooks; the stop hooks once. */
	assert_int_equal(fake->hook_runs[HOOK_STAGE_EXITED], 0);
	assert_int_equal(fake->hook_runs[HOOK_STAGE_STOP], 1);
	fixture_free(fixture);
}

static void test_stop_during_prestart_cancels_the_hooks(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	struct fake *fake = &fixture->fake;
	fake->hooks_wait[HOOK_STAGE_PRESTART] = true;
	runner_start(&fixture->runner, 0);
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "shutdown", 5);
	assert_int_equal(fake->hook_cancels[HOOK_STAGE_PRESTART], 1);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_false(fixture->runner.failed);
	assert_int_equal(fake->signals, 0);
	assert_int_equal(fake->hook_runs[HOOK_STAGE_PREKILL], 0);
	assert_int_equal(fake->hook_runs[HOOK_STAGE_STOP], 1);
	/* A late answer starts nothing. */
	runner_hooks_finished(&fixture->runner, HOOK_STAGE_PRESTART, true, NULL, 10);
	assert_int_equal(fake->spawns, 0);
	fixture_free(fixture);
}

static void test_restart_during_prestart_runs_them_again(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	struct fake *fake = &fixture->fake;
	fake->hooks_wait[HOOK_STAGE_PRESTART] = true;
	runner_start(&fixture->runner, 0);
	assert_int_equal(runner_restart(&fixture->runner, 5), RUNNER_REQUEST_DONE);
	assert_int_equal(fake->hook_cancels[HOOK_STAGE_PRESTART], 1);
	assert_int_equal(fixture->runner.state, TASK_PENDING);
	runner_start(&fixture->runner, 6);
	assert_int_equal(fake->hook_runs[HOOK_STAGE_PRESTART], 2);
	runner_hooks_finished(&fixture->runner, HOOK_STAGE_PRESTART, true, NULL, 10);
	assert_int_equal(fake->spawns, 1);
	fixture_free(fixture);
}

static void test_prekill_hooks_come_before_the_signal(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	struct fake *fake = &fixture->fake;
	fake->hooks_wait[HOOK_STAGE_PREKILL] = true;
	run_to_running(fixture, 0);
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "shutdown", 100);
	assert_true(fixture->runner.prekill_pending);
	assert_int_equal(fake->signals, 0);
	assert_false(fake->timer_armed[RUNNER_TIMER_KILL]);
	/* A second stop neither reruns them nor signals. */
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "again", 150);
	assert_int_equal(fake->hook_runs[HOOK_STAGE_PREKILL], 1);
	assert_int_equal(fake->signals, 0);
	runner_hooks_finished(&fixture->runner, HOOK_STAGE_PREKILL, true, NULL, 300);
	assert_int_equal(fake->signals, 1);
	assert_int_equal(fake->last_signal, 15);
	/* The kill timeout counts from the signal. */
	assert_true(fake->timer_armed[RUNNER_TIMER_KILL]);
	assert_int_equal(fake->timer_deadline[RUNNER_TIMER_KILL], 5300);
	runner_exited(&fixture->runner, &exit_code_0, 400);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	fixture_free(fixture);
}

static void test_exit_during_prekill_cancels_them(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	struct fake *fake = &fixture->fake;
	fake->hooks_wait[HOOK_STAGE_PREKILL] = true;
	run_to_running(fixture, 0);
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "shutdown", 100);
	runner_exited(&fixture->runner, &exit_code_0, 200);
	assert_int_equal(fake->hook_cancels[HOOK_STAGE_PREKILL], 1);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	runner_hooks_finished(&fixture->runner, HOOK_STAGE_PREKILL, true, NULL, 300);
	assert_int_equal(fake->signals, 0);
	fixture_free(fixture);
}

static void test_kill_now_during_prekill_kills(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	struct fake *fake = &fixture->fake;
	fake->hooks_wait[HOOK_STAGE_PREKILL] = true;
	run_to_running(fixture, 0);
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "shutdown", 100);
	runner_kill_now(&fixture->runner, "shutdown_timeout passed");
	assert_int_equal(fake->kills, 1);
	assert_int_equal(fake->hook_cancels[HOOK_STAGE_PREKILL], 1);
	assert_false(fixture->runner.prekill_pending);
	fixture_free(fixture);
}

/* Its group stops it later: its prekill hooks run ahead, once; the stop
 * that comes while they run waits for them, one that comes after they are
 * done signals at once. */
static void test_prekill_hooks_run_ahead_of_the_stop(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	struct fake *fake = &fixture->fake;
	fake->hooks_wait[HOOK_STAGE_PREKILL] = true;
	run_to_running(fixture, 0);
	runner_prekill_ahead(&fixture->runner);
	runner_prekill_ahead(&fixture->runner);
	assert_int_equal(fake->hook_runs[HOOK_STAGE_PREKILL], 1);
	assert_int_equal(fake->signals, 0);
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "shutdown", 100);
	assert_int_equal(fake->hook_runs[HOOK_STAGE_PREKILL], 1);
	assert_int_equal(fake->signals, 0);
	runner_hooks_finished(&fixture->runner, HOOK_STAGE_PREKILL, true, NULL, 300);
	assert_int_equal(fake->signals, 1);
	runner_exited(&fixture->runner, &exit_code_0, 400);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	assert_int_equal(fixture->runner.prekill_ahead, RUNNER_PREKILL_AHEAD_NONE);
	fixture_free(fixture);
}

static void test_a_stop_after_prekill_ran_ahead_signals_at_once(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, 3, 100);
	struct fake *fake = &fixture->fake;
	fake->hooks_wait[HOOK_STAGE_PREKILL] = true;
	run_to_running(fixture, 0);
	runner_prekill_ahead(&fixture->runner);
	runner_hooks_finished(&fixture->runner, HOOK_STAGE_PREKILL, true, NULL, 50);
	assert_int_equal(fake->signals, 0);
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "shutdown", 100);
	assert_int_equal(fake->hook_runs[HOOK_STAGE_PREKILL], 1);
	assert_int_equal(fake->signals, 1);
	fixture_free(fixture);
}

static void test_exited_after_every_exit_stop_once_at_the_end(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_ON_FAILURE, 1, 0);
	struct fake *fake = &fixture->fake;
	run_to_running(fixture, 0);
	runner_exited(&fixture->runner, &exit_code_1, 10);
	assert_int_equal(fixture->runner.state, TASK_PENDING);
	run_to_running(fixture, 20);
	runner_exited(&fixture->runner, &killed_by_9, 30);
	assert_int_equal(fixture->runner.state, TASK_DEAD);
	enum hook_stage expected[] = {HOOK_STAGE_PRESTART, HOOK_STAGE_POSTSTART, HOOK_STAGE_EXITED,
				      HOOK_STAGE_PRESTART, HOOK_STAGE_POSTSTART, HOOK_STAGE_EXITED,
				      HOOK_STAGE_STOP};
	assert_int_equal(fake->hook_order_count, sizeof(expected) / sizeof(expected[0]));
	for (size_t i = 0; i < fake->hook_order_count; i++)
		assert_int_equal(fake->hook_order[i], expected[i]);
	/* Revived by ForceRestart, it ends with its stop hooks again. */
	runner_force_restart(&fixture->runner, true, 40);
	run_to_running(fixture, 50);
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "stop requested", 60);
	runner_exited(&fixture->runner, &exit_code_0, 70);
	assert_int_equal(fake->hook_runs[HOOK_STAGE_STOP], 2);
	assert_int_equal(fake->hook_runs[HOOK_STAGE_PREKILL], 1);
	fixture_free(fixture);
}

static void test_exec_failure_runs_exited_hooks(void **state)
{
	struct fixture *fixture = fixture_new(RESTART_NEVER, 0, 0);
	runner_start(&fixture->runner, 0);
	runner_start_failed(&fixture->runner, "exec /nope: No such file or directory", 127, 5);
	assert_int_equal(fixture->fake.hook_runs[HOOK_STAGE_EXITED], 1);
	assert_int_equal(fixture->fake.hook_runs[HOOK_STAGE_STOP], 1);
	fixture_free(fixture);
}

/* GET /metrics' exits by kind and failed starts: counted at every end of
 * a run, whatever followed it (a restart, a stop corral asked for), and
 * made at the first. */
static void test_exits_are_counted_by_kind(void **state)
{
	(void)state;
	struct fixture *fixture = fixture_new(RESTART_ALWAYS, RESTART_ATTEMPTS_UNLIMITED, 0);
	run_to_running(fixture, 0);
	assert_null(fixture->runner.exits);
	runner_exited(&fixture->runner, &exit_code_1, 10);
	run_to_running(fixture, 20);
	runner_exited(&fixture->runner, &exit_code_1, 30);
	run_to_running(fixture, 40);
	runner_exited(&fixture->runner, &killed_by_9, 50);
	runner_start(&fixture->runner, 60);
	runner_start_failed(&fixture->runner, "exec /nope: No such file or directory", 127, 60);
	run_to_running(fixture, 70);
	runner_stop(&fixture->runner, RUNNER_STOP_FOR_GOOD, "stopped", 80);
	const struct task_exit terminated = {.kind = TASK_EXIT_SIGNAL, .signal = 15};
	runner_exited(&fixture->runner, &terminated, 90);

	const struct exit_tally *exits = fixture->runner.exits;
	assert_non_null(exits);
	assert_int_equal(exits->slot_count, 3);
	assert_false(exits->slots[0].signaled);
	assert_int_equal(exits->slots[0].value, 1);
	assert_int_equal(exits->slots[0].count, 2);
	assert_true(exits->slots[1].signaled);
	assert_int_equal(exits->slots[1].value, 9);
	assert_int_equal(exits->slots[1].count, 1);
	assert_int_equal(exits->slots[2].value, 15);
	assert_int_equal(exits->start_failures, 1);
	assert_int_equal(exits->other_codes + exits->other_signals, 0);
	fixture_free(fixture);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_without_readiness_started_is_ready),
	    cmocka_unit_test(test_ready_when_the_task_says_so),
	    cmocka_unit_test(test_readiness_timeout_stops_and_counts_as_a_failure),
	    cmocka_unit_test(test_readiness_timeout_escalates_after_the_kill_timeout),
	    cmocka_unit_test(test_success_exit_code_is_a_success),
	    cmocka_unit_test(test_success_exit_signal_but_never_an_oom_kill),
	    cmocka_unit_test(test_no_restart_exit_overrides_always),
	    cmocka_unit_test(test_no_restart_exit_ignores_other_codes),
	    cmocka_unit_test(test_readiness_timeout_after_ready_does_nothing),
	    cmocka_unit_test(test_ready_said_before_the_exec_is_confirmed),
	    cmocka_unit_test(test_early_ready_is_forgotten_with_its_run),
	    cmocka_unit_test(test_received_says_what_it_waits_for),
	    cmocka_unit_test(test_start_then_running),
	    cmocka_unit_test(test_failure_restarts_after_delay),
	    cmocka_unit_test(test_backoff_then_give_up),
	    cmocka_unit_test(test_success_is_final_for_on_failure),
	    cmocka_unit_test(test_policy_never_failure_is_failed),
	    cmocka_unit_test(test_restart_running_is_not_charged),
	    cmocka_unit_test(test_restart_refused_when_not_running),
	    cmocka_unit_test(test_force_restart_dead_task),
	    cmocka_unit_test(test_force_restart_skips_delay),
	    cmocka_unit_test(test_force_restart_running_restarts),
	    cmocka_unit_test(test_a_scheduled_run_is_counted_as_a_run_not_a_restart),
	    cmocka_unit_test(test_a_scheduled_run_replaces_the_one_still_going),
	    cmocka_unit_test(test_stop_for_good_escalates_to_sigkill),
	    cmocka_unit_test(test_stop_for_good_overrides_restart),
	    cmocka_unit_test(test_stop_pending_task_dies_at_once),
	    cmocka_unit_test(test_group_restart_stop_makes_pending),
	    cmocka_unit_test(test_rearm_dead_task),
	    cmocka_unit_test(test_synchronous_spawn_failure),
	    cmocka_unit_test(test_a_resource_shortage_postpones_the_start),
	    cmocka_unit_test(test_a_stop_ends_a_resource_wait),
	    cmocka_unit_test(test_exec_failure_counts_as_failed_start),
	    cmocka_unit_test(test_kill_now),
	    cmocka_unit_test(test_prestart_hooks_come_before_the_spawn),
	    cmocka_unit_test(test_prestart_failure_is_a_failed_start_that_counts),
	    cmocka_unit_test(test_stop_during_prestart_cancels_the_hooks),
	    cmocka_unit_test(test_restart_during_prestart_runs_them_again),
	    cmocka_unit_test(test_prekill_hooks_come_before_the_signal),
	    cmocka_unit_test(test_exit_during_prekill_cancels_them),
	    cmocka_unit_test(test_kill_now_during_prekill_kills),
	    cmocka_unit_test(test_prekill_hooks_run_ahead_of_the_stop),
	    cmocka_unit_test(test_a_stop_after_prekill_ran_ahead_signals_at_once),
	    cmocka_unit_test(test_exited_after_every_exit_stop_once_at_the_end),
	    cmocka_unit_test(test_exec_failure_runs_exited_hooks),
	    cmocka_unit_test(test_texts_are_made_when_said),
	    cmocka_unit_test(test_exits_are_counted_by_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
