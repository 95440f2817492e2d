/* Who gets a control connection when many are open: root and corral's
 * own user always (closing the longest idle one when every slot is
 * taken), other users within their own cap and outside the room kept
 * for the owners. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "supervisor/control/control_admission.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct control_admission_limits limits = {
    .total = 100, .reserved_for_owners = 10, .per_user = 5};

struct admission_case {
	size_t total, of_this_user;
	bool any_idle, owner;
	enum control_admission expected;
};

static const struct admission_case cases[] = {
    /* owners */
    {0, 0, false, true, CONTROL_ADMIT},
    {99, 0, false, true, CONTROL_ADMIT}, /* into the reserved room */
    {100, 0, true, true, CONTROL_ADMIT_AFTER_CLOSING_IDLE},
    {100, 0, false, true, CONTROL_REFUSE_FULL},              /* every one streaming */
    {100, 50, true, true, CONTROL_ADMIT_AFTER_CLOSING_IDLE}, /* no per-user cap */
    /* other users */
    {0, 0, false, false, CONTROL_ADMIT},
    {10, 4, false, false, CONTROL_ADMIT},
    {10, 5, false, false, CONTROL_REFUSE_USER_LIMIT},
    {89, 0, false, false, CONTROL_ADMIT},
    {90, 0, true, false, CONTROL_REFUSE_FULL},  /* the rest is the owners' */
    {100, 0, true, false, CONTROL_REFUSE_FULL}, /* never closes others' */
};

static void test_admission_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct admission_case *c = &cases[i];
		struct control_admission_counts counts = {
		    .total = c->total, .of_this_user = c->of_this_user, .any_idle = c->any_idle};
		print_message("case %zu\n", i);
		assert_int_equal(control_admission_decide(&limits, &counts, c->owner), c->expected);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_admission_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
