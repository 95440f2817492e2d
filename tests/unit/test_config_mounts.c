/* `isolation.rootfs`, `readonly_rootfs` and `mounts`: what the loader
 * makes of them (fields, the group -> task merge: the group's mounts
 * first), every mistake with its place and message, and the mount plan a
 * start is built from (isolation/mount_plan.c): the steps in their order,
 * configured mounts then a hook's, and a hook's bad mount refused. The
 * loader looks at the file system here: "/" and /etc/hostname exist on
 * every machine the tests run on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include <cmocka.h>

#include "config/load/config_load.h"
#include "config_cases.h"
#include "isolation/mount_plan.h"
#include "isolation/spawn.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A task "app" in group "web": its value starts at line 4, column 12. */
#define TASK(flow) "groups:\n  web:\n    tasks:\n      app: " flow "\n"

static void test_every_field(void **state)
{
	struct config *config = parse_ok(TASK(
	    "{command: a, isolation: {namespaces: [mount], rootfs: /etc, readonly_rootfs: true, "
	    "mounts: [{source: /, target: /host, readonly: true, propagation: rslave}, "
	    "{type: tmpfs, target: /tmp, options: [size=64m, mode=1777]}, "
	    "{type: bind, source: /etc/hostname, target: /etc/hostname}]}}"));
	const struct isolation_config *isolation = &config->groups[0].tasks[0].isolation;

	assert_string_equal(isolation->rootfs, "/etc");
	assert_true(isolation->readonly_rootfs);
	assert_int_equal(isolation->mount_count, 3);

	const struct mount_config *bind = &isolation->mounts[0];
	assert_null(bind->type);
	assert_string_equal(bind->source, "/");
	assert_string_equal(bind->target, "/host");
	assert_true(bind->readonly);
	assert_int_equal(bind->propagation, MS_SLAVE | MS_REC);
	assert_null(bind->options);

	const struct mount_config *tmpfs = &isolation->mounts[1];
	assert_string_equal(tmpfs->type, "tmpfs");
	assert_null(tmpfs->source);
	assert_false(tmpfs->readonly);
	assert_int_equal(tmpfs->propagation, 0); /* the default: rprivate */
	assert_string_equal(tmpfs->options[0], "size=64m");
	assert_string_equal(tmpfs->options[1], "mode=1777");
	assert_null(tmpfs->options[2]);

	assert_null(isolation->mounts[2].type); /* `type: bind` is a bind */
	config_free(config);
}

static void test_propagation_names(void **state)
{
	static const struct {
		const char *name;
		unsigned long flags;
	} names[] = {
	    {"private", MS_PRIVATE}, {"rprivate", MS_PRIVATE | MS_REC},
	    {"slave", MS_SLAVE},     {"rslave", MS_SLAVE | MS_REC},
	    {"shared", MS_SHARED},   {"rshared", MS_SHARED | MS_REC},
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char yaml[256];
		snprintf(yaml, sizeof(yaml),
			 TASK("{command: a, isolation: {namespaces: [mount], mounts: [{source: /, "
			      "target: /h, propagation: %s}]}}"),
			 names[i].name);
		struct config *config = parse_ok(yaml);
		assert_int_equal(config->groups[0].tasks[0].isolation.mounts[0].propagation,
				 names[i].flags);
		config_free(config);
	}
}

static void test_group_mounts_come_first(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  web:\n"
		     "    isolation: {namespaces: [mount], rootfs: /etc, readonly_rootfs: true,\n"
		     "                mounts: [{type: tmpfs, target: /group}]}\n"
		     "    tasks:\n"
		     "      app: {command: a, isolation: {mounts: [{type: tmpfs, target: /task}],\n"
		     "            readonly_rootfs: false}}\n"
		     "      other: {command: a}\n");
	const struct isolation_config *app = &config->groups[0].tasks[0].isolation;
	const struct isolation_config *other = &config->groups[0].tasks[1].isolation;

	assert_int_equal(app->mount_count, 2);
	assert_string_equal(app->mounts[0].target, "/group");
	assert_string_equal(app->mounts[1].target, "/task");
	assert_string_equal(app->rootfs, "/etc");
	assert_false(app->readonly_rootfs); /* the task's own */
	assert_int_equal(other->mount_count, 1);
	assert_string_equal(other->mounts[0].target, "/group");
	assert_true(other->readonly_rootfs);
	config_free(config);
}

