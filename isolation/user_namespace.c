#include "isolation/user_namespace.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "isolation/own_privileges.h"

/* At most 340 lines of three 10-digit numbers: a few kilobytes, below the
 * page the kernel accepts in one write. */
static char *format_map(const struct id_map_range *ranges, size_t count, size_t *length)
{
	char *text = xcalloc(count * 34 + 1, 1);
	size_t used = 0;
	for (size_t i = 0; i < count; i++)
		used += (size_t)sprintf(text + used, "%u %u %u\n", ranges[i].inside,
					ranges[i].outside, ranges[i].count);
	*length = used;
	return text;
}

void user_namespace_maps_build(struct user_namespace_maps *maps,
			       const struct isolation_config *config)
{
	maps->uid_map = format_map(config->uid_map, config->uid_map_count, &maps->uid_map_length);
	maps->gid_map = format_map(config->gid_map, config->gid_map_count, &maps->gid_map_length);
}

void user_namespace_maps_free(struct user_namespace_maps *maps)
{
	free(maps->uid_map);
	free(maps->gid_map);
	memset(maps, 0, sizeof(*maps));
}

bool user_namespace_maps_id(const struct id_map_range *ranges, size_t count, uint32_t id)
{
	for (size_t i = 0; i < count; i++)
		if (id >= ranges[i].inside && id - ranges[i].inside < ranges[i].count)
			return true;
	return false;
}

static int write_map(pid_t pid, const char *name, const char *text, size_t length, char *error,
		     size_t error_size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int failure = 0;
	ssize_t written = fd < 0 ? -1 : write(fd, text, length);
	if (written < 0)
		failure = -errno;
	else if ((size_t)written != length)
		failure = -EIO;
	if (fd >= 0)
		close(fd);
	if (failure < 0)
		snprintf(error, error_size, "write %s: %s", name, strerror(-failure));
	return failure;
}

int user_namespace_write_maps(const struct user_namespace_maps *maps, pid_t pid, char *error,
			      size_t error_size)
{
	int failure =
	    write_map(pid, "uid_map", maps->uid_map, maps->uid_map_length, error, error_size);
	/* The kernel takes a gid map from a writer without CAP_SETGID (a
	 * non-root corral mapping its own gid) only once setgroups is denied
	 * in the namespace, as `unshare --map-root-user` does. */
	if (failure == 0 && !(own_permitted_capabilities() & (1ull << CAP_SETGID)))
		failure = write_map(pid, "setgroups", "deny", 4, error, error_size);
	if (failure == 0)
		failure = write_map(pid, "gid_map", maps->gid_map, maps->gid_map_length, error,
				    error_size);
	return failure;
}
