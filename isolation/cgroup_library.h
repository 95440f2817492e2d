/* What corral asks of libcgroup: where v1 controllers are mounted, making
 * groups, and writing controller values (v1 and v2 alike). Errors come back
 * as text that names the file, e.g. "cpuset.cpus: Invalid argument". */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Reads the mount table once. False when libcgroup finds no cgroup at all. */
bool cgroup_library_init(void);

/* Why cgroup_library_init could not load libcgroup ("load
 * libcgroup.so.2: ..."), or NULL when it could (or was not asked yet). */
const char *cgroup_library_load_failure(void);

/* The mount point of `controller` when it is on a v1 hierarchy (not the v2
 * tree at `v2_mount`). NULL when it is not. Caller frees. */
char *cgroup_library_v1_mount(const char *controller, const char *v2_mount);

/* Whether `controller` is on a v1 hierarchy (cgroup_library_v1_mount). */
bool cgroup_library_has_v1(const char *controller, const char *v2_mount);

/* corral's own cgroup in the v1 hierarchy of `controller`, "/" or "/a/b",
 * relative to the controller's mount (which may show a subtree: a
 * container's own cgroup). Caller frees; NULL on failure. */
char *cgroup_library_own_path(const char *controller);

/* Makes `path` (relative to the controller's mount), its missing parents
 * included. For cpuset, each new level copies its parent's cpus and mems,
 * without which v1 refuses processes. 0, or -errno with `error`. */
int cgroup_library_create(const char *controller, const char *path, char *error, size_t error_size);

/* Writes one controller file of an existing group. 0, or -errno with `error`. */
int cgroup_library_write(const char *controller, const char *path, const char *file,
			 const char *value, char *error, size_t error_size);