static const struct error_case cases[] = {
    {"relative target",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{type: tmpfs, target: data}]}}"),
     4, 89, "web/app: isolation.mounts[0].target: must be an absolute path, not \"data\""},
    {"target going up",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{type: tmpfs, target: "
	  "/a/../etc}]}}"),
     4, 89, "web/app: isolation.mounts[0].target: must not go up with \"..\", not \"/a/../etc\""},
    {"target that is /",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{type: tmpfs, target: /}]}}"), 4,
     89, "web/app: isolation.mounts[0].target: must be below /, not / itself"},
    {"missing target",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{type: tmpfs}]}}"), 4, 67,
     "web/app: isolation.mounts[0]: needs a target, the path in the task"},
    {"bind without source",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{target: /data}]}}"), 4, 67,
     "web/app: isolation.mounts[0]: a bind mount needs a source (or a type such as tmpfs)"},
    {"bind source missing",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{source: "
	  "/nonexistent-corral, target: /data}]}}"),
     4, 76, "web/app: isolation.mounts[0].source: /nonexistent-corral: No such file or directory"},
    {"relative bind source",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{source: srv, target: "
	  "/data}]}}"),
     4, 76, "web/app: isolation.mounts[0].source: must be an absolute path, not \"srv\""},
    {"unknown propagation",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{source: /, target: /h, "
	  "propagation: rslaev}]}}"),
     4, 104,
     "web/app: isolation.mounts[0].propagation: unknown propagation \"rslaev\"; did you mean "
     "\"rslave\"?"},
    {"options on a bind",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{source: /, target: /h, "
	  "options: [ro]}]}}"),
     4, 100,
     "web/app: isolation.mounts[0].options: a bind mount takes no options; use readonly and "
     "propagation"},
    {"two options in one",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{type: tmpfs, target: /t, "
	  "options: [\"size=1m,mode=1777\"]}]}}"),
     4, 103,
     "web/app: isolation.mounts[0].options[0]: must be one option, KEY or KEY=VALUE, not "
     "\"size=1m,mode=1777\""},
    {"bad type",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{type: Tmp/fs, target: "
	  "/t}]}}"),
     4, 74,
     "web/app: isolation.mounts[0].type: must be a file system type such as tmpfs (or bind), "
     "not \"Tmp/fs\""},
    {"unknown mount key",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{type: tmpfs, target: /t, "
	  "read_only: true}]}}"),
     4, 93, "web/app: isolation.mounts[0]: unknown key \"read_only\"; did you mean \"readonly\"?"},
    {"mount not a map", TASK("{command: a, isolation: {namespaces: [mount], mounts: [/data]}}"), 4,
     67,
     "web/app: isolation.mounts[0]: must be a map such as {source: /srv/data, target: /data} or "
     "{type: tmpfs, target: /tmp}, not a string"},
    {"mounts not a list",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: {target: /t}}}"), 4, 66,
     "web/app: isolation.mounts: must be a list of mounts, not a map"},
    {"rootfs not a directory",
     TASK("{command: a, isolation: {namespaces: [mount], rootfs: /etc/hostname}}"), 4, 66,
     "web/app: isolation.rootfs: /etc/hostname is not a directory"},
    {"rootfs missing",
     TASK("{command: a, isolation: {namespaces: [mount], rootfs: /nonexistent-corral}}"), 4, 66,
     "web/app: isolation.rootfs: /nonexistent-corral: No such file or directory"},
    {"rootfs that is the host's /",
     TASK("{command: a, isolation: {namespaces: [mount], rootfs: /usr/..}}"), 4, 66,
     "web/app: isolation.rootfs: /usr/.. is the host's / already; leave rootfs out"},
    {"relative rootfs", TASK("{command: a, isolation: {namespaces: [mount], rootfs: srv/root}}"), 4,
     66, "web/app: isolation.rootfs: must be an absolute path, not \"srv/root\""},
    {"readonly_rootfs not a boolean",
     TASK("{command: a, isolation: {namespaces: [mount], readonly_rootfs: yes}}"), 4, 75,
     "web/app: isolation.readonly_rootfs: must be true or false, not \"yes\""},
    {"rootfs without the mount namespace",
     TASK("{command: a, isolation: {namespaces: [pid], rootfs: /etc}}"), 4, 64,
     "web/app: isolation.rootfs: needs the mount namespace; add mount to isolation.namespaces"},
    {"readonly_rootfs without the mount namespace",
     TASK("{command: a, isolation: {readonly_rootfs: true}}"), 4, 54,
     "web/app: isolation.readonly_rootfs: needs the mount namespace; add mount to "
     "isolation.namespaces"},
    {"mounts without the mount namespace", TASK("{command: a, isolation: {mounts: []}}"), 4, 45,
     "web/app: isolation.mounts: needs the mount namespace; add mount to isolation.namespaces"},
    {"group's mounts for a task without the mount namespace",
     "groups:\n  web:\n    isolation: {mounts: [{type: tmpfs, target: /t}]}\n"
     "    tasks:\n      app: {command: a, isolation: {namespaces: [pid]}}\n",
     3, 25,
     "web/app: isolation.mounts: needs the mount namespace (set in group web); add mount to "
     "isolation.namespaces"},
};

