/* Unit tests of the lifecycle coordinator, table by table.
 *
 * The expected gates are spelled out here from Nomad's coordinator.go, not
 * taken from the implementation, so that a wrong table there fails here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "supervisor/lifecycle/coordinator.h"

#define ARRAY_SIZE(array) (sizeof(array) / sizeof((array)[0]))

/* Short stage names keep the tables readable: prestart (P) and poststart (Q)
 * tasks, ephemeral (E) or sidecar (S). */
#define PE   STAGE_PRESTART_EPHEMERAL
#define PS   STAGE_PRESTART_SIDECAR
#define MAIN STAGE_MAIN
#define QE   STAGE_POSTSTART_EPHEMERAL
#define QS   STAGE_POSTSTART_SIDECAR
#define POST STAGE_POSTSTOP

#define PENDING(stage)                                                                             \
	{                                                                                          \
		(stage), COORD_TASK_PENDING, false                                                 \
	}
#define RUNNING(stage)                                                                             \
	{                                                                                          \
		(stage), COORD_TASK_RUNNING, false                                                 \
	}
#define DEAD(stage)                                                                                \
	{                                                                                          \
		(stage), COORD_TASK_DEAD, false                                                    \
	}
#define FAILED(stage)                                                                              \
	{                                                                                          \
		(stage), COORD_TASK_DEAD, true                                                     \
	}

#define TASKS(...)                                                                                 \
	.tasks = {__VA_ARGS__}, .task_count = ARRAY_SIZE(((struct coordinator_task[]){__VA_ARGS__}))
#define NO_TASKS .task_count = 0

/* Gates as a bit mask, one bit per stage. */
#define GATE(stage) (1u << (stage))
#define G_PE        GATE(PE)
#define G_PS        GATE(PS)
#define G_MAIN      GATE(MAIN)
#define G_QE        GATE(QE)
#define G_QS        GATE(QS)
#define G_POST      GATE(POST)

/* What Nomad's enterStateLocked() leaves open in each state. */
#define OPEN_IN_INIT       0u
#define OPEN_IN_PRESTART   (G_PE | G_PS)
#define OPEN_IN_MAIN       (G_PS | G_MAIN)
#define OPEN_IN_POSTSTART  (G_PS | G_MAIN | G_QE | G_QS)
#define OPEN_IN_WAIT_ALLOC (G_PS | G_MAIN | G_QS)
#define OPEN_IN_POSTSTOP   G_POST

static const unsigned open_in_state[] = {
    [COORDINATOR_INIT] = OPEN_IN_INIT,
    [COORDINATOR_PRESTART] = OPEN_IN_PRESTART,
    [COORDINATOR_MAIN] = OPEN_IN_MAIN,
    [COORDINATOR_POSTSTART] = OPEN_IN_POSTSTART,
    [COORDINATOR_WAIT_ALLOC] = OPEN_IN_WAIT_ALLOC,
    [COORDINATOR_POSTSTOP] = OPEN_IN_POSTSTOP,
};

static const char *const stage_label[STAGE_COUNT] = {
    [PE] = "prestart-ephemeral",  [PS] = "prestart-sidecar",  [MAIN] = "main",
    [QE] = "poststart-ephemeral", [QS] = "poststart-sidecar", [POST] = "poststop",
};

#define MAX_TASKS 8

/* ---- helpers ---- */

static unsigned gates_of(const struct coordinator *coordinator)
{
	unsigned gates = 0;

	for (int stage = 0; stage < STAGE_COUNT; stage++) {
		if (coordinator_gate_open(coordinator, stage))
			gates |= GATE(stage);
	}
	return gates;
}

static void assert_gates(const struct coordinator *coordinator, unsigned expected)
{
	unsigned actual = gates_of(coordinator);

	if (actual == expected)
		return;
	for (int stage = 0; stage < STAGE_COUNT; stage++) {
		if ((actual ^ expected) & GATE(stage))
			print_error("gate %s: expected %s, is %s\n", stage_label[stage],
				    expected & GATE(stage) ? "open" : "closed",
				    actual & GATE(stage) ? "open" : "closed");
	}
	fail();
}

