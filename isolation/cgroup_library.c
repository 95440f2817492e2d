#include "isolation/cgroup_library.h"

#include <errno.h>
#include <fcntl.h>
#include <libcgroup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "isolation/cgroup_fs.h"
#include "isolation/library_loader.h"
#include "isolation/mountinfo.h"

/* libcgroup, loaded by cgroup_library_init (library_loader.h): a host
 * with no v1 hierarchy, and every CLI call, go without it. */
#define LIBCGROUP_SONAME "libcgroup.so.2"
#define LIBCGROUP_FUNCTIONS(X)                                                                     \
	X(cgroup_add_controller)                                                                   \
	X(cgroup_add_value_string)                                                                 \
	X(cgroup_create_cgroup)                                                                    \
	X(cgroup_free)                                                                             \
	X(cgroup_get_current_controller_path)                                                      \
	X(cgroup_get_last_errno)                                                                   \
	X(cgroup_get_subsys_mount_point)                                                           \
	X(cgroup_init)                                                                             \
	X(cgroup_modify_cgroup)                                                                    \
	X(cgroup_new_cgroup)                                                                       \
	X(cgroup_strerror)

struct libcgroup_functions {
	LIBCGROUP_FUNCTIONS(LIBRARY_MEMBER)
};

static const struct libcgroup_functions *libcgroup_load(char *error, size_t error_size);
LIBRARY_LOADER(libcgroup_load, libcgroup_functions, LIBCGROUP_FUNCTIONS, LIBCGROUP_SONAME)

static const struct libcgroup_functions *libcgroup;
/* Why cgroup_library_init failed, for the errors of the calls after it. */
static char init_failure[300] = "libcgroup found no cgroup hierarchy";
static bool load_failed;

/* The kernel's errno where libcgroup has one (ECGOTHER), else -EIO. */
static int describe(int result, const char *what, char *error, size_t error_size)
{
	/* ECGOTHER: the kernel refused; its errno is the useful part. */
	const char *reason = result == ECGOTHER ? strerror(libcgroup->cgroup_get_last_errno())
			     : result == ECGROUPVALUENOTEXIST
				 ? "this kernel does not offer it (no such file)"
				 : libcgroup->cgroup_strerror(result);
	snprintf(error, error_size, "%s: %s", what, reason);
	int kernel_errno = result == ECGOTHER ? libcgroup->cgroup_get_last_errno() : 0;
	return kernel_errno > 0 ? -kernel_errno : -EIO;
}

bool cgroup_library_init(void)
{
	static int result = -1;
	if (result >= 0)
		return result == 0;
	char reason[256];
	if (!(libcgroup = libcgroup_load(reason, sizeof(reason)))) {
		snprintf(init_failure, sizeof(init_failure), "load %s", reason);
		load_failed = true;
		result = ECGFAIL;
		return false;
	}
	result = libcgroup->cgroup_init();
	return result == 0;
}

const char *cgroup_library_load_failure(void)
{
	return load_failed ? init_failure : NULL;
}

char *cgroup_library_v1_mount(const char *controller, const char *v2_mount)
{
	char *mount = NULL;
	if (!cgroup_library_init() ||
	    libcgroup->cgroup_get_subsys_mount_point(controller, &mount) != 0)
		return NULL;
	if (v2_mount && strcmp(mount, v2_mount) == 0) {
		free(mount);
		return NULL;
	}
	return mount;
}

bool cgroup_library_has_v1(const char *controller, const char *v2_mount)
{
	char *mount = cgroup_library_v1_mount(controller, v2_mount);
	free(mount);
	return mount != NULL;
}

/* libcgroup takes the path /proc/self/cgroup gives as relative to the
 * controller's mount point, which holds when the mount shows the
 * hierarchy's root. A container runtime that gives no cgroup namespace
 * mounts the container's own cgroup there instead (runc's v1 `cgroup`
 * mount, in a privileged Kubernetes container on a v1 or hybrid host):
 * corral's "/NAMESPACE/ID" is then the mount's "/", and the mount's root
 * comes off. NULL when corral's cgroup is not under the mount. */
static char *below_mount_root(const char *path, const char *mount)
{
	struct mountinfo info;
	if (mountinfo_read(&info) < 0)
		return NULL;
	const struct mountinfo_entry *entry = mountinfo_find_mount_point(&info, mount);
	char *below = NULL;
	if (entry && mountinfo_path_is_below(path, entry->root)) {
		size_t length = strlen(entry->root);
		while (length > 0 && entry->root[length - 1] == '/')
			length--;
		below = xstrdup(path[length] ? path + length : "/");
	}
	mountinfo_free(&info);
	return below;
}