static void test_one_error_each(void **state)
{
	assert_error_cases(cases, ARRAY_SIZE(cases));
}

static size_t find_step(const struct mount_plan *plan, const char *target)
{
	for (size_t i = 0; i < plan->step_count; i++)
		if (strcmp(plan->steps[i].target, target) == 0)
			return i;
	fail_msg("no step for %s", target);
	return 0;
}

static void test_plan_order_with_a_rootfs_and_a_hooks_mounts(void **state)
{
	struct config *config = parse_ok(
	    TASK("{command: a, isolation: {namespaces: [pid, mount], rootfs: /etc, mounts: [{type: "
		 "tmpfs, target: /tmp, options: [size=1m, noswap]}]}}"));
	const struct isolation_config *isolation = &config->groups[0].tasks[0].isolation;
	struct mount_config hook_mount = {.source = "/etc", .target = "/hooked", .readonly = true};
	struct start_additions additions = {.mounts = &hook_mount, .mount_count = 1};
	struct mount_plan plan;
	char error[160] = "";

	assert_int_equal(mount_plan_build(&plan, isolation, &additions, error, sizeof(error)), 0);
	assert_string_equal(plan.rootfs, "/etc");
	assert_true(plan.has_additions);
	/* The root's basics, then the configured mount, then the hook's. */
	size_t proc = find_step(&plan, "/proc"), dev = find_step(&plan, "/dev"),
	       pts = find_step(&plan, "/dev/pts"), tmp = find_step(&plan, "/tmp"),
	       hooked = find_step(&plan, "/hooked");
	assert_true(proc < dev && dev < pts && pts < tmp && tmp + 1 == hooked);
	assert_int_equal(hooked + 1, plan.step_count);
	assert_int_equal(plan.steps[proc].kind, MOUNT_STEP_FS); /* a new one: pid namespace */
	assert_string_equal(plan.steps[proc].type, "proc");
	assert_int_equal(plan.steps[find_step(&plan, "/sys")].readonly, true);
	assert_int_equal(plan.steps[find_step(&plan, "/dev/null")].target_is_file, true);
	assert_int_equal(plan.steps[find_step(&plan, "/dev/ptmx")].kind, MOUNT_STEP_SYMLINK);
	/* Without an ipc namespace, no /dev/mqueue of the host's. */
	for (size_t i = 0; i < plan.step_count; i++)
		assert_string_not_equal(plan.steps[i].target, "/dev/mqueue");

	const struct mount_step *step = &plan.steps[tmp];
	assert_string_equal(step->option_keys[0], "size");
	assert_string_equal(step->option_values[0], "1m");
	assert_string_equal(step->option_keys[1], "noswap");
	assert_null(step->option_values[1]); /* a flag */
	assert_null(step->option_keys[2]);
	assert_true(step->attributes & MOUNT_ATTR_NOSUID);

	char text[160];
	mount_plan_describe_step(&plan, (int)hooked, text, sizeof(text));
	assert_string_equal(text, "bind /etc on /hooked");
	mount_plan_describe_step(&plan, (int)tmp, text, sizeof(text));
	assert_string_equal(text, "mount tmpfs on /tmp");
	mount_plan_describe_failure(&plan, SPAWN_STAGE_PIVOT_ROOT, 0, "Invalid argument", text,
				    sizeof(text));
	assert_string_equal(text, "pivot_root into /etc: Invalid argument");
	mount_plan_describe_failure(&plan, SPAWN_STAGE_MOUNT_TARGET, (int)tmp,
				    "Read-only file system", text, sizeof(text));
	assert_string_equal(text,
			    "mount tmpfs on /tmp: make the mount point: Read-only file system");
	mount_plan_free(&plan);
	config_free(config);
}