static void assert_state(const struct coordinator *coordinator, enum coordinator_state expected)
{
	assert_string_equal(coordinator_state_name(coordinator->state),
			    coordinator_state_name(expected));
}

/* A coordinator as if it had just entered `state` through updates. */
static struct coordinator coordinator_in(enum coordinator_state state)
{
	struct coordinator coordinator;

	coordinator_init(&coordinator);
	coordinator.state = state;
	for (int stage = 0; stage < STAGE_COUNT; stage++)
		coordinator.gate_open[stage] = open_in_state[state] & GATE(stage);
	return coordinator;
}

/* ---- one update from a given state ---- */

struct update_case {
	const char *name;
	enum coordinator_state from;
	struct coordinator_task tasks[MAX_TASKS];
	size_t task_count;
	enum coordinator_state expected;
	unsigned expected_gates;
};

static const struct update_case update_cases[] = {
    /* init */
    {"init: all pending -> prestart", COORDINATOR_INIT,
     TASKS(PENDING(PE), PENDING(PS), PENDING(MAIN), PENDING(QE), PENDING(QS), PENDING(POST)),
     COORDINATOR_PRESTART, OPEN_IN_PRESTART},
    {"init: a task still running stays", COORDINATOR_INIT,
     TASKS(PENDING(PE), PENDING(PS), RUNNING(MAIN), PENDING(POST)), COORDINATOR_INIT, OPEN_IN_INIT},
    {"init: a poststop task still running stays", COORDINATOR_INIT,
     TASKS(PENDING(PE), PENDING(MAIN), RUNNING(POST)), COORDINATOR_INIT, OPEN_IN_INIT},
    {"init: no prestart tasks -> main", COORDINATOR_INIT,
     TASKS(PENDING(MAIN), PENDING(QE), PENDING(POST)), COORDINATOR_MAIN, OPEN_IN_MAIN},
    {"init: no prestart nor main tasks -> poststart", COORDINATOR_INIT,
     TASKS(PENDING(QE), PENDING(POST)), COORDINATOR_POSTSTART, OPEN_IN_POSTSTART},
    {"init: only poststop tasks -> poststop", COORDINATOR_INIT, TASKS(PENDING(POST), PENDING(POST)),
     COORDINATOR_POSTSTOP, OPEN_IN_POSTSTOP},
    {"init: no tasks -> poststop", COORDINATOR_INIT, NO_TASKS, COORDINATOR_POSTSTOP,
     OPEN_IN_POSTSTOP},
    {"init: all dead -> poststop", COORDINATOR_INIT,
     TASKS(DEAD(PE), FAILED(MAIN), DEAD(QS), PENDING(POST)), COORDINATOR_POSTSTOP,
     OPEN_IN_POSTSTOP},

    /* prestart */
    {"prestart: ephemeral running stays", COORDINATOR_PRESTART,
     TASKS(RUNNING(PE), RUNNING(PS), PENDING(MAIN)), COORDINATOR_PRESTART, OPEN_IN_PRESTART},
    {"prestart: ephemeral not started stays", COORDINATOR_PRESTART,
     TASKS(PENDING(PE), PENDING(MAIN)), COORDINATOR_PRESTART, OPEN_IN_PRESTART},
    {"prestart: ephemeral succeeded, sidecar running -> main", COORDINATOR_PRESTART,
     TASKS(DEAD(PE), RUNNING(PS), PENDING(MAIN), PENDING(POST)), COORDINATOR_MAIN, OPEN_IN_MAIN},
    {"prestart: ephemeral failed stays", COORDINATOR_PRESTART,
     TASKS(FAILED(PE), RUNNING(PS), PENDING(MAIN)), COORDINATOR_PRESTART, OPEN_IN_PRESTART},
    {"prestart: one of two ephemerals failed stays", COORDINATOR_PRESTART,
     TASKS(DEAD(PE), FAILED(PE), PENDING(MAIN)), COORDINATOR_PRESTART, OPEN_IN_PRESTART},
    {"prestart: one of two ephemerals running stays", COORDINATOR_PRESTART,
     TASKS(DEAD(PE), RUNNING(PE), PENDING(MAIN)), COORDINATOR_PRESTART, OPEN_IN_PRESTART},
    {"prestart: sidecar pending stays", COORDINATOR_PRESTART,
     TASKS(DEAD(PE), PENDING(PS), PENDING(MAIN)), COORDINATOR_PRESTART, OPEN_IN_PRESTART},
    {"prestart: sidecar dead stays", COORDINATOR_PRESTART, TASKS(DEAD(PE), DEAD(PS), PENDING(MAIN)),
     COORDINATOR_PRESTART, OPEN_IN_PRESTART},
    {"prestart: one of two sidecars running stays", COORDINATOR_PRESTART,
     TASKS(RUNNING(PS), PENDING(PS), PENDING(MAIN)), COORDINATOR_PRESTART, OPEN_IN_PRESTART},
    {"prestart: ephemeral only, succeeded -> main", COORDINATOR_PRESTART,
     TASKS(DEAD(PE), PENDING(MAIN)), COORDINATOR_MAIN, OPEN_IN_MAIN},
    {"prestart: sidecar only, running -> main", COORDINATOR_PRESTART,
     TASKS(RUNNING(PS), PENDING(MAIN)), COORDINATOR_MAIN, OPEN_IN_MAIN},
    {"prestart: no prestart tasks -> main", COORDINATOR_PRESTART, TASKS(PENDING(MAIN), PENDING(QS)),
     COORDINATOR_MAIN, OPEN_IN_MAIN},
    {"prestart: main already running, no poststart -> wait_alloc", COORDINATOR_PRESTART,
     TASKS(DEAD(PE), RUNNING(PS), RUNNING(MAIN), PENDING(POST)), COORDINATOR_WAIT_ALLOC,
     OPEN_IN_WAIT_ALLOC},
    {"prestart: no main tasks -> poststart", COORDINATOR_PRESTART,
     TASKS(DEAD(PE), RUNNING(PS), PENDING(QE)), COORDINATOR_POSTSTART, OPEN_IN_POSTSTART},
    {"prestart: ephemeral failed, all dead -> poststop", COORDINATOR_PRESTART,
     TASKS(FAILED(PE), DEAD(PS), DEAD(MAIN), PENDING(POST)), COORDINATOR_POSTSTOP,
     OPEN_IN_POSTSTOP},

    /* main */
    {"main: main pending stays", COORDINATOR_MAIN, TASKS(RUNNING(PS), PENDING(MAIN)),
     COORDINATOR_MAIN, OPEN_IN_MAIN},
    {"main: one of two mains pending stays", COORDINATOR_MAIN,
     TASKS(RUNNING(MAIN), PENDING(MAIN), PENDING(QE)), COORDINATOR_MAIN, OPEN_IN_MAIN},
    {"main: main running -> poststart", COORDINATOR_MAIN,
     TASKS(RUNNING(PS), RUNNING(MAIN), PENDING(QE), PENDING(QS)), COORDINATOR_POSTSTART,
     OPEN_IN_POSTSTART},
    {"main: main already dead, sidecar running -> poststart", COORDINATOR_MAIN,
     TASKS(RUNNING(PS), FAILED(MAIN), PENDING(QE)), COORDINATOR_POSTSTART, OPEN_IN_POSTSTART},
    {"main: no main tasks -> poststart", COORDINATOR_MAIN, TASKS(RUNNING(PS), PENDING(QE)),
     COORDINATOR_POSTSTART, OPEN_IN_POSTSTART},
    {"main: main running, no poststart -> wait_alloc", COORDINATOR_MAIN,
     TASKS(RUNNING(MAIN), PENDING(POST)), COORDINATOR_WAIT_ALLOC, OPEN_IN_WAIT_ALLOC},
    {"main: all dead -> poststop", COORDINATOR_MAIN,
     TASKS(DEAD(PS), FAILED(MAIN), DEAD(QE), PENDING(POST)), COORDINATOR_POSTSTOP,
     OPEN_IN_POSTSTOP},

    /* poststart */
    {"poststart: ephemeral pending stays", COORDINATOR_POSTSTART, TASKS(RUNNING(MAIN), PENDING(QE)),
     COORDINATOR_POSTSTART, OPEN_IN_POSTSTART},
    {"poststart: ephemeral running stays", COORDINATOR_POSTSTART,
     TASKS(RUNNING(MAIN), RUNNING(QE), RUNNING(QS)), COORDINATOR_POSTSTART, OPEN_IN_POSTSTART},
    {"poststart: one of two ephemerals running stays", COORDINATOR_POSTSTART,
     TASKS(RUNNING(MAIN), DEAD(QE), RUNNING(QE)), COORDINATOR_POSTSTART, OPEN_IN_POSTSTART},
    {"poststart: ephemeral dead -> wait_alloc", COORDINATOR_POSTSTART,
     TASKS(RUNNING(MAIN), DEAD(QE), RUNNING(QS)), COORDINATOR_WAIT_ALLOC, OPEN_IN_WAIT_ALLOC},
    {"poststart: ephemeral failed -> wait_alloc", COORDINATOR_POSTSTART,
     TASKS(RUNNING(MAIN), FAILED(QE)), COORDINATOR_WAIT_ALLOC, OPEN_IN_WAIT_ALLOC},
    {"poststart: sidecar only, pending -> wait_alloc", COORDINATOR_POSTSTART,
     TASKS(RUNNING(MAIN), PENDING(QS)), COORDINATOR_WAIT_ALLOC, OPEN_IN_WAIT_ALLOC},
    {"poststart: no poststart tasks -> wait_alloc", COORDINATOR_POSTSTART, TASKS(RUNNING(MAIN)),
     COORDINATOR_WAIT_ALLOC, OPEN_IN_WAIT_ALLOC},
    {"poststart: all dead -> poststop", COORDINATOR_POSTSTART,
     TASKS(DEAD(PS), DEAD(MAIN), FAILED(QE), DEAD(QS), PENDING(POST)), COORDINATOR_POSTSTOP,
     OPEN_IN_POSTSTOP},

    /* wait_alloc */
    {"wait_alloc: main running stays", COORDINATOR_WAIT_ALLOC,
     TASKS(RUNNING(PS), RUNNING(MAIN), DEAD(QE), RUNNING(QS), PENDING(POST)),
     COORDINATOR_WAIT_ALLOC, OPEN_IN_WAIT_ALLOC},
    {"wait_alloc: main dead, sidecars running stays", COORDINATOR_WAIT_ALLOC,
     TASKS(RUNNING(PS), DEAD(MAIN), DEAD(QE), RUNNING(QS)), COORDINATOR_WAIT_ALLOC,
     OPEN_IN_WAIT_ALLOC},
    {"wait_alloc: main restarting stays", COORDINATOR_WAIT_ALLOC,
     TASKS(PENDING(MAIN), PENDING(POST)), COORDINATOR_WAIT_ALLOC, OPEN_IN_WAIT_ALLOC},
    {"wait_alloc: all dead -> poststop", COORDINATOR_WAIT_ALLOC,
     TASKS(DEAD(PE), DEAD(PS), FAILED(MAIN), DEAD(QE), DEAD(QS), PENDING(POST)),
     COORDINATOR_POSTSTOP, OPEN_IN_POSTSTOP},

    /* poststop: the end of the run, whatever the tasks do */
    {"poststop: poststop running stays", COORDINATOR_POSTSTOP, TASKS(DEAD(MAIN), RUNNING(POST)),
     COORDINATOR_POSTSTOP, OPEN_IN_POSTSTOP},
    {"poststop: all dead stays", COORDINATOR_POSTSTOP, TASKS(DEAD(MAIN), DEAD(POST)),
     COORDINATOR_POSTSTOP, OPEN_IN_POSTSTOP},
    {"poststop: tasks pending again stays", COORDINATOR_POSTSTOP,
     TASKS(PENDING(PE), PENDING(MAIN), PENDING(POST)), COORDINATOR_POSTSTOP, OPEN_IN_POSTSTOP},
};

