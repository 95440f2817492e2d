#include "isolation/cgroup_limits.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One limit of the config, as the two cgroup versions name it. */
struct limit_route {
	const char *resource;
	const char *v2_controller;
	const char *v1_controller;
};

static const struct limit_route routes[] = {
    {"memory", "memory", "memory"},      {"memory_high", "memory", "memory"},
    {"memory_swap", "memory", "memory"}, {"cpu", "cpu", "cpu"},
    {"cpu_weight", "cpu", "cpu"},        {"pids", "pids", "pids"},
    {"cpuset", "cpuset", "cpuset"},      {"io_weight", "io", "blkio"},
};

static bool is_set(const struct resources_config *resources, const char *resource)
{
	if (strcmp(resource, "memory") == 0)
		return resources->memory != 0;
	if (strcmp(resource, "memory_high") == 0)
		return resources->memory_high != 0;
	if (strcmp(resource, "memory_swap") == 0)
		return resources->has_memory_swap;
	if (strcmp(resource, "cpu") == 0)
		return resources->cpu_millicores != 0;
	if (strcmp(resource, "cpu_weight") == 0)
		return resources->cpu_weight != 0;
	if (strcmp(resource, "pids") == 0)
		return resources->pids != 0;
	if (strcmp(resource, "cpuset") == 0)
		return resources->cpuset != NULL;
	return resources->io_weight != 0;
}

static void add(struct cgroup_settings *settings, const struct limit_route *route,
		enum cgroup_version version, const char *file, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

static void add(struct cgroup_settings *settings, const struct limit_route *route,
		enum cgroup_version version, const char *file, const char *format, ...)
{
	struct cgroup_setting *setting = &settings->items[settings->count++];
	setting->resource = route->resource;
	setting->version = version;
	setting->controller = version == CGROUP_V2 ? route->v2_controller : route->v1_controller;
	snprintf(setting->file, sizeof(setting->file), "%s", file);
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(setting->value, sizeof(setting->value), format, arguments);
	va_end(arguments);
}

static uint64_t cpu_quota_us(const struct resources_config *resources)
{
	return (uint64_t)resources->cpu_millicores * CGROUP_CPU_PERIOD_US / 1000;
}

static void add_v2(struct cgroup_settings *settings, const struct limit_route *route,
		   const struct resources_config *resources)
{
	const char *name = route->resource;
	if (strcmp(name, "memory") == 0)
		add(settings, route, CGROUP_V2, "memory.max", "%" PRIu64, resources->memory);
	else if (strcmp(name, "memory_high") == 0)
		add(settings, route, CGROUP_V2, "memory.high", "%" PRIu64, resources->memory_high);
	else if (strcmp(name, "memory_swap") == 0)
		add(settings, route, CGROUP_V2, "memory.swap.max", "%" PRIu64,
		    resources->memory_swap);
	else if (strcmp(name, "cpu") == 0)
		add(settings, route, CGROUP_V2, "cpu.max", "%" PRIu64 " %u",
		    cpu_quota_us(resources), CGROUP_CPU_PERIOD_US);
	else if (strcmp(name, "cpu_weight") == 0)
		add(settings, route, CGROUP_V2, "cpu.weight", "%u", resources->cpu_weight);
	else if (strcmp(name, "pids") == 0)
		add(settings, route, CGROUP_V2, "pids.max", "%" PRIu64, resources->pids);
	else if (strcmp(name, "cpuset") == 0)
		add(settings, route, CGROUP_V2, "cpuset.cpus", "%s", resources->cpuset);
	else
		add(settings, route, CGROUP_V2, "io.weight", "default %u", resources->io_weight);
}

/* v1 differs in names and units: shares of 1024 for a weight of 100,
 * memory+swap together, blkio weights of 10..1000. */
static int add_v1(struct cgroup_settings *settings, const struct limit_route *route,
		  const struct resources_config *resources, char *error, size_t error_size)
{
	const char *name = route->resource;
	if (strcmp(name, "memory") == 0) {
		add(settings, route, CGROUP_V1, "memory.limit_in_bytes", "%" PRIu64,
		    resources->memory);
	} else if (strcmp(name, "memory_high") == 0) {
		add(settings, route, CGROUP_V1, "memory.soft_limit_in_bytes", "%" PRIu64,
		    resources->memory_high);
	} else if (strcmp(name, "memory_swap") == 0) {
		if (!resources->memory) {
			snprintf(error, error_size,
				 "memory_swap: on cgroup v1 (memory.memsw.limit_in_bytes) it needs "
				 "memory to be set too");
			return -1;
		}
		/* Saturates: sizes near 2^64 mean "no limit" anyway. */
		uint64_t total = resources->memory + resources->memory_swap;
		if (total < resources->memory)
			total = UINT64_MAX;
		add(settings, route, CGROUP_V1, "memory.memsw.limit_in_bytes", "%" PRIu64, total);
	} else if (strcmp(name, "cpu") == 0) {
		add(settings, route, CGROUP_V1, "cpu.cfs_period_us", "%u", CGROUP_CPU_PERIOD_US);
		add(settings, route, CGROUP_V1, "cpu.cfs_quota_us", "%" PRIu64,
		    cpu_quota_us(resources));
	} else if (strcmp(name, "cpu_weight") == 0) {
		uint64_t shares = (uint64_t)resources->cpu_weight * 1024 / 100;
		add(settings, route, CGROUP_V1, "cpu.shares", "%" PRIu64, shares < 2 ? 2 : shares);
	} else if (strcmp(name, "pids") == 0) {
		add(settings, route, CGROUP_V1, "pids.max", "%" PRIu64, resources->pids);
	} else if (strcmp(name, "cpuset") == 0) {
		add(settings, route, CGROUP_V1, "cpuset.cpus", "%s", resources->cpuset);
	} else {
		unsigned weight = resources->io_weight;
		weight = weight < 10 ? 10 : weight > 1000 ? 1000 : weight;
		add(settings, route, CGROUP_V1, "blkio.weight", "%u", weight);
	}
	return 0;
}

static void note_skipped(struct cgroup_settings *settings, const char *resource)
{
	size_t used = strlen(settings->skipped);
	snprintf(settings->skipped + used, sizeof(settings->skipped) - used, "%s%s",
		 used ? ", " : "", resource);
}

int cgroup_limits_plan(const struct resources_config *resources,
		       const struct cgroup_availability *availability,
		       struct cgroup_settings *settings, char *error, size_t error_size)
{
	memset(settings, 0, sizeof(*settings));
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		const struct limit_route *route = &routes[i];
		if (!is_set(resources, route->resource))
			continue;
		if (availability->has_v2(availability->context, route->v2_controller)) {
			add_v2(settings, route, resources);
		} else if (availability->has_v1(availability->context, route->v1_controller)) {
			if (add_v1(settings, route, resources, error, error_size) < 0)
				return -1;
		} else if (resources->optional) {
			note_skipped(settings, route->resource);
		} else if (availability->v1_unknown &&
			   availability->v1_unknown(availability->context)) {
			snprintf(
			    error, error_size,
			    "%s: no %s controller in corral's cgroup v2 tree, and no v1 hierarchy "
			    "could be looked at: %s",
			    route->resource, route->v2_controller,
			    availability->v1_unknown(availability->context));
			return -1;
		} else {
			snprintf(
			    error, error_size,
			    "%s: no %s controller: it is neither enabled for corral's cgroup "
			    "v2 tree nor mounted as cgroup v1 (set resources.optional: true to "
			    "run without this limit)",
			    route->resource, route->v2_controller);
			return -1;
		}
	}
	return 0;
}
