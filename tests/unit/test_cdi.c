/* The CDI hook: spec files written into a temporary directory, resolved
 * into start additions, and every error with its exact message. /dev/zero
 * and /dev/null stand in for a vendor's device nodes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/model/config.h"
#include "config/text/cdi_name.h"
#include "hooks/cdi.h"
#include "hooks/start_additions.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct fixture {
	char root[64];   /* the temporary directory */
	char first[96];  /* root/first: a spec directory */
	char second[96]; /* root/second: a later, stronger one */
};

static int setup(void **state)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));

	snprintf(fixture->root, sizeof(fixture->root), "/tmp/corral-test-cdi-XXXXXX");
	assert_non_null(mkdtemp(fixture->root));
	snprintf(fixture->first, sizeof(fixture->first), "%s/first", fixture->root);
	snprintf(fixture->second, sizeof(fixture->second), "%s/second", fixture->root);
	assert_int_equal(mkdir(fixture->first, 0755), 0);
	assert_int_equal(mkdir(fixture->second, 0755), 0);
	*state = fixture;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fixture = *state;
	char command[128];

	snprintf(command, sizeof(command), "rm -rf %s", fixture->root);
	assert_int_equal(system(command), 0);
	free(fixture);
	return 0;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *file;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	file = fopen(path, "w");
	assert_non_null(file);
	fputs(text, file);
	fclose(file);
}

/* The example of docs/builtin-hooks.md: a fake device, a mount, env. */
#define FAKE_SPEC                                                                                  \
	"cdiVersion: 0.6.0\n"                                                                      \
	"kind: vendor.example/fake\n"                                                              \
	"devices:\n"                                                                               \
	"  - name: zero0\n"                                                                        \
	"    containerEdits:\n"                                                                    \
	"      env: [FAKE_DEVICE=zero0]\n"                                                         \
	"      deviceNodes:\n"                                                                     \
	"        - {path: /dev/fake0, hostPath: /dev/zero, permissions: rw}\n"                     \
	"  - name: one\n"                                                                          \
	"    containerEdits:\n"                                                                    \
	"      deviceNodes: [{path: /dev/null}]\n"                                                 \
	"containerEdits:\n"                                                                        \
	"  env: [FAKE_DRIVER=1.0]\n"                                                               \
	"  mounts:\n"                                                                              \
	"    - {hostPath: /tmp, containerPath: /opt/fake, options: [ro, nosuid, rbind, rslave]}\n"

static int resolve(const struct fixture *fixture, const char *const *names,
		   struct start_additions *out, char *error, size_t size)
{
	const char *dirs[] = {fixture->first, fixture->second, NULL};
	char warning[256];

	return cdi_additions(names, dirs, out, warning, sizeof(warning), error, size);
}

static void test_device_mount_and_env(void **state)
{
	struct fixture *fixture = *state;
	const char *names[] = {"vendor.example/fake=zero0", NULL};
	struct start_additions additions = {0};
	char error[512] = "";

	write_file(fixture->first, "fake.yaml", FAKE_SPEC);
	assert_int_equal(resolve(fixture, names, &additions, error, sizeof(error)), 0);

	assert_int_equal(additions.device_count, 1);
	assert_string_equal(additions.devices[0].source, "/dev/zero");
	assert_string_equal(additions.devices[0].target, "/dev/fake0");
	assert_int_equal(additions.devices[0].permissions, DEVICE_READ | DEVICE_WRITE);

	assert_int_equal(additions.mount_count, 1);
	assert_null(additions.mounts[0].type);
	assert_string_equal(additions.mounts[0].source, "/tmp");
	assert_string_equal(additions.mounts[0].target, "/opt/fake");
	assert_true(additions.mounts[0].readonly);
	assert_int_equal(additions.mounts[0].propagation, MS_SLAVE | MS_REC);
	assert_non_null(additions.mounts[0].options);
	assert_string_equal(additions.mounts[0].options[0], "nosuid");
	assert_null(additions.mounts[0].options[1]);

	/* The device's edits first, then the spec's. */
	assert_string_equal(additions.env[0], "FAKE_DEVICE=zero0");
	assert_string_equal(additions.env[1], "FAKE_DRIVER=1.0");
	assert_null(additions.env[2]);
	start_additions_free(&additions);
}

