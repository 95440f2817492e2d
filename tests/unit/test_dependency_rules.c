/* Unit tests of the dependency graph's pure decisions: when a condition
 * holds, waits or is broken, and the stop order. The expected verdicts are
 * spelled out from docs/config.md (Ordering), not from the code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "supervisor/lifecycle/dependency_rules.h"

#define ARRAY_SIZE(array) (sizeof(array) / sizeof((array)[0]))

#define H DEPENDENCY_HOLDS
#define W DEPENDENCY_WAITS
#define B DEPENDENCY_BROKEN

struct verdict_row {
	const char *what;
	struct dependency_target target;
	/* started, ready, healthy, completed, exited */
	enum dependency_verdict expected[5];
};

static const struct verdict_row rows[] = {
    {"pending", {.state = TASK_PENDING, .may_run_again = true}, {W, W, W, W, W}},
    {"starting", {.state = TASK_STARTING, .may_run_again = true}, {W, W, W, W, W}},
    {"running, not ready", {.state = TASK_RUNNING, .may_run_again = true}, {H, W, W, W, W}},
    {"running and ready",
     {.state = TASK_RUNNING, .ready = true, .may_run_again = true},
     {H, H, W, W, W}},
    {"running, ready and healthy",
     {.state = TASK_RUNNING, .ready = true, .healthy = true, .may_run_again = true},
     {H, H, H, W, W}},
    {"running but being stopped",
     {.state = TASK_RUNNING,
      .stopping = true,
      .ready = true,
      .healthy = true,
      .may_run_again = true},
     {W, W, W, W, W}},
    {"dead after a success",
     {.state = TASK_DEAD, .succeeded = true, .may_run_again = true},
     {H, H, W, H, H}},
    {"dead after a success, group stopping",
     {.state = TASK_DEAD, .succeeded = true},
     {H, H, B, H, H}},
    {"dead, stopped by request, group active",
     {.state = TASK_DEAD, .may_run_again = true},
     {W, W, W, W, H}},
    {"dead, stopped, group stopping", {.state = TASK_DEAD}, {B, B, B, B, H}},
    {"dead, failed for good",
     {.state = TASK_DEAD, .failed = true, .may_run_again = true},
     {B, B, B, B, H}},
};

static void test_every_condition_against_every_state(void **state)
{
	(void)state;
	for (size_t r = 0; r < ARRAY_SIZE(rows); r++)
		for (int condition = DEPENDS_STARTED; condition <= DEPENDS_EXITED; condition++) {
			enum dependency_verdict got = dependency_verdict(
			    (enum dependency_condition)condition, &rows[r].target);
			if (got != rows[r].expected[condition])
				fail_msg(
				    "%s, %s: got %d, expected %d", rows[r].what,
				    dependency_condition_name((enum dependency_condition)condition),
				    got, rows[r].expected[condition]);
		}
}

#define T  DEPENDENCY_TIMED_OUT
#define WV DEPENDENCY_WAIVED

/* An `after:` entry's timeout and `required: false`, on the `ready`
 * condition (the others differ only in when they hold, tested above). */
struct wait_row {
	const char *what;
	struct dependency_target target;
	/* required, required timed out, optional, optional timed out */
	enum dependency_verdict expected[4];
};

static const struct wait_row wait_rows[] = {
    {"ready", {.state = TASK_RUNNING, .ready = true, .may_run_again = true}, {H, H, H, H}},
    {"pending", {.state = TASK_PENDING, .may_run_again = true}, {W, T, W, WV}},
    {"running, not ready yet", {.state = TASK_RUNNING, .may_run_again = true}, {W, T, W, WV}},
    {"never started (autostart: false)",
     {.state = TASK_DEAD, .may_run_again = true},
     {W, T, WV, WV}},
    {"failed for good",
     {.state = TASK_DEAD, .failed = true, .may_run_again = true},
     {B, B, WV, WV}},
    {"dead, group stopping", {.state = TASK_DEAD}, {B, B, WV, WV}},
};

static void test_timeouts_and_optional_waits(void **state)
{
	(void)state;
	for (size_t r = 0; r < ARRAY_SIZE(wait_rows); r++)
		for (int column = 0; column < 4; column++) {
			struct dependency_wait wait = {
			    .condition = DEPENDS_READY,
			    .optional = column >= 2,
			    .timed_out = column % 2 == 1,
			};
			enum dependency_verdict got =
			    dependency_wait_verdict(&wait, &wait_rows[r].target);
			if (got != wait_rows[r].expected[column])
				fail_msg("%s, column %d: got %d, expected %d", wait_rows[r].what,
					 column, got, wait_rows[r].expected[column]);
		}
	assert_true(dependency_verdict_allows_start(H));
	assert_true(dependency_verdict_allows_start(WV));
	assert_false(dependency_verdict_allows_start(W));
	assert_false(dependency_verdict_allows_start(T));
	assert_false(dependency_verdict_allows_start(B));
}

