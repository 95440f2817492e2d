/* `isolation.devices`: the forms an entry takes, the group -> task merge,
 * and each mistake with its place and message. The paths are looked at
 * with stat(2): /dev/null and /dev/zero are there wherever tests run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/load/config_load.h"
#include "config_cases.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A task "app" in group "web": its value starts at line 4, column 12. */
#define TASK(flow) "groups:\n  web:\n    tasks:\n      app: " flow "\n"

static void assert_device(const struct device_config *device, const char *source,
			  const char *target, unsigned permissions)
{
	assert_string_equal(device->source, source);
	if (target)
		assert_string_equal(device->target, target);
	else
		assert_null(device->target);
	assert_int_equal(device->permissions, permissions);
}

static void test_forms(void **state)
{
	struct config *config = parse_ok(
	    TASK("{command: a, isolation: {devices: [/dev/null, {path: /dev/zero, permissions: r},"
		 " {path: /dev/full, target: /dev/full2, permissions: rwm},"
		 " {path: /dev/random, target: /dev/random, permissions: mw}]}}"));
	const struct isolation_config *isolation = isolation_of(config, "web/app");

	assert_int_equal(isolation->device_count, 4);
	/* Read and write unless written otherwise. */
	assert_device(&isolation->devices[0], "/dev/null", NULL, DEVICE_READ | DEVICE_WRITE);
	assert_device(&isolation->devices[1], "/dev/zero", NULL, DEVICE_READ);
	assert_device(&isolation->devices[2], "/dev/full", "/dev/full2",
		      DEVICE_READ | DEVICE_WRITE | DEVICE_MKNOD);
	assert_string_equal(device_config_target(&isolation->devices[2]), "/dev/full2");
	/* A target that is the path itself is no target. */
	assert_device(&isolation->devices[3], "/dev/random", NULL, DEVICE_WRITE | DEVICE_MKNOD);
	assert_string_equal(device_config_target(&isolation->devices[3]), "/dev/random");
	config_free(config);
}

static void test_none_by_default(void **state)
{
	struct config *config = parse_ok(TASK("{command: a, isolation: {devices: []}}"));
	const struct isolation_config *isolation = isolation_of(config, "web/app");

	assert_true(isolation->enabled);
	assert_int_equal(isolation->device_count, 0);
	assert_null(isolation->devices);
	config_free(config);
}

static void test_group_devices_then_the_tasks(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  web:\n"
		     "    isolation: {devices: [/dev/null, {path: /dev/zero, permissions: r}]}\n"
		     "    tasks:\n"
		     "      same: {command: a}\n"
		     "      more: {command: a, isolation: {devices: [/dev/full]}}\n"
		     "      narrower: {command: a, isolation: {devices: [{path: /dev/null, "
		     "permissions: r}, /dev/urandom]}}\n"
		     "      elsewhere: {command: a, isolation: {devices: [{path: /dev/random, "
		     "target: /dev/zero}]}}\n");
	const struct isolation_config *same = isolation_of(config, "web/same");
	const struct isolation_config *more = isolation_of(config, "web/more");
	const struct isolation_config *narrower = isolation_of(config, "web/narrower");
	const struct isolation_config *elsewhere = isolation_of(config, "web/elsewhere");

	assert_int_equal(same->device_count, 2);
	assert_device(&same->devices[0], "/dev/null", NULL, DEVICE_READ | DEVICE_WRITE);
	assert_device(&same->devices[1], "/dev/zero", NULL, DEVICE_READ);
	/* Appended. */
	assert_int_equal(more->device_count, 3);
	assert_device(&more->devices[2], "/dev/full", NULL, DEVICE_READ | DEVICE_WRITE);
	/* The task's entry at the group's place replaces it. */
	assert_int_equal(narrower->device_count, 3);
	assert_device(&narrower->devices[0], "/dev/zero", NULL, DEVICE_READ);
	assert_device(&narrower->devices[1], "/dev/null", NULL, DEVICE_READ);
	assert_device(&narrower->devices[2], "/dev/urandom", NULL, DEVICE_READ | DEVICE_WRITE);
	/* The place is the target: another node at /dev/zero. */
	assert_int_equal(elsewhere->device_count, 2);
	assert_device(&elsewhere->devices[0], "/dev/null", NULL, DEVICE_READ | DEVICE_WRITE);
	assert_device(&elsewhere->devices[1], "/dev/random", "/dev/zero",
		      DEVICE_READ | DEVICE_WRITE);
	config_free(config);
}