static void test_update_case(void **state)
{
	const struct update_case *test = *state;
	struct coordinator coordinator = coordinator_in(test->from);

	bool changed = coordinator_update(&coordinator, test->tasks, test->task_count);

	assert_state(&coordinator, test->expected);
	assert_gates(&coordinator, test->expected_gates);
	if (test->from == test->expected)
		assert_false(changed);
	else
		assert_true(changed);
}

/* ---- gate_reachable: every stage from every state ---- */

/* Spelled out rather than derived: the gates a ForceRestart may still wait
 * for. Poststop is reachable from everywhere. */
static const unsigned reachable_from_state[] = {
    [COORDINATOR_INIT] = G_PE | G_PS | G_MAIN | G_QE | G_QS | G_POST,
    [COORDINATOR_PRESTART] = G_PE | G_PS | G_MAIN | G_QE | G_QS | G_POST,
    [COORDINATOR_MAIN] = G_PS | G_MAIN | G_QE | G_QS | G_POST,
    [COORDINATOR_POSTSTART] = G_PS | G_MAIN | G_QE | G_QS | G_POST,
    [COORDINATOR_WAIT_ALLOC] = G_PS | G_MAIN | G_QS | G_POST,
    [COORDINATOR_POSTSTOP] = G_POST,
};

