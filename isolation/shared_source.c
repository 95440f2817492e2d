#include "isolation/shared_source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "config/xmalloc.h"
#include "isolation/mountinfo.h"

struct shared_source {
	char *path;            /* canonical */
	unsigned users;        /* runs holding it */
	uint64_t self_bind_id; /* corral's bind of the source onto itself; 0: none */
	uint64_t *before;      /* mounts at or below the source at the first use */
	size_t before_count;
};

static struct shared_source *sources;
static size_t source_count;

static struct shared_source *find_source(const char *path)
{
	for (size_t i = 0; i < source_count; i++)
		if (strcmp(sources[i].path, path) == 0)
			return &sources[i];
	return NULL;
}

/* The mount `path` is on (the topmost at a mount point). */
static int mount_id_of(const char *path, uint64_t *id)
{
	struct statx status;
	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &status) < 0)
		return -errno;
	if (!(status.stx_mask & STATX_MNT_ID))
		return -ENOSYS;
	*id = status.stx_mnt_id;
	return 0;
}

static bool is_before(const struct shared_source *source, uint64_t id)
{
	for (size_t i = 0; i < source->before_count; i++)
		if (source->before[i] == id)
			return true;
	return false;
}

/* The mounts at or below the source now: what corral leaves alone. */
static int take_snapshot(struct shared_source *source)
{
	struct mountinfo info;
	int error = mountinfo_read(&info);
	if (error < 0)
		return error;
	source->before = xcalloc(info.count ? info.count : 1, sizeof(*source->before));
	for (size_t i = 0; i < info.count; i++)
		if (mountinfo_path_is_below(info.entries[i].mount_point, source->path))
			source->before[source->before_count++] = info.entries[i].id;
	mountinfo_free(&info);
	return 0;
}

/* Is the mount holding `path` shared? */
static int holder_is_shared(const char *path, bool *shared)
{
	uint64_t id;
	int error = mount_id_of(path, &id);
	if (error < 0)
		return error;
	struct mountinfo info;
	if ((error = mountinfo_read(&info)) < 0)
		return error;
	const struct mountinfo_entry *entry = mountinfo_find(&info, id);
	*shared = entry && entry->shared;
	error = entry ? 0 : -ENOENT;
	mountinfo_free(&info);
	return error;
}

/* Recursive, so that what is mounted below stays visible through it; all
 * of it shared, so that the task may also mount below those. */
static int make_self_bind(struct shared_source *source, char *error, size_t error_size)
{
	if (mount(source->path, source->path, NULL, MS_BIND | MS_REC, NULL) < 0) {
		snprintf(error, error_size, "bind %s onto itself: %s", source->path,
			 strerror(errno));
		return -errno;
	}
	int result = 0;
	if (mount(NULL, source->path, NULL, MS_SHARED | MS_REC, NULL) < 0) {
		result = -errno;
		snprintf(error, error_size, "make the bind of %s shared: %s", source->path,
			 strerror(errno));
	} else if ((result = mount_id_of(source->path, &source->self_bind_id)) < 0) {
		snprintf(error, error_size, "statx %s: %s", source->path, strerror(-result));
	}
	if (result < 0) {
		umount2(source->path, MNT_DETACH | UMOUNT_NOFOLLOW);
		source->self_bind_id = 0;
	}
	return result;
}

int shared_source_acquire(const char *path, char *canonical, char *error, size_t error_size)
{
	if (!realpath(path, canonical)) {
		int result = -errno;
		snprintf(error, error_size, "%s: %s", path, strerror(errno));
		return result;
	}
	struct shared_source *existing = find_source(canonical);
	if (existing) {
		existing->users++;
		return 0;
	}
	struct shared_source source = {.path = xstrdup(canonical), .users = 1};
	bool shared = false;
	int result = holder_is_shared(source.path, &shared);
	if (result < 0)
		snprintf(error, error_size, "find the mount of %s: %s", source.path,
			 strerror(-result));
	else if (!shared)
		result = make_self_bind(&source, error, error_size);
	if (result == 0 && (result = take_snapshot(&source)) < 0) {
		snprintf(error, error_size, "read /proc/self/mountinfo: %s", strerror(-result));
		if (source.self_bind_id)
			umount2(source.path, MNT_DETACH | UMOUNT_NOFOLLOW);
	}
	if (result < 0) {
		free(source.path);
		return result;
	}
	sources = xreallocarray(sources, source_count + 1, sizeof(*sources));
	sources[source_count++] = source;
	return 0;
}

