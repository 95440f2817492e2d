#include "isolation/host_shared_mounts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "config/xmalloc.h"

/* One line of /proc/self/mountinfo: its mount point and whether it is in a
 * shared peer group (optional field "shared:N"). Octal escapes (\040 for a
 * space) are undone. */
struct mount_line {
	char point[4096];
	bool shared;
};

static void unescape(char *text)
{
	char *out = text;
	for (const char *in = text; *in; in++, out++) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] && in[3]) {
			*out = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
			in += 3;
		} else {
			*out = *in;
		}
	}
	*out = '\0';
}

static bool parse_line(char *line, struct mount_line *out)
{
	char *save = NULL, *field = strtok_r(line, " ", &save);
	for (int i = 0; field && i < 4; i++)
		field = strtok_r(NULL, " ", &save); /* id, parent, dev, root: skipped */
	if (!field || strlen(field) >= sizeof(out->point))
		return false;
	snprintf(out->point, sizeof(out->point), "%s", field);
	unescape(out->point);
	out->shared = false;
	strtok_r(NULL, " ", &save); /* options */
	while ((field = strtok_r(NULL, " ", &save)) && strcmp(field, "-") != 0)
		if (strncmp(field, "shared:", 7) == 0)
			out->shared = true;
	return true;
}

/* The last mount at `path` (the one on top): 1 shared, 0 not shared,
 * -1 not a mount point. */
static int mount_point_state(const char *path)
{
	FILE *file = fopen("/proc/self/mountinfo", "re");
	if (!file)
		return -1;
	char line[8192];
	struct mount_line mount;
	int state = -1;
	while (fgets(line, sizeof(line), file))
		if (parse_line(line, &mount) && strcmp(mount.point, path) == 0)
			state = mount.shared;
	fclose(file);
	return state;
}

static bool below(const char *point, const char *path)
{
	size_t length = strlen(path);
	return strncmp(point, path, length) == 0 && point[length] == '/';
}

static int by_depth_descending(const void *a, const void *b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);
	return x < y ? 1 : x > y ? -1 : 0;
}

/* The mount points below `path`, deepest first. */
static char **mount_points_below(const char *path, size_t *count)
{
	char **points = NULL;
	*count = 0;
	FILE *file = fopen("/proc/self/mountinfo", "re");
	if (!file)
		return NULL;
	char line[8192];
	struct mount_line mount;
	while (fgets(line, sizeof(line), file))
		if (parse_line(line, &mount) && below(mount.point, path)) {
			points = xreallocarray(points, *count + 1, sizeof(*points));
			points[(*count)++] = xstrdup(mount.point);
		}
	fclose(file);
	if (*count)
		qsort(points, *count, sizeof(*points), by_depth_descending);
	return points;
}

static void free_points(char **points, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(points[i]);
	free(points);
}

static bool listed(char *const *points, size_t count, const char *point)
{
	for (size_t i = 0; i < count; i++)
		if (strcmp(points[i], point) == 0)
			return true;
	return false;
}

/* What was mounted below the source since its first take, deepest first. */
static void unmount_new_below(const struct host_shared_mount *source,
			      void (*log)(const char *format, ...))
{
	size_t count;
	char **points = mount_points_below(source->path, &count);
	for (size_t i = 0; i < count; i++) {
		if (listed(source->existing, source->existing_count, points[i]))
			continue;
		/* A mount below one already detached went with it: EINVAL. */
		if (umount2(points[i], MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
			log("bidirectional mount %s: cannot unmount %s: %s", source->path,
			    points[i], strerror(errno));
	}
	free_points(points, count);
}

static struct host_shared_mount *find(struct host_shared_mounts *mounts, const char *path)
{
	for (size_t i = 0; i < mounts->count; i++)
		if (strcmp(mounts->items[i].path, path) == 0)
			return &mounts->items[i];
	return NULL;
}

int host_shared_mounts_take(struct host_shared_mounts *mounts, const char *path, char *error,
			    size_t error_size)
{
	struct host_shared_mount *taken = find(mounts, path);
	if (taken) {
		taken->takers++;
		return 0;
	}
	struct host_shared_mount made = {.takers = 1};
	int state = mount_point_state(path);
	if (state < 0) {
		if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0) {
			snprintf(error, error_size,
				 "bidirectional mount: bind %s onto itself (to make it shared): %s",
				 path, strerror(errno));
			return -1;
		}
		made.bound_by_us = true;
	}
	if (state != 1) {
		if (mount(NULL, path, NULL, MS_SHARED, NULL) < 0) {
			snprintf(error, error_size, "bidirectional mount: make %s shared: %s", path,
				 strerror(errno));
			if (made.bound_by_us)
				umount2(path, MNT_DETACH);
			return -1;
		}
		made.shared_by_us = !made.bound_by_us;
	}
	if (!made.bound_by_us)
		made.existing = mount_points_below(path, &made.existing_count);
	made.path = xstrdup(path);
	mounts->items = xreallocarray(mounts->items, mounts->count + 1, sizeof(*mounts->items));
	mounts->items[mounts->count++] = made;
	return 0;
}

static void release(struct host_shared_mount *source, void (*log)(const char *format, ...))
{
	/* corral's own bind takes what the tasks mounted on it along. */
	if (source->bound_by_us && umount2(source->path, MNT_DETACH) < 0)
		log("bidirectional mount %s: cannot unmount corral's bind: %s", source->path,
		    strerror(errno));
	if (!source->bound_by_us)
		unmount_new_below(source, log);
	if (source->shared_by_us)
		mount(NULL, source->path, NULL, MS_PRIVATE, NULL);
	free_points(source->existing, source->existing_count);
	free(source->path);
}

void host_shared_mounts_give_back(struct host_shared_mounts *mounts, const char *path,
				  void (*log)(const char *format, ...))
{
	struct host_shared_mount *source = find(mounts, path);
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
