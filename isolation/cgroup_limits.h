/* From a task's `resources:` to the cgroup files that enforce them: pure.
 *
 * Each limit goes to cgroup v2 when its controller is enabled for corral's
 * tasks there, else to a cgroup v1 hierarchy that has it (hybrid hosts),
 * else nowhere: an error, or with `optional: true` a skip reported once. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/model/config.h"

enum cgroup_version {
	CGROUP_V2,
	CGROUP_V1,
};

struct cgroup_setting {
	const char *resource;   /* the config field: "memory" */
	const char *controller; /* in its hierarchy's name: "memory", "blkio" */
	enum cgroup_version version;
	char file[40];  /* "memory.max" */
	char value[64]; /* "268435456" */
};

#define CGROUP_SETTINGS_MAX 12

struct cgroup_settings {
	struct cgroup_setting items[CGROUP_SETTINGS_MAX];
	size_t count;
	char skipped[128]; /* optional limits with no controller: "cpuset, io_weight" */
};

/* Which controllers exist where. */
struct cgroup_availability {
	bool (*has_v2)(void *context, const char *controller);
	bool (*has_v1)(void *context, const char *controller);
	/* Why v1 hierarchies could not be looked at (libcgroup did not
	 * load), or NULL; may itself be NULL. */
	const char *(*v1_unknown)(void *context);
	void *context;
};

/* The period cpu.max and cpu.cfs_period_us are written with: 100 ms. */
#define CGROUP_CPU_PERIOD_US 100000

/* Fills `settings` in the order they must be written. Returns 0, or -1
 * with `error` naming the resource and why ("memory: no memory controller
 * ...") when a limit has nowhere to go and is not optional. */
int cgroup_limits_plan(const struct resources_config *resources,
		       const struct cgroup_availability *availability,
		       struct cgroup_settings *settings, char *error, size_t error_size);