static void test_two_devices_share_the_spec_edits_once(void **state)
{
	struct fixture *fixture = *state;
	const char *names[] = {"vendor.example/fake=zero0", "vendor.example/fake=one", NULL};
	struct start_additions additions = {0};
	char error[512] = "";

	write_file(fixture->first, "fake.yaml", FAKE_SPEC);
	assert_int_equal(resolve(fixture, names, &additions, error, sizeof(error)), 0);
	assert_int_equal(additions.device_count, 2);
	assert_string_equal(additions.devices[1].source, "/dev/null");
	assert_string_equal(additions.devices[1].target, "/dev/null");
	assert_int_equal(additions.devices[1].permissions,
			 DEVICE_READ | DEVICE_WRITE | DEVICE_MKNOD);
	assert_int_equal(additions.mount_count, 1);
	assert_string_equal(additions.env[1], "FAKE_DRIVER=1.0");
	assert_null(additions.env[2]);
	start_additions_free(&additions);
}

static void test_json_spec(void **state)
{
	struct fixture *fixture = *state;
	const char *names[] = {"vendor.example/json=a:b", NULL};
	struct start_additions additions = {0};
	char error[512] = "";

	write_file(fixture->first, "json.json",
		   "{\n"
		   "  \"cdiVersion\": \"0.8.0\",\n"
		   "  \"kind\": \"vendor.example/json\",\n"
		   "  \"devices\": [{\"name\": \"a:b\", \"containerEdits\": {\n"
		   "    \"deviceNodes\": [{\"path\": \"/dev/null\", \"type\": \"c\", \"major\": 1, "
		   "\"minor\": 3, \"fileMode\": 438, \"uid\": 0, \"gid\": 0}],\n"
		   "    \"env\": [\"A=1\"]}}]\n"
		   "}\n");
	assert_int_equal(resolve(fixture, names, &additions, error, sizeof(error)), 0);
	assert_int_equal(additions.device_count, 1);
	assert_string_equal(additions.env[0], "A=1");
	start_additions_free(&additions);
}

/* Go's json.MarshalIndent with "\t", as some generators write: tabs are
 * white space inside YAML flow collections too. */
static void test_json_indented_with_tabs(void **state)
{
	struct fixture *fixture = *state;
	const char *names[] = {"vendor.example/tabs=x", NULL};
	struct start_additions additions = {0};
	char error[512] = "";

	write_file(fixture->first, "tabs.json",
		   "{\n\t\"cdiVersion\": \"0.5.0\",\n\t\"kind\": \"vendor.example/tabs\",\n"
		   "\t\"devices\": [\n\t\t{\n\t\t\t\"name\": \"x\",\n"
		   "\t\t\t\"containerEdits\": {\"env\": [\"T=1\"]}\n\t\t}\n\t]\n}\n");
	assert_int_equal(resolve(fixture, names, &additions, error, sizeof(error)), 0);
	assert_string_equal(additions.env[0], "T=1");
	start_additions_free(&additions);
}

static void test_later_directory_overrides(void **state)
{
	struct fixture *fixture = *state;
	const char *names[] = {"vendor.example/fake=zero0", NULL};
	struct start_additions additions = {0};
	char error[512] = "";

	write_file(fixture->first, "fake.yaml", FAKE_SPEC);
	write_file(fixture->second, "override.yml",
		   "cdiVersion: 0.7.0\nkind: vendor.example/fake\n"
		   "devices: [{name: zero0, containerEdits: {env: [FROM=second]}}]\n");
	assert_int_equal(resolve(fixture, names, &additions, error, sizeof(error)), 0);
	assert_int_equal(additions.device_count, 0);
	assert_int_equal(additions.mount_count, 0);
	assert_string_equal(additions.env[0], "FROM=second");
	assert_null(additions.env[1]);
	start_additions_free(&additions);
}