char *cgroup_library_own_path(const char *controller)
{
	char *path = NULL, *mount = NULL;
	if (!cgroup_library_init() ||
	    libcgroup->cgroup_get_current_controller_path(getpid(), controller, &path) != 0)
		return NULL;
	if (libcgroup->cgroup_get_subsys_mount_point(controller, &mount) != 0) {
		free(path);
		return NULL;
	}
	char *below = below_mount_root(path, mount);
	free(path);
	free(mount);
	return below;
}

static int create_level(const char *controller, const char *path, char *error, size_t error_size)
{
	struct cgroup *group = libcgroup->cgroup_new_cgroup(path);
	if (!group || !libcgroup->cgroup_add_controller(group, controller)) {
		libcgroup->cgroup_free(&group);
		snprintf(error, error_size, "cgroup %s: out of memory", path);
		return -ENOMEM;
	}
	int result = libcgroup->cgroup_create_cgroup(group, 0);
	libcgroup->cgroup_free(&group);
	if (result != 0) {
		char what[512];
		snprintf(what, sizeof(what), "create v1 %s cgroup %s", controller, path);
		return describe(result, what, error, error_size);
	}
	return 0;
}

/* A new v1 cpuset group has no cpus and no mems, and takes no process
 * until it has both: it gets its parent's. (libcgroup's
 * cgroup_create_cgroup_from_parent copies every file, read-only ones
 * included, and fails.) */
static int inherit_cpuset(const char *mount, const char *path, char *error, size_t error_size)
{
	static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
	char parent[strlen(mount) + strlen(path) + 1];
	snprintf(parent, sizeof(parent), "%s%s", mount, path);
	*strrchr(parent, '/') = '\0';
	int parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent_fd < 0) {
		int failure = -errno;
		snprintf(error, error_size, "%s: %s", parent, strerror(-failure));
		return failure;
	}
	int result = 0;
	for (size_t i = 0; i < 2 && result == 0; i++) {
		char value[256];
		long length = cgroup_fs_read(parent_fd, files[i], value, sizeof(value));
		if (length < 0) {
			snprintf(error, error_size, "%s/%s: %s", parent, files[i],
				 strerror((int)-length));
			result = (int)length;
		} else {
			value[strcspn(value, "\n")] = '\0';
			result = cgroup_library_write("cpuset", path, files[i], value, error,
						      error_size);
		}
	}
	close(parent_fd);
	return result;
}

int cgroup_library_create(const char *controller, const char *path, char *error, size_t error_size)
{
	if (!cgroup_library_init()) {
		snprintf(error, error_size, "%s", init_failure);
		return -ENOSYS;
	}
	if (strcmp(controller, "cpuset") != 0)
		return create_level(controller, path, error, error_size);
	char *mount = NULL;
	if (libcgroup->cgroup_get_subsys_mount_point(controller, &mount) != 0) {
		snprintf(error, error_size, "no v1 cpuset hierarchy");
		return -ENOENT;
	}
	/* Level by level, so that every new level inherits cpus and mems. */
	char partial[strlen(path) + 1];
	int result = 0;
	for (const char *slash = strchr(path + 1, '/'); result == 0;
	     slash = strchr(slash + 1, '/')) {
		size_t length = slash ? (size_t)(slash - path) : strlen(path);
		memcpy(partial, path, length);
		partial[length] = '\0';
		result = create_level(controller, partial, error, error_size);
		if (result == 0)
			result = inherit_cpuset(mount, partial, error, error_size);
		if (!slash)
			break;
	}
	free(mount);
	return result;
}

int cgroup_library_write(const char *controller, const char *path, const char *file,
			 const char *value, char *error, size_t error_size)
{
	if (!cgroup_library_init()) {
		snprintf(error, error_size, "%s: %s", file, init_failure);
		return -ENOSYS;
	}
	struct cgroup *group = libcgroup->cgroup_new_cgroup(path);
	struct cgroup_controller *values =
	    group ? libcgroup->cgroup_add_controller(group, controller) : NULL;
	int result = values ? libcgroup->cgroup_add_value_string(values, file, value) : ECGFAIL;
	if (result == 0)
		result = libcgroup->cgroup_modify_cgroup(group);
	libcgroup->cgroup_free(&group);
	if (result != 0)
		return describe(result, file, error, error_size);
	return 0;
}
