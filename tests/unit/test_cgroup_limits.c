/* From resources to cgroup files: each limit in v2 and v1 form, the choice
 * between them by where the controller is, and the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "isolation/cgroup_limits.h"

/* Controllers as words of a string: " memory cpu " etc. */
struct places {
	const char *v2;
	const char *v1;
	const char *v1_unknown; /* why v1 could not be looked at, or NULL */
};

static bool listed(const char *list, const char *controller)
{
	size_t length = strlen(controller);
	for (const char *at = list; (at = strstr(at, controller)); at += length)
		if ((at == list || at[-1] == ' ') && (at[length] == ' ' || !at[length]))
			return true;
	return false;
}

static bool has_v2(void *context, const char *controller)
{
	return listed(((struct places *)context)->v2, controller);
}

static bool has_v1(void *context, const char *controller)
{
	return listed(((struct places *)context)->v1, controller);
}

static const char *v1_unknown(void *context)
{
	return ((struct places *)context)->v1_unknown;
}

static int plan(const struct resources_config *resources, struct places places,
		struct cgroup_settings *settings, char *error, size_t error_size)
{
	struct cgroup_availability availability = {has_v2, has_v1, v1_unknown, &places};
	return cgroup_limits_plan(resources, &availability, settings, error, error_size);
}

static void assert_setting(const struct cgroup_setting *setting, enum cgroup_version version,
			   const char *controller, const char *file, const char *value)
{
	assert_int_equal(setting->version, version);
	assert_string_equal(setting->controller, controller);
	assert_string_equal(setting->file, file);
	assert_string_equal(setting->value, value);
}

static const struct resources_config every_limit = {
    .memory = 256u << 20,
    .memory_high = 200u << 20,
    .has_memory_swap = true,
    .memory_swap = 0,
    .cpu_millicores = 500,
    .cpu_weight = 200,
    .pids = 128,
    .cpuset = "0-1",
    .io_weight = 5000,
};

static void test_v2_files(void **state)
{
	struct cgroup_settings settings;
	char error[256] = "";
	struct places places = {"cpuset cpu io memory pids", "", NULL};
	assert_int_equal(plan(&every_limit, places, &settings, error, sizeof(error)), 0);
	assert_int_equal(settings.count, 8);
	assert_setting(&settings.items[0], CGROUP_V2, "memory", "memory.max", "268435456");
	assert_setting(&settings.items[1], CGROUP_V2, "memory", "memory.high", "209715200");
	assert_setting(&settings.items[2], CGROUP_V2, "memory", "memory.swap.max", "0");
	assert_setting(&settings.items[3], CGROUP_V2, "cpu", "cpu.max", "50000 100000");
	assert_setting(&settings.items[4], CGROUP_V2, "cpu", "cpu.weight", "200");
	assert_setting(&settings.items[5], CGROUP_V2, "pids", "pids.max", "128");
	assert_setting(&settings.items[6], CGROUP_V2, "cpuset", "cpuset.cpus", "0-1");
	assert_setting(&settings.items[7], CGROUP_V2, "io", "io.weight", "default 5000");
	assert_string_equal(settings.skipped, "");
}

/* A hybrid host: nothing in v2, everything in v1, in v1's names and units. */
static void test_v1_files(void **state)
{
	struct cgroup_settings settings;
	char error[256] = "";
	struct places places = {"hugetlb", "cpuset cpu blkio memory pids", NULL};
	struct resources_config resources = every_limit;
	resources.memory_swap = 64u << 20;
	assert_int_equal(plan(&resources, places, &settings, error, sizeof(error)), 0);
	assert_int_equal(settings.count, 9);
	assert_setting(&settings.items[0], CGROUP_V1, "memory", "memory.limit_in_bytes",
		       "268435456");
	assert_setting(&settings.items[1], CGROUP_V1, "memory", "memory.soft_limit_in_bytes",
		       "209715200");
	/* memory + swap, written after the memory limit it must not undercut. */
	assert_setting(&settings.items[2], CGROUP_V1, "memory", "memory.memsw.limit_in_bytes",
		       "335544320");
	assert_setting(&settings.items[3], CGROUP_V1, "cpu", "cpu.cfs_period_us", "100000");
	assert_setting(&settings.items[4], CGROUP_V1, "cpu", "cpu.cfs_quota_us", "50000");
	assert_setting(&settings.items[5], CGROUP_V1, "cpu", "cpu.shares", "2048");
	assert_setting(&settings.items[6], CGROUP_V1, "pids", "pids.max", "128");
	assert_setting(&settings.items[7], CGROUP_V1, "cpuset", "cpuset.cpus", "0-1");
	/* 1..10000 maps onto blkio's 10..1000 by clamping. */
	assert_setting(&settings.items[8], CGROUP_V1, "blkio", "blkio.weight", "1000");
}