static void test_unsupported_edits_warn(void **state)
{
	struct fixture *fixture = *state;
	const char *names[] = {"vendor.example/hooked=h", NULL};
	const char *dirs[] = {fixture->first, NULL};
	struct start_additions additions = {0};
	char warning[256], error[512] = "";

	write_file(fixture->first, "hooked.yaml",
		   "cdiVersion: 0.7.0\nkind: vendor.example/hooked\n"
		   "devices:\n"
		   "  - name: h\n"
		   "    containerEdits:\n"
		   "      hooks: [{hookName: createContainer, path: /bin/true}, "
		   "{hookName: startContainer, path: /bin/true}]\n"
		   "      additionalGids: [0, 44]\n"
		   "      env: [H=1]\n");
	assert_int_equal(
	    cdi_additions(names, dirs, &additions, warning, sizeof(warning), error, sizeof(error)),
	    0);
	assert_string_equal(warning, "cdi: left out what corral cannot apply: "
				     "vendor.example/hooked=h: 2 OCI hooks, additionalGids");
	assert_string_equal(additions.env[0], "H=1");
	start_additions_free(&additions);
}

/* The spec written into `first` (with its path in %s) and the exact error
 * for asking for `name`. */
struct error_case {
	const char *what;
	const char *spec; /* NULL: no spec file */
	const char *name;
	const char *message; /* %1$s: the spec's path; %2$s: first; %3$s: second */
};

static const struct error_case error_cases[] = {
    {"unknown device, with the known ones", FAKE_SPEC, "vendor.example/fake=7",
     "cdi: unknown device \"vendor.example/fake=7\" (known: vendor.example/fake=zero0, =one)"},
    {"unknown kind", FAKE_SPEC, "vendor.example/gpu=0",
     "cdi: unknown device \"vendor.example/gpu=0\" (no spec of kind \"vendor.example/gpu\" in "
     "%2$s, %3$s)"},
    {"unsupported version", "cdiVersion: 0.2.0\nkind: a.b/c\ndevices: [{name: x}]\n", "a.b/c=x",
     "cdi: %1$s:1:13: cdiVersion: unsupported CDI version \"0.2.0\" (corral reads 0.3.0 to "
     "0.8.0)"},
    /* 65 lists deep: the config's bound holds for specs too. */
    {"nested too deep",
     "cdiVersion: 0.5.0\nkind: a.b/c\ndevices: [{name: x}]\nannotations: "
     "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
     "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
     "a.b/c=x", "cdi: %1$s:4:77: lists and maps nested more than 64 deep"},
    {"syntax error", "cdiVersion: 0.5.0\nkind: [a\n", "a.b/c=x",
     "cdi: %1$s:3:1: syntax error: did not find expected ',' or ']' while parsing a flow "
     "sequence"},
    {"field path of a wrong field",
     "cdiVersion: 0.5.0\nkind: a.b/c\ndevices:\n  - name: x\n    containerEdits:\n"
     "      deviceNodes: [{path: dev/x, permissions: rwx}]\n",
     "a.b/c=x",
     "cdi: %1$s:6:28: devices[0].containerEdits.deviceNodes[0].path: must be an absolute path, "
     "not \"dev/x\" (and 1 more problem)"},
    {"bad permissions",
     "cdiVersion: 0.5.0\nkind: a.b/c\ndevices:\n  - name: x\n    containerEdits:\n"
     "      deviceNodes: [{path: /dev/x, permissions: rwx}]\n",
     "a.b/c=x",
     "cdi: %1$s:6:49: devices[0].containerEdits.deviceNodes[0].permissions: invalid "
     "permissions \"rwx\": use r, w and m"},
    {"unknown key", "cdiVersion: 0.5.0\nkind: a.b/c\ndevices: [{name: x, containerEdit: {}}]\n",
     "a.b/c=x",
     "cdi: %1$s:3:21: devices[0]: unknown key \"containerEdit\"; did you mean "
     "\"containerEdits\"?"},
    {"invalid kind", "cdiVersion: 0.5.0\nkind: gpu\ndevices: [{name: x}]\n", "a.b/c=x",
     "cdi: %1$s:2:7: kind: invalid kind \"gpu\": missing \"VENDOR/\" before the class \"gpu\""},
    {"invalid device name in a spec", "cdiVersion: 0.5.0\nkind: a.b/c\ndevices: [{name: -x}]\n",
     "a.b/c=x",
     "cdi: %1$s:3:18: devices[0].name: invalid device name: the device name \"-x\" must start "
     "with a letter or digit"},
    {"duplicate device in one spec",
     "cdiVersion: 0.5.0\nkind: a.b/c\ndevices:\n  - name: x\n  - name: x\n", "a.b/c=x",
     "cdi: %1$s:5:5: devices[1]: duplicate device \"x\" (first defined at line 4)"},
    {"no devices", "cdiVersion: 0.5.0\nkind: a.b/c\ndevices: []\n", "a.b/c=x",
     "cdi: %1$s:3:10: devices: must define at least one device"},
    {"missing host node",
     "cdiVersion: 0.5.0\nkind: a.b/c\ndevices:\n  - name: x\n    containerEdits:\n"
     "      deviceNodes: [{path: /dev/x, hostPath: /dev/corral-no-such-node}]\n",
     "a.b/c=x",
     "cdi: a.b/c=x: device node /dev/corral-no-such-node (%1$s:6:21): No such file or "
     "directory"},
    {"host node that is not a device",
     "cdiVersion: 0.5.0\nkind: a.b/c\ndevices:\n  - name: x\n    containerEdits:\n"
     "      deviceNodes: [{path: /etc/hostname}]\n",
     "a.b/c=x",
     "cdi: a.b/c=x: device node /etc/hostname (%1$s:6:21): is a regular file, not a device "
     "node"},
    {"host node of other numbers",
     "cdiVersion: 0.5.0\nkind: a.b/c\ndevices:\n  - name: x\n    containerEdits:\n"
     "      deviceNodes: [{path: /dev/zero, major: 1, minor: 3}]\n",
     "a.b/c=x",
     "cdi: a.b/c=x: device node /dev/zero (%1$s:6:21): the spec says 1:3, the host's node is "
     "1:5"},
    {"host node of another type",
     "cdiVersion: 0.5.0\nkind: a.b/c\ndevices:\n  - name: x\n    containerEdits:\n"
     "      deviceNodes: [{path: /dev/zero, type: b}]\n",
     "a.b/c=x",
     "cdi: a.b/c=x: device node /dev/zero (%1$s:6:21): the spec says type \"b\", the host's "
     "node is \"c\""},
    {"missing mount source",
     "cdiVersion: 0.5.0\nkind: a.b/c\ndevices: [{name: x}]\n"
     "containerEdits: {mounts: [{hostPath: /corral-nothing, containerPath: /x}]}\n",
     "a.b/c=x",
     "cdi: a.b/c=x: mount source /corral-nothing (%1$s:4:27): No such file or directory"},
};

