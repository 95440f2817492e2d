/* Mount plans from start additions (isolation/mount_plan.c): the mount
 * flags a hook or a CDI spec writes among a mount's options become the
 * step's attributes, the rest a file system's data; a bind with any other
 * option is refused with the mount named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>

#include <cmocka.h>

#include "config/model/config.h"
#include "isolation/mount_plan.h"

static const struct isolation_config mount_namespace = {
    .enabled = true,
    .namespaces = ISOLATION_NS_MOUNT,
};

static void test_bind_flags_become_attributes(void **state)
{
	(void)state;
	char *options[] = {"ro", "nosuid", "nodev", "noexec", NULL};
	struct mount_config mount = {.source = "/tmp", .target = "/data", .options = options};
	struct start_additions additions = {.mounts = &mount, .mount_count = 1};
	struct mount_plan plan;
	char error[256] = "";
	assert_int_equal(
	    mount_plan_build(&plan, &mount_namespace, &additions, error, sizeof(error)), 0);
	assert_int_equal(plan.step_count, 1);
	const struct mount_step *step = &plan.steps[0];
	assert_int_equal(step->kind, MOUNT_STEP_BIND);
	assert_true(step->readonly);
	assert_int_equal(step->attributes,
			 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	assert_null(step->option_keys);
	assert_true(plan.has_additions);
	mount_plan_free(&plan);
}

static void test_fs_keeps_its_data_and_takes_the_flags(void **state)
{
	(void)state;
	char *options[] = {"size=1m", "noexec", "mode=0700", NULL};
	struct mount_config mount = {.type = "tmpfs", .target = "/scratch", .options = options};
	struct start_additions additions = {.mounts = &mount, .mount_count = 1};
	struct mount_plan plan;
	char error[256] = "";
	assert_int_equal(
	    mount_plan_build(&plan, &mount_namespace, &additions, error, sizeof(error)), 0);
	const struct mount_step *step = &plan.steps[0];
	assert_true(step->attributes & MOUNT_ATTR_NOEXEC);
	assert_string_equal(step->option_keys[0], "size");
	assert_string_equal(step->option_values[0], "1m");
	assert_string_equal(step->option_keys[1], "mode");
	assert_null(step->option_keys[2]);
	mount_plan_free(&plan);
}

static void test_bind_with_fs_data_is_refused(void **state)
{
	(void)state;
	char *options[] = {"nosuid", "size=1m", NULL};
	struct mount_config mount = {.source = "/tmp", .target = "/data", .options = options};
	struct start_additions additions = {.mounts = &mount, .mount_count = 1};
	struct mount_plan plan;
	char error[256] = "";
	assert_int_equal(
	    mount_plan_build(&plan, &mount_namespace, &additions, error, sizeof(error)), -1);
	assert_string_equal(error, "bind /tmp on /data: unknown option \"size=1m\" (a bind takes "
				   "nosuid, nodev, noexec, suid, dev, exec, ro and rw)");
	assert_int_equal(plan.step_count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bind_flags_become_attributes),
	    cmocka_unit_test(test_fs_keeps_its_data_and_takes_the_flags),
	    cmocka_unit_test(test_bind_with_fs_data_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