static void test_plan_without_a_rootfs_has_only_the_mounts(void **state)
{
	struct config *config = parse_ok(TASK(
	    "{command: a, isolation: {namespaces: [mount], mounts: [{type: tmpfs, target: /t}]}}"));
	struct mount_plan plan;
	char error[160] = "";

	assert_int_equal(mount_plan_build(&plan, &config->groups[0].tasks[0].isolation, NULL, error,
					  sizeof(error)),
			 0);
	assert_null(plan.rootfs);
	assert_false(plan.has_additions);
	assert_int_equal(plan.step_count, 1);
	assert_string_equal(plan.steps[0].target, "/t");
	mount_plan_free(&plan);
	config_free(config);
}

static void test_plan_refuses_a_hooks_bad_target(void **state)
{
	static const char *const targets[] = {"relative", "/a/../../etc", "/", NULL};
	struct isolation_config isolation = {.enabled = true, .namespaces = ISOLATION_NS_MOUNT};

	for (size_t i = 0; i < ARRAY_SIZE(targets); i++) {
		struct mount_config hook_mount = {.type = "tmpfs", .target = (char *)targets[i]};
		struct start_additions additions = {.mounts = &hook_mount, .mount_count = 1};
		struct mount_plan plan;
		char error[160] = "";

		assert_int_equal(
		    mount_plan_build(&plan, &isolation, &additions, error, sizeof(error)), -1);
		assert_non_null(strstr(error, "must be an absolute path below /, without .."));
		assert_int_equal(plan.step_count, 0);
	}
}

static void test_plan_binds_devices_after_the_mounts(void **state)
{
	struct device_config configured = {.source = "/dev/null", .target = "/dev/sink"};
	struct device_config hooked = {.source = "/dev/zero"}; /* target: the same path */
	struct mount_config mount = {.type = "tmpfs", .target = "/t"};
	struct isolation_config isolation = {
	    .enabled = true,
	    .namespaces = ISOLATION_NS_MOUNT,
	    .mounts = &mount,
	    .mount_count = 1,
	    .devices = &configured,
	    .device_count = 1,
	};
	struct start_additions additions = {.devices = &hooked, .device_count = 1};
	struct mount_plan plan;
	char error[160] = "", text[160];

	assert_int_equal(mount_plan_build(&plan, &isolation, &additions, error, sizeof(error)), 0);
	assert_int_equal(plan.step_count, 3);
	assert_string_equal(plan.steps[0].target, "/t");
	assert_string_equal(plan.steps[1].source, "/dev/null");
	assert_string_equal(plan.steps[1].target, "/dev/sink");
	assert_true(plan.steps[1].target_is_file);
	assert_false(plan.steps[1].recursive);
	assert_string_equal(plan.steps[2].target, "/dev/zero");
	mount_plan_describe_step(&plan, 1, text, sizeof(text));
	assert_string_equal(text, "bind device /dev/null on /dev/sink");
	mount_plan_free(&plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_field),
	    cmocka_unit_test(test_propagation_names),
	    cmocka_unit_test(test_group_mounts_come_first),
	    cmocka_unit_test(test_one_error_each),
	    cmocka_unit_test(test_plan_order_with_a_rootfs_and_a_hooks_mounts),
	    cmocka_unit_test(test_plan_without_a_rootfs_has_only_the_mounts),
	    cmocka_unit_test(test_plan_refuses_a_hooks_bad_target),
	    cmocka_unit_test(test_plan_binds_devices_after_the_mounts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
