#include "isolation/host_shared_mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "base/xmalloc.h"
#include "isolation/mountinfo.h"

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

static bool is_existing(const struct host_shared_mount *source, uint64_t id)
{
	for (size_t i = 0; i < source->existing_count; i++)
		if (source->existing[i] == id)
			return true;
	return false;
}

/* The mounts at or below the source now: what corral leaves alone. */
static int note_existing(struct host_shared_mount *source)
{
	struct mountinfo info;
	int failure = mountinfo_read(&info);
	if (failure < 0)
		return failure;
	source->existing = xcalloc(info.count ? info.count : 1, sizeof(*source->existing));
	for (size_t i = 0; i < info.count; i++)
		if (mountinfo_path_is_below(info.entries[i].mount_point, source->path))
			source->existing[source->existing_count++] = info.entries[i].id;
	mountinfo_free(&info);
	return 0;
}

/* Is the mount holding `path` shared? 0 or -errno. */
static int holder_is_shared(const char *path, bool *shared)
{
	uint64_t id;
	int failure = mount_id_of(path, &id);
	if (failure < 0)
		return failure;
	struct mountinfo info;
	if ((failure = mountinfo_read(&info)) < 0)
		return failure;
	const struct mountinfo_entry *entry = mountinfo_find(&info, id);
	*shared = entry && entry->shared;
	failure = entry ? 0 : -ENOENT;
	mountinfo_free(&info);
	return failure;
}

/* Recursive, so that what is mounted below stays visible through it; all
 * of it shared, so that a task may also mount below those. */
static int bind_shared(struct host_shared_mount *source, char *error, size_t error_size)
{
	if (mount(source->path, source->path, NULL, MS_BIND | MS_REC, NULL) < 0) {
		int failure = -errno;
		snprintf(error, error_size,
			 "bidirectional mount: bind %s onto itself (to make it shared): %s",
			 source->path, strerror(-failure));
		return failure;
	}
	int result = 0;
	if (mount(NULL, source->path, NULL, MS_SHARED | MS_REC, NULL) < 0) {
		result = -errno;
		snprintf(error, error_size, "bidirectional mount: make the bind of %s shared: %s",
			 source->path, strerror(-result));
	} else if ((result = mount_id_of(source->path, &source->self_bind_id)) < 0) {
		snprintf(error, error_size, "bidirectional mount: statx %s: %s", source->path,
			 strerror(-result));
	}
	if (result < 0) {
		umount2(source->path, MNT_DETACH | UMOUNT_NOFOLLOW);
		source->self_bind_id = 0;
	}
	return result < 0 ? result : 0;
}

static struct host_shared_mount *find(struct host_shared_mounts *mounts, const char *canonical,
				      const char *requested)
{
	for (size_t i = 0; i < mounts->count; i++)
		if ((canonical && strcmp(mounts->items[i].path, canonical) == 0) ||
		    (!canonical && strcmp(mounts->items[i].requested, requested) == 0))
			return &mounts->items[i];
	return NULL;
}

int host_shared_mounts_take(struct host_shared_mounts *mounts, const char *path, char *error,
			    size_t error_size)
{
	char canonical[PATH_MAX];
	if (!realpath(path, canonical)) {
		int failure = -errno;
		snprintf(error, error_size, "bidirectional mount: %s: %s", path,
			 strerror(-failure));
		return failure;
	}
	struct host_shared_mount *taken = find(mounts, canonical, path);
	if (taken) {
		taken->takers++;
		return 0;
	}
	struct host_shared_mount made = {.takers = 1, .path = xstrdup(canonical)};
	bool shared = false;
	int result = holder_is_shared(made.path, &shared);
	if (result < 0) {
		snprintf(error, error_size, "bidirectional mount: find the mount of %s: %s",
			 made.path, strerror(-result));
	} else if (!shared) {
		result = bind_shared(&made, error, error_size);
	}
	if (result == 0 && (result = note_existing(&made)) < 0) {
		snprintf(error, error_size, "bidirectional mount: read /proc/self/mountinfo: %s",
			 strerror(-result));
		if (made.self_bind_id)
			umount2(made.path, MNT_DETACH | UMOUNT_NOFOLLOW);
	}
	if (result < 0) {
		free(made.path);
		return result;
	}
	made.requested = xstrdup(path);
	mounts->items = xreallocarray(mounts->items, mounts->count + 1, sizeof(*mounts->items));
	mounts->items[mounts->count++] = made;
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

/* One pass: each mount that appeared at or below the source is detached,
 * deepest first, when its path leads to that very mount (statx), never
 * whatever else is there. Returns how many are left (-errno when mountinfo
 * cannot be read); *unmounted counts this pass' successes, `stuck` names
 * one that stays. */
static long sweep_pass(const struct host_shared_mount *source, size_t *unmounted, char *stuck,
		       size_t stuck_size)
{
	struct mountinfo info;
	int failure = mountinfo_read(&info);
	if (failure < 0)
		return failure;
	const struct mountinfo_entry **found = xcalloc(info.count ? info.count : 1, sizeof(*found));
	size_t count = 0;
	for (size_t i = 0; i < info.count; i++) {
		const struct mountinfo_entry *entry = &info.entries[i];
		if (entry->id != source->self_bind_id && !is_existing(source, entry->id) &&
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
	}
	free(found);
	mountinfo_free(&info);
	return (long)(count - *unmounted);
}

static void release(struct host_shared_mount *source, void (*log)(const char *format, ...))
{
	char stuck[PATH_MAX] = "?";
	/* Detaching a mount takes what is below it; a few passes find what a
	 * detached tree did not take (a mount covered by another). */
	for (int pass = 0; pass < 8; pass++) {
		size_t unmounted = 0;
		long left = sweep_pass(source, &unmounted, stuck, sizeof(stuck));
		if (left < 0) {
			log("bidirectional mount %s: read /proc/self/mountinfo: %s", source->path,
			    strerror((int)-left));
			break;
		}
		if (left == 0)
			break;
		if (unmounted == 0) {
			log("bidirectional mount %s: cannot unmount %s: it stays mounted",
			    source->path, stuck);
			break;
		}
	}
	if (source->self_bind_id) {
		uint64_t id = 0;
		int failure = mount_id_of(source->path, &id);
		if (failure == 0 && id != source->self_bind_id)
			failure = -EBUSY; /* covered by a mount that stayed */
		else if (failure == 0 && umount2(source->path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
			failure = -errno;
		if (failure < 0)
			log("bidirectional mount %s: cannot unmount corral's bind: %s",
			    source->path, strerror(-failure));
	}
	free(source->existing);
	free(source->path);
	free(source->requested);
}

void host_shared_mounts_give_back(struct host_shared_mounts *mounts, const char *path,
				  void (*log)(const char *format, ...))
{
	char canonical[PATH_MAX];
	/* The source may be gone by now: then it is found as written. */
	struct host_shared_mount *source =
	    find(mounts, realpath(path, canonical) ? canonical : NULL, path);
	if (!source || --source->takers > 0)
		return;
	release(source, log);
	*source = mounts->items[--mounts->count];
	if (!mounts->count) {
		free(mounts->items);
		mounts->items = NULL;
	}
}

void host_shared_mounts_close(struct host_shared_mounts *mounts,
			      void (*log)(const char *format, ...))
{
	for (size_t i = 0; i < mounts->count; i++)
		release(&mounts->items[i], log);
	free(mounts->items);
	*mounts = (struct host_shared_mounts){0};
}