static void test_gate_reachable_from_every_state(void **state __attribute__((unused)))
{
	for (unsigned from = 0; from < ARRAY_SIZE(reachable_from_state); from++) {
		struct coordinator coordinator = coordinator_in(from);

		for (int stage = 0; stage < STAGE_COUNT; stage++) {
			bool expected = reachable_from_state[from] & GATE(stage);
			bool actual = coordinator_gate_reachable(&coordinator, stage);

			if (actual != expected) {
				print_error("from %s, gate %s: expected %s\n",
					    coordinator_state_name(from), stage_label[stage],
					    expected ? "reachable" : "unreachable");
				fail();
			}
		}
	}
}

static void test_gate_of_unknown_stage(void **state __attribute__((unused)))
{
	struct coordinator coordinator = coordinator_in(COORDINATOR_PRESTART);

	assert_false(coordinator_gate_open(&coordinator, STAGE_COUNT));
	assert_false(coordinator_gate_reachable(&coordinator, STAGE_COUNT));
}

/* ---- state names ---- */

static void test_state_names(void **state __attribute__((unused)))
{
	assert_string_equal(coordinator_state_name(COORDINATOR_INIT), "init");
	assert_string_equal(coordinator_state_name(COORDINATOR_PRESTART), "prestart");
	assert_string_equal(coordinator_state_name(COORDINATOR_MAIN), "main");
	assert_string_equal(coordinator_state_name(COORDINATOR_POSTSTART), "poststart");
	assert_string_equal(coordinator_state_name(COORDINATOR_WAIT_ALLOC), "running");
	/* Nomad prints "poststart" here, by mistake. */
	assert_string_equal(coordinator_state_name(COORDINATOR_POSTSTOP), "poststop");
	assert_string_equal(coordinator_state_name((enum coordinator_state)42), "unknown");
}