/* v2 first, per controller: memory in v2, cpu only in v1. */
static void test_each_controller_where_it_is(void **state)
{
	struct cgroup_settings settings;
	char error[256] = "";
	struct resources_config resources = {
	    .memory = 1u << 30, .cpu_millicores = 2500, .cpu_weight = 1};
	struct places places = {"memory", "cpu memory", NULL};
	assert_int_equal(plan(&resources, places, &settings, error, sizeof(error)), 0);
	assert_int_equal(settings.count, 4);
	assert_setting(&settings.items[0], CGROUP_V2, "memory", "memory.max", "1073741824");
	assert_setting(&settings.items[1], CGROUP_V1, "cpu", "cpu.cfs_period_us", "100000");
	assert_setting(&settings.items[2], CGROUP_V1, "cpu", "cpu.cfs_quota_us", "250000");
	/* Weights scale to shares: 100 (the default) is 1024. */
	assert_setting(&settings.items[3], CGROUP_V1, "cpu", "cpu.shares", "10");
}

static void test_no_limits_no_settings(void **state)
{
	struct cgroup_settings settings;
	char error[256] = "";
	struct resources_config none = {.optional = true};
	assert_int_equal(
	    plan(&none, (struct places){"", "", NULL}, &settings, error, sizeof(error)), 0);
	assert_int_equal(settings.count, 0);
	assert_false(resources_config_has_limits(&none));
	assert_true(resources_config_has_limits(&every_limit));
}

static void test_a_missing_controller_is_an_error_unless_optional(void **state)
{
	struct cgroup_settings settings;
	char error[256] = "";
	struct resources_config resources = {.memory = 1u << 20, .pids = 10, .cpuset = "0"};
	struct places places = {"memory", "", NULL};
	assert_int_equal(plan(&resources, places, &settings, error, sizeof(error)), -1);
	assert_string_equal(error, "pids: no pids controller: it is neither enabled for corral's "
				   "cgroup v2 tree nor mounted as cgroup v1 (set "
				   "resources.optional: true to run without this limit)");

	/* libcgroup could not be loaded: that is said, not "not mounted". */
	places.v1_unknown = "load libcgroup.so.2: file too short";
	assert_int_equal(plan(&resources, places, &settings, error, sizeof(error)), -1);
	assert_string_equal(error,
			    "pids: no pids controller in corral's cgroup v2 tree, and no v1 "
			    "hierarchy could be looked at: load libcgroup.so.2: file too short");

	resources.optional = true;
	error[0] = '\0';
	assert_int_equal(plan(&resources, places, &settings, error, sizeof(error)), 0);
	assert_int_equal(settings.count, 1);
	assert_string_equal(settings.items[0].file, "memory.max");
	assert_string_equal(settings.skipped, "pids, cpuset");
}

static void test_v1_swap_needs_a_memory_limit(void **state)
{
	struct cgroup_settings settings;
	char error[256] = "";
	struct resources_config resources = {.has_memory_swap = true, .memory_swap = 1u << 20};
	assert_int_equal(
	    plan(&resources, (struct places){"", "memory", NULL}, &settings, error, sizeof(error)),
	    -1);
	assert_string_equal(error, "memory_swap: on cgroup v1 (memory.memsw.limit_in_bytes) it "
				   "needs memory to be set too");
	/* v2 has swap on its own. */
	assert_int_equal(
	    plan(&resources, (struct places){"memory", "", NULL}, &settings, error, sizeof(error)),
	    0);
	assert_setting(&settings.items[0], CGROUP_V2, "memory", "memory.swap.max", "1048576");
}

static void test_v1_swap_saturates(void **state)
{
	struct cgroup_settings settings;
	char error[256] = "";
	struct resources_config resources = {
	    .memory = UINT64_MAX - 1, .has_memory_swap = true, .memory_swap = 10};
	assert_int_equal(
	    plan(&resources, (struct places){"", "memory", NULL}, &settings, error, sizeof(error)),
	    0);
	assert_setting(&settings.items[1], CGROUP_V1, "memory", "memory.memsw.limit_in_bytes",
		       "18446744073709551615");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v2_files),
	    cmocka_unit_test(test_v1_files),
	    cmocka_unit_test(test_each_controller_where_it_is),
	    cmocka_unit_test(test_no_limits_no_settings),
	    cmocka_unit_test(test_a_missing_controller_is_an_error_unless_optional),
	    cmocka_unit_test(test_v1_swap_needs_a_memory_limit),
	    cmocka_unit_test(test_v1_swap_saturates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