static void test_errors(void **state)
{
	struct fixture *fixture = *state;

	for (size_t i = 0; i < ARRAY_SIZE(error_cases); i++) {
		const struct error_case *c = &error_cases[i];
		const char *names[] = {c->name, NULL};
		struct start_additions additions = {0};
		char path[160], expected[1024], error[1024] = "";

		snprintf(path, sizeof(path), "%s/spec.yaml", fixture->first);
		unlink(path);
		if (c->spec)
			write_file(fixture->first, "spec.yaml", c->spec);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* the table's own formats */
		snprintf(expected, sizeof(expected), c->message, path, fixture->first,
			 fixture->second);
#pragma GCC diagnostic pop
		print_message("case: %s\n", c->what);
		assert_true(resolve(fixture, names, &additions, error, sizeof(error)) < 0);
		assert_string_equal(error, expected);
		assert_int_equal(additions.device_count + additions.mount_count, 0);
		assert_null(additions.env);
	}
}

static void test_duplicate_of_same_priority(void **state)
{
	struct fixture *fixture = *state;
	const char *names[] = {"vendor.example/fake=zero0", NULL};
	const char *other_names[] = {"vendor.example/fake=one", NULL};
	struct start_additions additions = {0};
	char error[1024] = "", expected[1024];

	write_file(fixture->first, "a.yaml", FAKE_SPEC);
	write_file(fixture->first, "b.yaml",
		   "cdiVersion: 0.5.0\nkind: vendor.example/fake\ndevices:\n  - name: zero0\n");
	snprintf(expected, sizeof(expected),
		 "cdi: device \"vendor.example/fake=zero0\" is defined twice with the same "
		 "priority, in %s/a.yaml:4 and %s/b.yaml:4: remove one, or move one to a later "
		 "spec directory",
		 fixture->first, fixture->first);
	assert_int_equal(resolve(fixture, names, &additions, error, sizeof(error)), -EEXIST);
	assert_string_equal(error, expected);
	/* The conflict is the device's, not the spec's: others still work. */
	assert_int_equal(resolve(fixture, other_names, &additions, error, sizeof(error)), 0);
	start_additions_free(&additions);
}