/* ---- init and restart ---- */

static void test_init_closes_every_gate(void **state __attribute__((unused)))
{
	struct coordinator coordinator;

	coordinator_init(&coordinator);
	assert_state(&coordinator, COORDINATOR_INIT);
	assert_gates(&coordinator, OPEN_IN_INIT);
}

static void test_restart_waits_for_every_task_pending(void **state __attribute__((unused)))
{
	struct coordinator coordinator = coordinator_in(COORDINATOR_WAIT_ALLOC);
	const struct coordinator_task stopping[] = {DEAD(PE), RUNNING(PS), RUNNING(MAIN),
						    PENDING(POST)};
	const struct coordinator_task main_stopped[] = {DEAD(PE), RUNNING(PS), PENDING(MAIN),
							PENDING(POST)};
	const struct coordinator_task all_pending[] = {PENDING(PE), PENDING(PS), PENDING(MAIN),
						       PENDING(POST)};

	coordinator_restart(&coordinator);
	assert_state(&coordinator, COORDINATOR_INIT);
	assert_gates(&coordinator, OPEN_IN_INIT);

	/* The old run is still being stopped: nothing may start yet. */
	assert_false(coordinator_update(&coordinator, stopping, ARRAY_SIZE(stopping)));
	assert_state(&coordinator, COORDINATOR_INIT);
	assert_gates(&coordinator, OPEN_IN_INIT);

	assert_false(coordinator_update(&coordinator, main_stopped, ARRAY_SIZE(main_stopped)));
	assert_state(&coordinator, COORDINATOR_INIT);

	assert_true(coordinator_update(&coordinator, all_pending, ARRAY_SIZE(all_pending)));
	assert_state(&coordinator, COORDINATOR_PRESTART);
	assert_gates(&coordinator, OPEN_IN_PRESTART);
}

