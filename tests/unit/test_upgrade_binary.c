/* Which file `corral upgrade` may run: a regular file, and directories
 * on its way, owned by root or corral's user and writable by nobody
 * else (a sticky directory may be: others cannot replace an entry they
 * do not own there). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "supervisor/upgrade/upgrade_binary.h"

struct binary_case {
	bool directory;
	mode_t mode;
	uid_t owner;
	const char *why; /* NULL: trusted */
};

static void test_who_may_have_written_it(void **state)
{
	(void)state;
	const uid_t corral = 1000;
	const struct binary_case cases[] = {
	    {false, S_IFREG | 0755, 0, NULL},
	    {false, S_IFREG | 0700, 1000, NULL},
	    {false, S_IFREG | 0775, 0,
	     "/x may be written by others (owner uid 0, mode 0775): they could replace what "
	     "corral would run; make it writable by its owner only"},
	    {false, S_IFREG | 0757, 1000,
	     "/x may be written by others (owner uid 1000, mode 0757)"},
	    {false, S_IFREG | 0755, 1001,
	     "/x belongs to uid 1001 (mode 0755), not to root or to corral's user (uid 1000)"},
	    {false, S_IFDIR | 0755, 0, "/x is not a regular file"},
	    {true, S_IFDIR | 0755, 0, NULL},
	    {true, S_IFDIR | 01777, 0, NULL}, /* /tmp */
	    {true, S_IFDIR | 0777, 0, "its directory /x may be written by others"},
	    {true, S_IFDIR | 01777, 1001, "its directory /x belongs to uid 1001"},
	    {true, S_IFREG | 0755, 0, "/x is not a directory"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[512] = "";
		int result = upgrade_binary_judge("/x", cases[i].directory, cases[i].mode,
						  cases[i].owner, corral, why, sizeof(why));
		if (!cases[i].why) {
			assert_int_equal(result, 0);
			continue;
		}
		assert_int_equal(result, -EPERM);
		if (!strstr(why, cases[i].why))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, why, cases[i].why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_who_may_have_written_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
