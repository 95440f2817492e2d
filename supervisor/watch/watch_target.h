/* One path of a `watch:` entry at run time: the directory watched for it,
 * and what an inotify event there means for it.
 *
 * A path is watched through the directory that holds it, never through
 * itself: an editor's save or Kubernetes' ConfigMap update replaces the
 * file (a rename over it, or a new `..data` symlink renamed over the old
 * one), which a watch on the file would not see. Kubernetes' volume holds
 * `..data -> ..2026_11_27_...` and each file is a symlink through
 * `..data`: a symlink made or renamed in the directory makes corral
 * resolve the path again and compare what it leads to. A directory named
 * by the path is watched itself too (a change of any of its entries). A
 * path whose directory is missing is watched from its nearest existing
 * ancestor, and picked up when the missing part appears.
 *
 * A path (not a glob) that goes through symlinks is watched along them
 * too (watch_chain.h): the directory of each link, for the link's name
 * (re-pointed, removed, made), and the directory where the path ends, for
 * the file (edited there) or the first missing part (appearing). Those
 * watches follow the links when they move. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervisor/watch/watch_dirs.h"

struct watch_target_hop {
	int wd; /* -1: its directory went away before it could be watched */
	char *name;
	bool link; /* a link on the way; else where the path ends */
};

struct watch_target {
	char *path;         /* absolute, cleaned (config_watch.c) */
	size_t name_offset; /* its last part is path + name_offset */
	bool pattern;       /* that last part is a glob */
	/* The watch on its directory, or on the nearest ancestor there is
	 * while the directory is missing (at_directory false); -1 before the
	 * first resolution, or when it failed. dir_length: that directory's
	 * length in path (1 for "/"). */
	int dir_wd;
	size_t dir_length;
	bool at_directory;
	int self_wd; /* a directory named by the path (not a glob): its own watch; else -1 */
	/* Where its symlinks lead (watch_chain.h), each by the watch on the
	 * directory that holds it; none when the path goes through no link. */
	struct watch_target_hop *hops;
	size_t hop_count;
	/* The links were not followed to the end (a loop): said once. */
	bool chain_cut;
	/* What the path was at the last resolution: whether it is there (a
	 * glob: whether something matches), and, through symlinks, which
	 * file. */
	bool resolved;
	bool exists;
	dev_t device;
	ino_t inode;
};

void watch_target_init(struct watch_target *target, const char *path);
/* Its watches given back. */
void watch_target_free(struct watch_target *target, struct watch_dirs *dirs);

/* Watches what the path needs now. 1 when what it leads to changed since
 * the last resolution (it appeared, went away, or leads to another file),
 * 0 when not (and at the first), -errno with `error` when a directory
 * could not be watched (it then keeps what it had). */
int watch_target_resolve(struct watch_target *target, struct watch_dirs *dirs, char *error,
			 size_t error_size);

enum watch_verdict {
	WATCH_CHANGED = 1u << 0, /* the path changed: what changed is in `changed` */
	WATCH_RESOLVE = 1u << 1, /* resolve it again (which may find a change too) */
};

/* What inotify's event (`name` NULL for one of the directory itself)
 * means for the target: enum watch_verdict bits. */
unsigned watch_target_event(const struct watch_target *target, int wd, uint32_t mask,
			    const char *name, char *changed, size_t changed_size);