/* coordinator_step moves one state at a time, where update would run
 * through several: init -> prestart -> main for a group of main tasks. */
static void test_step_moves_one_state(void **state __attribute__((unused)))
{
	struct coordinator coordinator;
	const struct coordinator_task tasks[] = {PENDING(MAIN), PENDING(POST)};
	coordinator_init(&coordinator);

	assert_true(coordinator_step(&coordinator, tasks, ARRAY_SIZE(tasks)));
	assert_state(&coordinator, COORDINATOR_PRESTART);
	assert_gates(&coordinator, OPEN_IN_PRESTART);
	assert_true(coordinator_step(&coordinator, tasks, ARRAY_SIZE(tasks)));
	assert_state(&coordinator, COORDINATOR_MAIN);
	assert_false(coordinator_step(&coordinator, tasks, ARRAY_SIZE(tasks)));
	assert_state(&coordinator, COORDINATOR_MAIN);
}

static void test_restart_from_poststop(void **state __attribute__((unused)))
{
	struct coordinator coordinator = coordinator_in(COORDINATOR_POSTSTOP);
	const struct coordinator_task all_pending[] = {PENDING(MAIN), PENDING(POST)};

	coordinator_restart(&coordinator);
	assert_state(&coordinator, COORDINATOR_INIT);
	assert_gates(&coordinator, OPEN_IN_INIT);

	assert_true(coordinator_update(&coordinator, all_pending, ARRAY_SIZE(all_pending)));
	assert_state(&coordinator, COORDINATOR_MAIN);
	assert_gates(&coordinator, OPEN_IN_MAIN);
}

/* A restore without the group's own record: the state its tasks show,
 * never init once one of them has started. */
