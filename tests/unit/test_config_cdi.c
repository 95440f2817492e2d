/* The loader on `cdi`, `task_dirs` and `task_dirs_root`: valid values, the
 * group -> task merge, and every mistake with its place and message. */
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
#define MOUNT_NS      "isolation: {namespaces: [mount]}, "

static void test_task_devices(void **state)
{
	struct config *config =
	    parse_ok("groups:\n  web:\n    tasks:\n"
		     "      app: {command: x, " MOUNT_NS
		     "cdi: {devices: [vendor.example/fake=zero0, nvidia.com/gpu=all]}}\n"
		     "      plain: {command: x}\n");
	const struct task_config *app = &config->groups[0].tasks[0];
	const struct task_config *plain = &config->groups[0].tasks[1];

	assert_int_equal(app->cdi.device_count, 2);
	assert_string_equal(app->cdi.devices[0], "vendor.example/fake=zero0");
	assert_string_equal(app->cdi.devices[1], "nvidia.com/gpu=all");
	assert_null(app->cdi.devices[2]);
	assert_null(app->cdi.spec_dirs);
	assert_null(plain->cdi.devices);
	assert_int_equal(plain->cdi.device_count, 0);
	assert_false(plain->task_dirs);
	assert_null(config->task_dirs_root);
	config_free(config);
}

static void test_group_defaults_field_by_field(void **state)
{
	struct config *config =
	    parse_ok("groups:\n  web:\n"
		     "    isolation: {namespaces: [mount]}\n"
		     "    cdi: {devices: [a.b/c=0], spec_dirs: [/opt/cdi, /run/cdi]}\n"
		     "    tasks:\n"
		     "      inherits: {command: x}\n"
		     "      own: {command: x, cdi: {devices: [a.b/c=1]}}\n"
		     "      none: {command: x, cdi: {devices: []}}\n");
	const struct task_config *inherits = &config->groups[0].tasks[0];
	const struct task_config *own = &config->groups[0].tasks[1];
	const struct task_config *none = &config->groups[0].tasks[2];

	assert_string_equal(inherits->cdi.devices[0], "a.b/c=0");
	assert_string_equal(inherits->cdi.spec_dirs[0], "/opt/cdi");
	assert_string_equal(inherits->cdi.spec_dirs[1], "/run/cdi");
	assert_null(inherits->cdi.spec_dirs[2]);
	assert_string_equal(own->cdi.devices[0], "a.b/c=1");
	assert_string_equal(own->cdi.spec_dirs[0], "/opt/cdi");
	assert_null(none->cdi.devices);
	assert_int_equal(none->cdi.device_count, 0);
	config_free(config);
}

static void test_task_dirs(void **state)
{
	struct config *config = parse_ok("task_dirs_root: /srv/corral\n"
					 "groups:\n  web:\n    task_dirs: true\n    tasks:\n"
					 "      a: {command: x}\n"
					 "      b: {command: x, task_dirs: false}\n"
					 "  other:\n    tasks:\n"
					 "      c: {command: x}\n"
					 "      d: {command: x, task_dirs: true}\n");

	assert_string_equal(config->task_dirs_root, "/srv/corral");
	assert_true(config->groups[0].tasks[0].task_dirs);
	assert_false(config->groups[0].tasks[1].task_dirs);
	assert_false(config->groups[1].tasks[0].task_dirs);
	assert_true(config->groups[1].tasks[1].task_dirs);
	config_free(config);
}

#define TASK(flow) "groups:\n  web:\n    tasks:\n      app: " flow "\n"

