/* /proc/self/mountinfo as corral reads it: which mount a path is on,
 * whether that mount is shared, what is mounted below a directory. The
 * parser is a function over a buffer (unit-tested); mountinfo_read reads
 * corral's own. See proc_pid_mountinfo(5). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mountinfo_entry {
	uint64_t id;       /* the mount ID, as statx(STATX_MNT_ID) gives it */
	uint64_t parent;   /* the parent's mount ID */
	char *root;        /* what of its file system the mount shows, unescaped: "/", or
			    * a directory (a bind mount; a container's own cgroup) */
	char *mount_point; /* unescaped ("\040" is a space), relative to corral's root */
	uint64_t shared;   /* the peer group ("shared:N"), 0: not shared */
};

struct mountinfo {
	struct mountinfo_entry *entries; /* in the file's order: a later one
					  * may cover an earlier one */
	size_t count;
};

/* 0, or -EINVAL for a line that is not mountinfo's (then `out` is empty). */
int mountinfo_parse(const char *text, size_t length, struct mountinfo *out);
/* /proc/self/mountinfo: 0 or -errno. */
int mountinfo_read(struct mountinfo *out);
void mountinfo_free(struct mountinfo *info);

const struct mountinfo_entry *mountinfo_find(const struct mountinfo *info, uint64_t id);
/* The mount visible at `mount_point`: the last one mounted there. */
const struct mountinfo_entry *mountinfo_find_mount_point(const struct mountinfo *info,
							 const char *mount_point);

/* `path` is `top` or below it ("/a/b" is below "/a", "/ab" is not). */
bool mountinfo_path_is_below(const char *path, const char *top);