static void test_resume_goes_where_the_tasks_show(void **state __attribute__((unused)))
{
	static const struct {
		struct coordinator_task tasks[4];
		size_t task_count;
		enum coordinator_state resumed;
	} cases[] = {
	    {TASKS(PENDING(PE), PENDING(MAIN)), COORDINATOR_INIT},
	    {TASKS(RUNNING(PE), PENDING(MAIN)), COORDINATOR_PRESTART},
	    {TASKS(DEAD(PE), RUNNING(PS), PENDING(MAIN)), COORDINATOR_PRESTART},
	    /* Some main tasks started, others not yet (killed mid-start). */
	    {TASKS(DEAD(PE), RUNNING(MAIN), PENDING(MAIN)), COORDINATOR_MAIN},
	    {TASKS(RUNNING(PS), RUNNING(MAIN), PENDING(QE)), COORDINATOR_MAIN},
	    {TASKS(RUNNING(MAIN), DEAD(QE), RUNNING(QS)), COORDINATOR_POSTSTART},
	    {TASKS(DEAD(MAIN), RUNNING(POST)), COORDINATOR_POSTSTOP},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct coordinator coordinator;
		coordinator_init(&coordinator);
		coordinator_resume(&coordinator, cases[i].tasks, cases[i].task_count);
		assert_state(&coordinator, cases[i].resumed);
	}
	/* Then on as usual: the pending main task's gate is open, and once
	 * it runs the group moves on. */
	struct coordinator coordinator;
	const struct coordinator_task half[] = {RUNNING(MAIN), PENDING(MAIN)};
	const struct coordinator_task all[] = {RUNNING(MAIN), RUNNING(MAIN)};
	coordinator_resume(&coordinator, half, ARRAY_SIZE(half));
	assert_gates(&coordinator, OPEN_IN_MAIN);
	assert_false(coordinator_update(&coordinator, half, ARRAY_SIZE(half)));
	assert_true(coordinator_update(&coordinator, all, ARRAY_SIZE(all)));
	assert_state(&coordinator, COORDINATOR_WAIT_ALLOC);
}

/* As in Nomad, "all dead" wins over everything, init included: the caller
 * must report the tasks it is about to run again as pending, or a restarted
 * group whose tasks were all dead goes straight back to poststop. */
static void test_restart_with_dead_tasks_goes_to_poststop(void **state __attribute__((unused)))
{
	struct coordinator coordinator = coordinator_in(COORDINATOR_POSTSTOP);
	const struct coordinator_task all_dead[] = {DEAD(MAIN), DEAD(POST)};

	coordinator_restart(&coordinator);
	assert_true(coordinator_update(&coordinator, all_dead, ARRAY_SIZE(all_dead)));
	assert_state(&coordinator, COORDINATOR_POSTSTOP);
}

/* ---- a whole run of a group with one task per stage ---- */

struct walk_step {
	const char *what;
	enum coordinator_task_state pe, ps, main, qe, qs, post;
	bool pe_failed;
	enum coordinator_state expected;
	unsigned expected_gates;
	bool expected_changed;
};

#define P COORD_TASK_PENDING
#define R COORD_TASK_RUNNING
#define D COORD_TASK_DEAD