static size_t depth_of(const char *path)
{
	size_t depth = 0;
	for (; *path; path++)
		depth += *path == '/';
	return depth;
}

static int deeper_first(const void *a, const void *b)
{
	size_t depth_a = depth_of((*(const struct mountinfo_entry *const *)a)->mount_point);
	size_t depth_b = depth_of((*(const struct mountinfo_entry *const *)b)->mount_point);
	return depth_a < depth_b ? 1 : depth_a > depth_b ? -1 : 0;
}

/* One pass: each mount that appeared at or below the source and is on top
 * at its mount point now is detached, deepest first. A mount is unmounted
 * only when the path leads to it (statx), never whatever is there. Returns
 * how many are left (-errno when mountinfo cannot be read); *unmounted
 * counts this pass' successes. */
static long sweep_pass(const struct shared_source *source, size_t *unmounted, const char **stuck_at,
		       char *stuck, size_t stuck_size)
{
	struct mountinfo info;
	int error = mountinfo_read(&info);
	if (error < 0)
		return error;
	const struct mountinfo_entry **found = xcalloc(info.count ? info.count : 1, sizeof(*found));
	size_t count = 0;
	for (size_t i = 0; i < info.count; i++) {
		const struct mountinfo_entry *entry = &info.entries[i];
		if (entry->id != source->self_bind_id && !is_before(source, entry->id) &&
		    mountinfo_path_is_below(entry->mount_point, source->path))
			found[count++] = entry;
	}
	qsort(found, count, sizeof(*found), deeper_first);
	*unmounted = 0;
	for (size_t i = 0; i < count; i++) {
		uint64_t id;
		if (mount_id_of(found[i]->mount_point, &id) == 0 && id == found[i]->id &&
		    umount2(found[i]->mount_point, MNT_DETACH | UMOUNT_NOFOLLOW) == 0) {
			(*unmounted)++;
			continue;
		}
		snprintf(stuck, stuck_size, "%s", found[i]->mount_point);
		*stuck_at = stuck;
	}
	free(found);
	mountinfo_free(&info);
	return (long)(count - *unmounted);
}

int shared_source_release(const char *canonical, char *error, size_t error_size)
{
	struct shared_source *source = find_source(canonical);
	if (!source || --source->users > 0)
		return 0;
	int result = 0;
	char stuck[PATH_MAX] = "";
	const char *stuck_at = NULL;
	/* Detaching a mount takes what is below it: a few passes find what
	 * a detached tree did not take (a mount covered by another). */
	for (int pass = 0; pass < 8; pass++) {
		size_t unmounted = 0;
		long left = sweep_pass(source, &unmounted, &stuck_at, stuck, sizeof(stuck));
		if (left < 0) {
			snprintf(error, error_size, "read /proc/self/mountinfo: %s",
				 strerror((int)-left));
			result = -1;
			break;
		}
		if (left == 0)
			break;
		if (unmounted == 0) {
			snprintf(error, error_size, "unmount %s (below %s): it stays mounted",
				 stuck_at ? stuck_at : "?", source->path);
			result = -1;
			break;
		}
	}
	uint64_t id = 0;
	if (source->self_bind_id) {
		int failure = mount_id_of(source->path, &id);
		if (failure == 0 && id != source->self_bind_id)
			failure = -EBUSY; /* covered by a mount corral left */
		else if (failure == 0 && umount2(source->path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
			failure = -errno;
		if (failure < 0 && result == 0)
			snprintf(error, error_size, "unmount corral's bind of %s onto itself: %s",
				 source->path, strerror(-failure));
		if (failure < 0)
			result = -1;
	}
	free(source->path);
	free(source->before);
	*source = sources[--source_count];
	return result;
}
