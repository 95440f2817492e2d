#include "supervisor/watch/watch_dirs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "base/xmalloc.h"

void watch_dirs_init(struct watch_dirs *dirs)
{
	*dirs = (struct watch_dirs){.fd = -1};
}

static struct watch_dir *find(struct watch_dirs *dirs, int wd)
{
	for (size_t i = 0; i < dirs->count; i++)
		if (dirs->items[i].wd == wd)
			return &dirs->items[i];
	return NULL;
}

void watch_dirs_adopt(struct watch_dirs *dirs, int fd)
{
	if (fd < 0 || dirs->fd >= 0)
		return;
	dirs->fd = fd;
	dirs->adopted = true;
}

void watch_dirs_drop_strays(struct watch_dirs *dirs)
{
	if (!dirs->adopted)
		return;
	dirs->adopted = false;
	if (dirs->fd < 0)
		return;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", dirs->fd);
	FILE *info = fopen(path, "re");
	if (!info)
		return; /* no /proc: the strays stay until the fd is closed */
	/* "inotify wd:3 ino:..." a line per watch, the wd in hex; removed
	 * after the listing is read. */
	int *strays = NULL;
	size_t stray_count = 0;
	char line[512];
	unsigned wd;
	while (fgets(line, sizeof(line), info))
		if (sscanf(line, "inotify wd:%x", &wd) == 1 && !find(dirs, (int)wd)) {
			strays = xreallocarray(strays, stray_count + 1, sizeof(*strays));
			strays[stray_count++] = (int)wd;
		}
	fclose(info);
	for (size_t i = 0; i < stray_count; i++)
		inotify_rm_watch(dirs->fd, strays[i]);
	free(strays);
}

int watch_dirs_acquire(struct watch_dirs *dirs, const char *path)
{
	if (dirs->fd < 0) {
		dirs->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (dirs->fd < 0)
			return -errno;
	}
	int wd = inotify_add_watch(dirs->fd, path, WATCH_DIRS_MASK);
	if (wd < 0)
		return -errno;
	/* The same directory by another path, or for another target: the
	 * kernel gives the same wd. */
	struct watch_dir *dir = find(dirs, wd);
	if (!dir) {
		dirs->items = xreallocarray(dirs->items, dirs->count + 1, sizeof(*dirs->items));
		dir = &dirs->items[dirs->count++];
		*dir = (struct watch_dir){.wd = wd};
	}
	dir->gone = false;
	dir->users++;
	return wd;
}

void watch_dirs_release(struct watch_dirs *dirs, int wd)
{
	struct watch_dir *dir = wd >= 0 ? find(dirs, wd) : NULL;
	if (!dir || --dir->users > 0)
		return;
	if (!dir->gone)
		inotify_rm_watch(dirs->fd, wd);
	*dir = dirs->items[--dirs->count];
}

void watch_dirs_gone(struct watch_dirs *dirs, int wd)
{
	struct watch_dir *dir = find(dirs, wd);
	if (dir)
		dir->gone = true;
}

bool watch_dirs_close_if_unused(struct watch_dirs *dirs)
{
	if (dirs->count || dirs->fd < 0)
		return false;
	close(dirs->fd);
	dirs->fd = -1;
	dirs->adopted = false;
	free(dirs->items);
	dirs->items = NULL;
	return true;
}

void watch_dirs_describe_error(int error, char *buffer, size_t size)
{
	switch (error) {
	case -ENOSPC:
		snprintf(buffer, size,
			 "the inotify watch limit is reached (sysctl fs.inotify.max_user_watches, "
			 "and user.max_inotify_watches of a user namespace): raise it");
		return;
	case -EMFILE:
		snprintf(
		    buffer, size,
		    "no inotify instance left (sysctl fs.inotify.max_user_instances, and "
		    "user.max_inotify_instances of a user namespace), or corral is out of fds");
		return;
	default:
		snprintf(buffer, size, "%s", strerror(-error));
		return;
	}
}
