/* A task's user namespace: the uid and gid maps corral writes for the child
 * between its clone and its setup (spawn_request.between), while the child
 * waits. The texts are made once, when corral starts.
 *
 * corral is root in its own namespace (it has CAP_SETUID and CAP_SETGID
 * there), so the kernel takes any map without "deny" in
 * /proc/PID/setgroups first; setgroups stays allowed in the namespace,
 * which is what lets the child drop corral's supplementary groups and set
 * the task's own before exec. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/model/config.h"

struct user_namespace_maps {
	char *uid_map; /* "INSIDE OUTSIDE COUNT\n" lines, as the kernel reads them */
	char *gid_map;
	size_t uid_map_length, gid_map_length;
};

void user_namespace_maps_build(struct user_namespace_maps *maps,
			       const struct isolation_config *config);
void user_namespace_maps_free(struct user_namespace_maps *maps);

/* Whether `id` is inside one of the ranges (an id the namespace can use). */
bool user_namespace_maps_id(const struct id_map_range *ranges, size_t count, uint32_t id);

/* Writes both maps of process `pid` (the kernel takes each in one write).
 * Returns 0, or -errno with `error` such as "write uid_map: Invalid
 * argument". */
int user_namespace_write_maps(const struct user_namespace_maps *maps, pid_t pid, char *error,
			      size_t error_size);