static const struct error_case cases[] = {
    {"devices as a map", TASK("{command: a, isolation: {devices: {path: /dev/null}}}"), 4, 46,
     "web/app: isolation.devices: must be a list of devices such as [{path: /dev/fuse, "
     "permissions: rw}], not a map"},
    {"entry as a list", TASK("{command: a, isolation: {devices: [[/dev/null]]}}"), 4, 47,
     "web/app: isolation.devices[0]: must be a map such as {path: /dev/fuse, permissions: rw}, "
     "not a list"},
    {"relative path", TASK("{command: a, isolation: {devices: [{path: dev/null}]}}"), 4, 54,
     "web/app: isolation.devices[0].path: must be an absolute path, not \"dev/null\""},
    {"relative path alone", TASK("{command: a, isolation: {devices: [null]}}"), 4, 47,
     "web/app: isolation.devices[0]: must be a map such as {path: /dev/fuse, permissions: rw}, "
     "not null"},
    {"missing node", TASK("{command: a, isolation: {devices: [/dev/corral-none]}}"), 4, 47,
     "web/app: isolation.devices[0]: \"/dev/corral-none\": No such file or directory"},
    {"regular file", TASK("{command: a, isolation: {devices: [{path: /etc/passwd}]}}"), 4, 54,
     "web/app: isolation.devices[0].path: \"/etc/passwd\" is a regular file; expected a "
     "character or block device such as /dev/fuse"},
    {"directory", TASK("{command: a, isolation: {devices: [/dev]}}"), 4, 47,
     "web/app: isolation.devices[0]: \"/dev\" is a directory; expected a character or block "
     "device such as /dev/fuse"},
    {"missing path", TASK("{command: a, isolation: {devices: [{permissions: r}]}}"), 4, 47,
     "web/app: isolation.devices[0]: missing \"path\" (the host's device node)"},
    {"misspelt path", TASK("{command: a, isolation: {devices: [{pth: /dev/null}]}}"), 4, 48,
     "web/app: isolation.devices[0]: unknown key \"pth\"; did you mean \"path\"?"},
    {"unknown key", TASK("{command: a, isolation: {devices: [{path: /dev/null, mode: rw}]}}"), 4,
     65,
     "web/app: isolation.devices[0]: unknown key \"mode\" (expected path, target or "
     "permissions)"},
    {"bad letter", TASK("{command: a, isolation: {devices: [{path: /dev/null, permissions: rx}]}}"),
     4, 78,
     "web/app: isolation.devices[0].permissions: must be letters from r (read), w (write) and "
     "m (mknod), each once, such as \"rw\", not \"rx\""},
    {"letter twice",
     TASK("{command: a, isolation: {devices: [{path: /dev/null, permissions: rwr}]}}"), 4, 78,
     "web/app: isolation.devices[0].permissions: must be letters from r (read), w (write) and "
     "m (mknod), each once, such as \"rw\", not \"rwr\""},
    {"no letter", TASK("{command: a, isolation: {devices: [{path: /dev/null, permissions: ''}]}}"),
     4, 78,
     "web/app: isolation.devices[0].permissions: must be letters from r (read), w (write) and "
     "m (mknod), each once, such as \"rw\", not \"\""},
    {"relative target",
     TASK("{command: a, isolation: {devices: [{path: /dev/null, target: null2}]}}"), 4, 73,
     "web/app: isolation.devices[0].target: must be an absolute path, not \"null2\""},
    {"twice at one place",
     TASK("{command: a, isolation: {devices: [/dev/null, {path: /dev/zero, target: /dev/null}]}}"),
     4, 58,
     "web/app: isolation.devices[1]: \"/dev/null\" is listed twice (first at line 4); list "
     "each device once"},
    {"group's mistake, said once",
     "groups:\n  web:\n    isolation: {devices: [/dev/nope]}\n"
     "    tasks: {a: {command: a}, b: {command: b}}\n",
     3, 27, "group web: isolation.devices[0]: \"/dev/nope\": No such file or directory"},
};

static void test_errors(void **state)
{
	assert_error_cases(cases, ARRAY_SIZE(cases));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_forms),
	    cmocka_unit_test(test_none_by_default),
	    cmocka_unit_test(test_group_devices_then_the_tasks),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