static const struct error_case cases[] = {
    {"name without =NAME", TASK("{command: x, " MOUNT_NS "cdi: {devices: [nvidia.com/gpu]}}"), 4,
     75,
     "web/app: cdi.devices[0]: invalid CDI device name \"nvidia.com/gpu\": missing \"=NAME\" "
     "(write VENDOR/CLASS=NAME, as in vendor.com/gpu=0)"},
    {"name without vendor", TASK("{command: x, " MOUNT_NS "cdi: {devices: [gpu=0]}}"), 4, 75,
     "web/app: cdi.devices[0]: invalid CDI device name \"gpu=0\": missing \"VENDOR/\" before "
     "the class \"gpu\""},
    {"bad character", TASK("{command: x, " MOUNT_NS "cdi: {devices: [\"a.b/c=x y\"]}}"), 4, 75,
     "web/app: cdi.devices[0]: invalid CDI device name \"a.b/c=x y\": the device name \"x y\" "
     "has ' ': use letters, digits and \"_-.:\""},
    {"listed twice", TASK("{command: x, " MOUNT_NS "cdi: {devices: [a.b/c=x, a.b/c=x]}}"), 4, 84,
     "web/app: cdi.devices[1]: device \"a.b/c=x\" is listed twice"},
    {"devices not a list", TASK("{command: x, " MOUNT_NS "cdi: {devices: a.b/c=x}}"), 4, 74,
     "web/app: cdi.devices: must be a list of device names (VENDOR/CLASS=NAME), not a string"},
    {"unknown key", TASK("{command: x, " MOUNT_NS "cdi: {device: [a.b/c=x]}}"), 4, 65,
     "web/app: cdi: unknown key \"device\"; did you mean \"devices\"?"},
    {"cdi not a map", TASK("{command: x, " MOUNT_NS "cdi: [a.b/c=x]}"), 4, 64,
     "web/app: cdi: must be a map such as {devices: [vendor.com/gpu=0]}, not a list"},
    {"relative spec dir", TASK("{command: x, " MOUNT_NS "cdi: {spec_dirs: [etc/cdi]}}"), 4, 77,
     "web/app: cdi.spec_dirs[0]: must be an absolute path, not \"etc/cdi\""},
    {"empty spec dirs", TASK("{command: x, " MOUNT_NS "cdi: {spec_dirs: []}}"), 4, 76,
     "web/app: cdi.spec_dirs: must not be empty (leave it out for /etc/cdi and /var/run/cdi)"},
    {"no mount namespace", TASK("{command: x, cdi: {devices: [a.b/c=x]}}"), 4, 40,
     "web/app: cdi.devices: CDI devices need the mount namespace (their device nodes and "
     "mounts are added inside the task); add mount to isolation.namespaces"},
    {"no mount namespace, from the group",
     "groups:\n  web:\n    cdi: {devices: [a.b/c=x]}\n    tasks:\n      app: {command: x}\n", 3, 20,
     "web/app: cdi.devices: CDI devices (set in group web) need the mount namespace (their "
     "device nodes and mounts are added inside the task); add mount to isolation.namespaces"},
    {"group name error", "groups:\n  web:\n    cdi: {devices: [x]}\n    tasks: {a: {command: x}}\n",
     3, 21,
     "group web: cdi.devices[0]: invalid CDI device name \"x\": missing \"=NAME\" (write "
     "VENDOR/CLASS=NAME, as in vendor.com/gpu=0)"},
    {"task_dirs not a boolean", TASK("{command: x, task_dirs: yes}"), 4, 36,
     "web/app: task_dirs: must be true or false, not \"yes\""},
    {"group task_dirs not a boolean",
     "groups:\n  web:\n    task_dirs: 1\n    tasks: {a: {command: x}}\n", 3, 16,
     "group web: task_dirs: must be true or false, not \"1\""},
    {"relative task_dirs_root", "task_dirs_root: run/x\ngroups: {g: {tasks: {t: {command: x}}}}\n",
     1, 17, "task_dirs_root: must be an absolute path other than /, not \"run/x\""},
    {"task_dirs_root at /", "task_dirs_root: /\ngroups: {g: {tasks: {t: {command: x}}}}\n", 1, 17,
     "task_dirs_root: must be an absolute path other than /, not \"/\""},
};

static void test_errors(void **state)
{
	assert_error_cases(cases, ARRAY_SIZE(cases));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_task_devices),
	    cmocka_unit_test(test_group_defaults_field_by_field),
	    cmocka_unit_test(test_task_dirs),
	    cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
