/* The directories corral watches for `watch:` (watch_set.h), on one
 * inotify fd: a directory watched for several paths, or for several tasks
 * (instances), is one inotify watch, counted. The fd is open only while a
 * directory is watched, so a config without `watch:` costs nothing, and a
 * reload that removes the last watch gives the fd back. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Every event a path's change can show as, in a directory or of the
 * directory itself. One mask for all: inotify keeps one per inode and fd. */
#define WATCH_DIRS_MASK                                                                            \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY |        \
	 IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)

struct watch_dir {
	int wd;
	unsigned users; /* targets that hold it */
	/* The kernel dropped it (IN_IGNORED: the directory was removed, its
	 * file system unmounted): never inotify_rm_watch'd. */
	bool gone;
};

struct watch_dirs {
	int fd; /* inotify; -1 while nothing is watched */
	struct watch_dir *items;
	size_t count;
	/* The fd came from the corral before an upgrade: its watches are
	 * there already, some of them perhaps no longer needed. */
	bool adopted;
};

void watch_dirs_init(struct watch_dirs *dirs);

/* The inotify fd the corral before an upgrade had (`corral upgrade`
 * hands it over): used instead of a new one, which a task may have taken
 * the last instance for (fs.inotify.max_user_instances counts per user),
 * and the events queued during the exec are read from it. Its watches
 * are acquired again as they were (inotify_add_watch gives an inode
 * watched already its wd), and watch_dirs_drop_strays then removes those
 * nobody acquired. -1 does nothing. */
void watch_dirs_adopt(struct watch_dirs *dirs, int fd);
/* After an adoption, once every path is watched again: the fd's watches
 * that no holder acquired (a link re-pointed during the exec) removed,
 * as the kernel lists them in /proc/self/fdinfo. */
void watch_dirs_drop_strays(struct watch_dirs *dirs);

/* `path`, a directory, watched (the fd opened at the first): its wd, or
 * -errno (-ENOENT, -ENOTDIR: not there or no directory; -ENOSPC: the
 * watch limit; -EMFILE: the instance limit or corral's fds). */
int watch_dirs_acquire(struct watch_dirs *dirs, const char *path);

/* One holder fewer; the last one removes the watch. -1 does nothing. */
void watch_dirs_release(struct watch_dirs *dirs, int wd);

/* IN_IGNORED: the kernel dropped `wd`; its holders find out when they
 * resolve their paths again. */
void watch_dirs_gone(struct watch_dirs *dirs, int wd);

/* Closes the fd when nothing is watched any more: true when it did. */
bool watch_dirs_close_if_unused(struct watch_dirs *dirs);

/* Why a directory could not be watched, for people: the limit to raise. */
void watch_dirs_describe_error(int error, char *buffer, size_t size);
