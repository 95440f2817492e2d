/* `propagation: bidirectional` (isolation/shared_source.h): what the loader
 * makes of it, each config it cannot work with refused with its place and
 * why (a new file system, a file as source, no mount namespace, a user
 * namespace, no sys_admin, the default seccomp profile; a group's mount
 * judged for each task), and the mount plan's bidirectional step. "/" and
 * /etc/hostname exist on every machine the tests run on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/config_load.h"
#include "config_cases.h"
#include "isolation/mount_plan.h"
#include "isolation/spawn.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A task "app" in group "web": its value starts at line 4, column 12. */
#define TASK(flow) "groups:\n  web:\n    tasks:\n      app: " flow "\n"
/* What a plugin that mounts needs besides the mount namespace. */
#define MOUNTER "capabilities: {add: [sys_admin]}, seccomp: unconfined"

static void test_a_plugins_bind(void **state)
{
	struct config *config =
	    parse_ok(TASK("{command: a, isolation: {namespaces: [mount], " MOUNTER ", mounts: "
			  "[{source: /, target: /csi, propagation: bidirectional}, "
			  "{source: /, target: /other, propagation: rshared}]}}"));
	const struct isolation_config *isolation = isolation_of(config, "web/app");

	assert_true(isolation->mounts[0].bidirectional);
	assert_int_equal(isolation->mounts[0].propagation, 0); /* the host's peer group */
	assert_false(isolation->mounts[1].bidirectional);

	struct mount_plan plan;
	char error[160] = "", text[160];
	assert_int_equal(mount_plan_build(&plan, isolation, NULL, error, sizeof(error)), 0);
	assert_int_equal(plan.bidirectional_count, 1);
	assert_true(plan.steps[0].bidirectional);
	assert_true(plan.steps[0].recursive);
	assert_int_equal(plan.steps[0].propagation, 0);
	assert_false(plan.steps[1].bidirectional);
	mount_plan_describe_step(&plan, 0, text, sizeof(text));
	assert_string_equal(text, "bind / on /csi (bidirectional)");
	mount_plan_describe_failure(&plan, SPAWN_STAGE_MOUNT_CLONE_SHARED, 0, "Invalid argument",
				    text, sizeof(text));
	assert_string_equal(text, "bind / on /csi (bidirectional): clone the host's shared "
				  "mount: Invalid argument");
	mount_plan_free(&plan);
	config_free(config);
}

static void test_a_group_gives_it_to_its_tasks(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  csi:\n"
		     "    isolation: {namespaces: [mount], " MOUNTER ",\n"
		     "      mounts: [{source: /, target: /csi, propagation: "
		     "bidirectional}]}\n"
		     "    tasks:\n"
		     "      node: {command: a}\n"
		     "      other: {command: a, isolation: {mounts: [{source: /, target: "
		     "/b, propagation: bidirectional}]}}\n");
	assert_true(isolation_of(config, "csi/node")->mounts[0].bidirectional);
	assert_true(isolation_of(config, "csi/other")->mounts[1].bidirectional);
	config_free(config);
}

static const struct error_case cases[] = {
    {"not a bind",
     TASK("{command: a, isolation: {namespaces: [mount], " MOUNTER ", mounts: [{type: tmpfs, "
	  "target: /t, propagation: bidirectional}]}}"),
     4, 161,
     "web/app: isolation.mounts[0].propagation: bidirectional is for a bind mount: a new tmpfs "
     "exists in the task alone, with no host side to share mounts with; bind a host directory "
     "instead"},
    {"a file as source",
     TASK("{command: a, isolation: {namespaces: [mount], " MOUNTER ", mounts: [{source: "
	  "/etc/hostname, target: /t, propagation: bidirectional}]}}"),
     4, 171,
     "web/app: isolation.mounts[0].propagation: bidirectional needs a directory as source, "
     "where the task's mounts are made; /etc/hostname is not a directory"},
    {"no mount namespace",
     TASK("{command: a, isolation: {namespaces: [pid], " MOUNTER ", mounts: [{source: /, "
	  "target: /t, propagation: bidirectional}]}}"),
     4, 119,
     "web/app: isolation.mounts: needs the mount namespace; add mount to isolation.namespaces"},
    {"a user namespace",
     TASK("{command: a, isolation: {namespaces: [mount, user], user: {uid_map: \"0 100000 "
	  "65536\", gid_map: \"0 100000 65536\"}, " MOUNTER ", mounts: [{source: /, target: /t, "
	  "propagation: bidirectional}]}}"),
     4, 227,
     "web/app: isolation.mounts[0].propagation: bidirectional cannot work in a user namespace: "
     "the kernel makes the mounts it copies into a less privileged mount namespace slaves of "
     "the host's, so the task's mounts would never reach the host; leave user out of "
     "isolation.namespaces"},
    {"no sys_admin",
     TASK("{command: a, isolation: {namespaces: [mount], seccomp: unconfined, mounts: [{source: "
	  "/, target: /t, propagation: bidirectional}]}}"),
     4, 125,
     "web/app: isolation.mounts[0].propagation: bidirectional shares the mounts the task "
     "makes, but without the sys_admin capability the task can make none; add sys_admin to "
     "isolation.capabilities.add"},
    {"the default seccomp profile",
     TASK("{command: a, isolation: {namespaces: [mount], capabilities: {add: [sys_admin]}, "
	  "mounts: [{source: /, target: /t, propagation: bidirectional}]}}"),
     4, 138,
     "web/app: isolation.mounts[0].propagation: bidirectional shares the mounts the task "
     "makes, but the default seccomp profile refuses mount, fsmount and move_mount; take "
     "seccomp: unconfined or a profile that allows them"},
    {"a group's mount, for a task in a user namespace",
     "groups:\n"
     "  csi:\n"
     "    isolation: {namespaces: [mount], " MOUNTER ",\n"
     "      mounts: [{type: tmpfs, target: /t}, {source: /, target: /csi, propagation: "
     "bidirectional}]}\n"
     "    tasks:\n"
     "      node: {command: a, isolation: {namespaces: [mount, user], user: {uid_map: \"0 1 "
     "1\", gid_map: \"0 1 1\"}}}\n",
     4, 82,
     "csi/node: isolation.mounts[1].propagation: bidirectional (set in group csi) cannot work "
     "in a user namespace: the kernel makes the mounts it copies into a less privileged mount "
     "namespace slaves of the host's, so the task's mounts would never reach the host; leave "
     "user out of isolation.namespaces"},
};

static void test_one_error_each(void **state)
{
	assert_error_cases(cases, ARRAY_SIZE(cases));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_plugins_bind),
	    cmocka_unit_test(test_a_group_gives_it_to_its_tasks),
	    cmocka_unit_test(test_one_error_each),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