static const struct walk_step walk[] = {
    /* {what, pe, ps, main, qe, qs, post, pe failed, expected state, gates, changed} */
    {"all pending", P, P, P, P, P, P, false, COORDINATOR_PRESTART, OPEN_IN_PRESTART, true},
    {"prestart tasks start", R, P, P, P, P, P, false, COORDINATOR_PRESTART, OPEN_IN_PRESTART,
     false},
    {"sidecar runs", R, R, P, P, P, P, false, COORDINATOR_PRESTART, OPEN_IN_PRESTART, false},
    {"ephemeral fails", D, R, P, P, P, P, true, COORDINATOR_PRESTART, OPEN_IN_PRESTART, false},
    {"ephemeral restarting", P, R, P, P, P, P, false, COORDINATOR_PRESTART, OPEN_IN_PRESTART,
     false},
    {"ephemeral runs again", R, R, P, P, P, P, false, COORDINATOR_PRESTART, OPEN_IN_PRESTART,
     false},
    {"ephemeral succeeds", D, R, P, P, P, P, false, COORDINATOR_MAIN, OPEN_IN_MAIN, true},
    {"main runs", D, R, R, P, P, P, false, COORDINATOR_POSTSTART, OPEN_IN_POSTSTART, true},
    {"poststart tasks run", D, R, R, R, R, P, false, COORDINATOR_POSTSTART, OPEN_IN_POSTSTART,
     false},
    {"poststart ephemeral done", D, R, R, D, R, P, false, COORDINATOR_WAIT_ALLOC,
     OPEN_IN_WAIT_ALLOC, true},
    {"main restarting", D, R, P, D, R, P, false, COORDINATOR_WAIT_ALLOC, OPEN_IN_WAIT_ALLOC, false},
    {"main exits for good", D, R, D, D, R, P, false, COORDINATOR_WAIT_ALLOC, OPEN_IN_WAIT_ALLOC,
     false},
    {"prestart sidecar stopped", D, D, D, D, R, P, false, COORDINATOR_WAIT_ALLOC,
     OPEN_IN_WAIT_ALLOC, false},
    {"poststart sidecar stopped", D, D, D, D, D, P, false, COORDINATOR_POSTSTOP, OPEN_IN_POSTSTOP,
     true},
    {"poststop runs", D, D, D, D, D, R, false, COORDINATOR_POSTSTOP, OPEN_IN_POSTSTOP, false},
    {"poststop done", D, D, D, D, D, D, false, COORDINATOR_POSTSTOP, OPEN_IN_POSTSTOP, false},
};

#undef P
#undef R
#undef D

static void test_walk_through_a_run(void **state __attribute__((unused)))
{
	struct coordinator coordinator;

	coordinator_init(&coordinator);
	for (size_t i = 0; i < ARRAY_SIZE(walk); i++) {
		const struct walk_step *step = &walk[i];
		const struct coordinator_task tasks[] = {
		    {POST, step->post, false}, {QS, step->qs, false},
		    {QE, step->qe, false},     {MAIN, step->main, false},
		    {PS, step->ps, false},     {PE, step->pe, step->pe_failed},
		};

		print_message("step %zu: %s\n", i, step->what);
		bool changed = coordinator_update(&coordinator, tasks, ARRAY_SIZE(tasks));

		assert_state(&coordinator, step->expected);
		assert_gates(&coordinator, step->expected_gates);
		if (step->expected_changed)
			assert_true(changed);
		else
			assert_false(changed);
	}
}

/* ---- main ---- */

static const struct CMUnitTest fixed_tests[] = {
    cmocka_unit_test(test_init_closes_every_gate),
    cmocka_unit_test(test_gate_reachable_from_every_state),
    cmocka_unit_test(test_gate_of_unknown_stage),
    cmocka_unit_test(test_state_names),
    cmocka_unit_test(test_restart_waits_for_every_task_pending),
    cmocka_unit_test(test_step_moves_one_state),
    cmocka_unit_test(test_restart_from_poststop),
    cmocka_unit_test(test_resume_goes_where_the_tasks_show),
    cmocka_unit_test(test_restart_with_dead_tasks_goes_to_poststop),
    cmocka_unit_test(test_walk_through_a_run),
};

int main(void)
{
	/* One cmocka test per table row, named after it, so that a failure
	 * says which case broke. */
	static struct CMUnitTest tests[ARRAY_SIZE(fixed_tests) + ARRAY_SIZE(update_cases)];
	size_t count = 0;

	for (size_t i = 0; i < ARRAY_SIZE(fixed_tests); i++)
		tests[count++] = fixed_tests[i];
	for (size_t i = 0; i < ARRAY_SIZE(update_cases); i++) {
		tests[count++] = (struct CMUnitTest){
		    .name = update_cases[i].name,
		    .test_func = test_update_case,
		    .initial_state = (void *)&update_cases[i],
		};
	}
	return cmocka_run_group_tests_name("coordinator", tests, NULL, NULL);
}
