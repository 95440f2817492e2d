/* corral's own RLIMIT_NOFILE (fd_limit_wanted): the soft limit up to the
 * hard one as before, and the hard one up to what the config needs, never
 * beyond fs.nr_open and never down. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "supervisor/pid1/fd_limit.h"

#define NR_OPEN ((rlim_t)1048576)

static void assert_wanted(rlim_t soft, rlim_t hard, size_t needed, rlim_t nr_open,
			  rlim_t wanted_soft, rlim_t wanted_hard)
{
	struct rlimit wanted =
	    fd_limit_wanted((struct rlimit){.rlim_cur = soft, .rlim_max = hard}, needed, nr_open);
	assert_int_equal(wanted.rlim_cur, wanted_soft);
	assert_int_equal(wanted.rlim_max, wanted_hard);
}

static void test_enough_keeps_the_hard_limit_and_raises_the_soft_one(void **state)
{
	(void)state;
	assert_wanted(1024, 20000, 3064, NR_OPEN, 20000, 20000);
	assert_wanted(20000, 20000, 20000, NR_OPEN, 20000, 20000);
}

static void test_more_than_the_hard_limit_asks_for_what_is_needed(void **state)
{
	(void)state;
	/* A VM's init: 1024/4096, 10,000 tasks. */
	assert_wanted(1024, 4096, 30064, NR_OPEN, 30064, 30064);
	assert_wanted(20000, 20000, 30064, NR_OPEN, 30064, 30064);
}

static void test_never_beyond_nr_open(void **state)
{
	(void)state;
	assert_wanted(1024, 4096, 30064, 20000, 20000, 20000);
	/* nr_open below the hard limit already (lowered since): unchanged. */
	assert_wanted(1024, 4096, 30064, 2048, 4096, 4096);
}

static void test_an_unlimited_hard_limit_stays(void **state)
{
	(void)state;
	assert_wanted(1024, RLIM_INFINITY, 30064, NR_OPEN, RLIM_INFINITY, RLIM_INFINITY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_enough_keeps_the_hard_limit_and_raises_the_soft_one),
	    cmocka_unit_test(test_more_than_the_hard_limit_asks_for_what_is_needed),
	    cmocka_unit_test(test_never_beyond_nr_open),
	    cmocka_unit_test(test_an_unlimited_hard_limit_stays),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
