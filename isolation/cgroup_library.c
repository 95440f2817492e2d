#include "isolation/cgroup_library.h"

#include <errno.h>
#include <libcgroup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/xmalloc.h"

static void describe(int result, const char *what, char *error, size_t error_size)
{
	/* ECGOTHER: the kernel refused; its errno is the useful part. */
	const char *reason = result == ECGOTHER ? strerror(cgroup_get_last_errno())
						: cgroup_strerror(result);
	snprintf(error, error_size, "%s: %s", what, reason);
}

bool cgroup_library_init(void)
{
	static int result = -1;
	if (result < 0)
		result = cgroup_init();
	return result == 0;
}

char *cgroup_library_v1_mount(const char *controller, const char *v2_mount)
{
	char *mount = NULL;
	if (!cgroup_library_init() || cgroup_get_subsys_mount_point(controller, &mount) != 0)
		return NULL;
	if (v2_mount && strcmp(mount, v2_mount) == 0) {
		free(mount);
		return NULL;
	}
	return mount;
}

char *cgroup_library_own_path(const char *controller)
{
	char *path = NULL;
	if (!cgroup_library_init() ||
	    cgroup_get_current_controller_path(getpid(), controller, &path) != 0)
		return NULL;
	return path;
}

/* One level: with the values of its parent copied for cpuset, bare for
 * the others (copying every memory.* file of a parent is not wanted). */
static int create_level(const char *controller, const char *path, char *error,
			size_t error_size)
{
	struct cgroup *group = cgroup_new_cgroup(path);
	if (!group || !cgroup_add_controller(group, controller)) {
		cgroup_free(&group);
		snprintf(error, error_size, "cgroup %s: out of memory", path);
		return -1;
	}
	int result = strcmp(controller, "cpuset") == 0 ? cgroup_create_cgroup_from_parent(group, 0)
						       : cgroup_create_cgroup(group, 0);
	cgroup_free(&group);
	if (result != 0) {
		char what[512];
		snprintf(what, sizeof(what), "create v1 %s cgroup %s", controller, path);
		describe(result, what, error, error_size);
		return -1;
	}
	return 0;
}

int cgroup_library_create(const char *controller, const char *path, char *error,
			  size_t error_size)
{
	if (!cgroup_library_init()) {
		snprintf(error, error_size, "libcgroup found no cgroup hierarchy");
		return -1;
	}
	if (strcmp(controller, "cpuset") != 0)
		return create_level(controller, path, error, error_size);
	/* Level by level, so that every new level inherits cpus and mems. */
	char partial[strlen(path) + 1];
	for (const char *slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/')) {
		size_t length = slash ? (size_t)(slash - path) : strlen(path);
		memcpy(partial, path, length);
		partial[length] = '\0';
		if (create_level(controller, partial, error, error_size) < 0)
			return -1;
		if (!slash)
			return 0;
	}
}

int cgroup_library_write(const char *controller, const char *path, const char *file,
			 const char *value, char *error, size_t error_size)
{
	struct cgroup *group = cgroup_new_cgroup(path);
	struct cgroup_controller *values = group ? cgroup_add_controller(group, controller) : NULL;
	int result = values ? cgroup_add_value_string(values, file, value) : ECGFAIL;
	if (result == 0)
		result = cgroup_modify_cgroup(group);
	cgroup_free(&group);
	if (result != 0) {
		describe(result, file, error, error_size);
		return -1;
	}
	return 0;
}
