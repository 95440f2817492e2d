/* The CLI's directory rule for a default socket place: owned by root or
 * the caller, writable by neither group nor others, and a directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "cli/control_socket_trust.h"

struct directory_case {
	mode_t mode;
	uid_t owner;
	const char *why; /* NULL: trusted */
};

static void test_the_directory_rule(void **state)
{
	(void)state;
	const uid_t caller = 1000;
	const struct directory_case cases[] = {
	    {S_IFDIR | 0700, 1000, NULL},
	    {S_IFDIR | 0755, 0, NULL},
	    {S_IFDIR | 0750, 0, NULL}, /* a control group's directory */
	    {S_IFDIR | 0755, 1002,
	     "its directory /tmp/corral-1000 belongs to uid 1002 (mode 0755), not to root or "
	     "to you (uid 1000)"},
	    {S_IFDIR | 0770, 1000,
	     "its directory /tmp/corral-1000 may be written by others (owner uid 1000, mode "
	     "0770)"},
	    {S_IFDIR | 01777, 0,
	     "its directory /tmp/corral-1000 may be written by others (owner uid 0, mode 1777)"},
	    {S_IFLNK | 0777, 1000,
	     "/tmp/corral-1000 is a symlink, not a directory (owner uid 1000)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[256] = "";
		int result = control_socket_judge_directory(
		    "/tmp/corral-1000", cases[i].mode, cases[i].owner, caller, why, sizeof(why));
		if (!cases[i].why) {
			assert_int_equal(result, 0);
			continue;
		}
		assert_int_equal(result, -1);
		assert_string_equal(why, cases[i].why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_directory_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