static void test_default_directories(void **state)
{
	assert_string_equal(cdi_default_spec_dirs[0], "/etc/cdi");
	assert_string_equal(cdi_default_spec_dirs[1], "/var/run/cdi");
	assert_null(cdi_default_spec_dirs[2]);
}

static void test_qualified_names(void **state)
{
	static const struct {
		const char *name, *problem; /* problem NULL: valid */
	} cases[] = {
	    {"nvidia.com/gpu=0", NULL},
	    {"vendor.example/fake=zero0", NULL},
	    {"foo.bar.baz/foo-bar123.B_az=a:b.c_d-e", NULL},
	    {"vendor.com/gpu",
	     "missing \"=NAME\" (write VENDOR/CLASS=NAME, as in vendor.com/gpu=0)"},
	    {"gpu=0", "missing \"VENDOR/\" before the class \"gpu\""},
	    {"/gpu=0", "the vendor is empty"},
	    {"vendor.com/=0", "the class is empty"},
	    {"vendor.com/gpu=", "the device name is empty"},
	    {"1vendor/gpu=0", "the vendor \"1vendor\" must start with a letter"},
	    {"vendor.com/foo/bar=0",
	     "the class \"foo/bar\" has '/': use letters, digits and \"_-.\""},
	    {"vendor.com/gpu-=0", "the class \"gpu-\" must end with a letter or digit"},
	    {"vendor.com/gpu=0=1",
	     "the device name \"0=1\" has '=': use letters, digits and \"_-.:\""},
	    {"vendor.com/gpu=a:", "the device name \"a:\" must end with a letter or digit"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char buffer[192];
		const char *problem =
		    cdi_qualified_name_problem(cases[i].name, buffer, sizeof(buffer));

		print_message("name: %s\n", cases[i].name);
		if (cases[i].problem)
			assert_string_equal(problem, cases[i].problem);
		else
			assert_null(problem);
	}
}

static void test_additions_replace_by_target(void **state)
{
	struct start_additions additions = {0};
	struct mount_config mount = {.source = "/a", .target = "/x"};
	struct device_config device = {.source = "/dev/zero", .permissions = DEVICE_READ};

	start_additions_append_mount(&additions, &mount);
	mount.source = "/b";
	start_additions_append_mount(&additions, &mount);
	start_additions_append_device(&additions, &device);
	device.permissions = DEVICE_WRITE;
	start_additions_append_device(&additions, &device);
	assert_int_equal(start_additions_append_env(&additions, "A=1"), 0);
	assert_int_equal(start_additions_append_env(&additions, "AB=2"), 0);
	assert_int_equal(start_additions_append_env(&additions, "A=3"), 0);
	assert_int_equal(start_additions_append_env(&additions, "=3"), -EINVAL);
	assert_int_equal(start_additions_append_env(&additions, "B"), -EINVAL);

	assert_int_equal(additions.mount_count, 1);
	assert_string_equal(additions.mounts[0].source, "/b");
	assert_int_equal(additions.device_count, 1);
	assert_int_equal(additions.devices[0].permissions, DEVICE_WRITE);
	assert_string_equal(additions.env[0], "A=3");
	assert_string_equal(additions.env[1], "AB=2");
	assert_null(additions.env[2]);
	start_additions_free(&additions);
	assert_int_equal(additions.mount_count, 0);
	start_additions_free(&additions);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_device_mount_and_env, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_two_devices_share_the_spec_edits_once, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_json_spec, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_json_indented_with_tabs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_later_directory_overrides, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unsupported_edits_warn, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_duplicate_of_same_priority, setup, teardown),
	    cmocka_unit_test(test_default_directories),
	    cmocka_unit_test(test_qualified_names),
	    cmocka_unit_test(test_additions_replace_by_target),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