static void test_wait_deadlines(void **state)
{
	(void)state;
	assert_int_equal(dependency_wait_deadline(1000, 0, 1000), 0); /* no timeout */
	assert_int_equal(dependency_wait_deadline(1000, 500, 1000), 1500);
	assert_int_equal(dependency_wait_deadline(1000, 500, 1499), 1500);
	assert_int_equal(dependency_wait_deadline(1000, 500, 1500), 0); /* past */
	assert_int_equal(dependency_wait_deadline(UINT64_MAX - 1, 500, 0), 0);
}

static void test_stop_tiers(void **state)
{
	(void)state;
	assert_int_equal(dependency_stop_tier(STAGE_MAIN), 0);
	assert_int_equal(dependency_stop_tier(STAGE_PRESTART_EPHEMERAL), 0);
	assert_int_equal(dependency_stop_tier(STAGE_POSTSTART_EPHEMERAL), 0);
	assert_int_equal(dependency_stop_tier(STAGE_POSTSTART_SIDECAR), 1);
	assert_int_equal(dependency_stop_tier(STAGE_PRESTART_SIDECAR), 2);
	assert_int_equal(dependency_stop_tier(STAGE_POSTSTOP), STOP_TIER_NONE);
}

/* The order as a list of task numbers, first stopped first. */
static void order_of(size_t count, const unsigned *tiers, const struct dependency_edge *edges,
		     size_t edge_count, size_t *order)
{
	size_t *scratch = calloc(3 * count + 1 + edge_count, sizeof(*scratch));
	size_t *position = calloc(count, sizeof(*position));
	assert_non_null(scratch);
	assert_non_null(position);
	for (size_t i = 0; i < count; i++)
		position[i] = count; /* unset */
	dependency_stop_order(count, tiers, edges, edge_count, scratch, position);
	for (size_t i = 0; i < count; i++) {
		assert_true(position[i] < count);
		order[position[i]] = i;
	}
	free(scratch);
	free(position);
}

static void test_without_edges_tiers_then_numbers(void **state)
{
	(void)state;
	/* 0 prestart sidecar, 1 main, 2 poststart sidecar, 3 main, 4 poststop */
	const unsigned tiers[] = {2, 0, 1, 0, STOP_TIER_NONE};
	size_t order[5];
	order_of(5, tiers, NULL, 0, order);
	const size_t expected[] = {1, 3, 2, 0, 4};
	assert_memory_equal(order, expected, sizeof(expected));
}

static void test_a_dependency_wins_over_the_tiers(void **state)
{
	(void)state;
	/* 0 main, 1 poststart sidecar that waits for 0, 2 prestart sidecar */
	const unsigned tiers[] = {0, 1, 2};
	const struct dependency_edge edges[] = {{.from = 1, .to = 0}};
	size_t order[3];
	order_of(3, tiers, edges, ARRAY_SIZE(edges), order);
	const size_t expected[] = {1, 0, 2};
	assert_memory_equal(order, expected, sizeof(expected));
}

static void test_kubernetes_chain_stops_sidecars_in_reverse(void **state)
{
	(void)state;
	/* init1 side1 init2 side2 init3 main, as order: sequential links them */
	const unsigned tiers[] = {0, 2, 0, 2, 0, 0};
	const struct dependency_edge edges[] = {
	    {.from = 1, .to = 0}, {.from = 2, .to = 1}, {.from = 3, .to = 2}, {.from = 4, .to = 3}};
	size_t order[6], position[6];
	order_of(6, tiers, edges, ARRAY_SIZE(edges), order);
	for (size_t i = 0; i < 6; i++)
		position[order[i]] = i;
	assert_true(position[5] < position[3]); /* main before side2 */
	assert_true(position[3] < position[1]); /* side2 before side1 */
	assert_true(position[4] < position[3]); /* init3 waits for side2 */
}

static void test_every_edge_is_respected_in_a_random_graph(void **state)
{
	(void)state;
	enum { COUNT = 50, EDGES = 120 };
	unsigned tiers[COUNT];
	struct dependency_edge edges[EDGES];
	size_t order[COUNT], position[COUNT];
	srand(12345);
	for (size_t i = 0; i < COUNT; i++)
		tiers[i] = (unsigned)(rand() % 4);
	/* Edges from a higher number to a lower one: no cycle. */
	for (size_t e = 0; e < EDGES; e++) {
		size_t from = 1 + (size_t)rand() % (COUNT - 1);
		edges[e] = (struct dependency_edge){.from = from, .to = (size_t)rand() % from};
	}
	order_of(COUNT, tiers, edges, EDGES, order);
	for (size_t i = 0; i < COUNT; i++)
		position[order[i]] = i;
	for (size_t e = 0; e < EDGES; e++)
		assert_true(position[edges[e].from] < position[edges[e].to]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_condition_against_every_state),
	    cmocka_unit_test(test_timeouts_and_optional_waits),
	    cmocka_unit_test(test_wait_deadlines),
	    cmocka_unit_test(test_stop_tiers),
	    cmocka_unit_test(test_without_edges_tiers_then_numbers),
	    cmocka_unit_test(test_a_dependency_wins_over_the_tiers),
	    cmocka_unit_test(test_kubernetes_chain_stops_sidecars_in_reverse),
	    cmocka_unit_test(test_every_edge_is_respected_in_a_random_graph),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
