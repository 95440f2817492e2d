#include "supervisor/watch/watch_target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "config/text/watch_path.h"
#include "supervisor/watch/watch_chain.h"

void watch_target_init(struct watch_target *target, const char *path)
{
	*target = (struct watch_target){
	    .path = xstrdup(path),
	    .name_offset = watch_path_name_offset(path),
	    .dir_wd = -1,
	    .self_wd = -1,
	};
	const char *name = target->path + target->name_offset;
	target->pattern = watch_name_is_pattern(name, strlen(name));
}

static void release_hops(struct watch_target_hop *hops, size_t count, struct watch_dirs *dirs)
{
	for (size_t i = 0; i < count; i++) {
		watch_dirs_release(dirs, hops[i].wd);
		free(hops[i].name);
	}
	free(hops);
}

void watch_target_free(struct watch_target *target, struct watch_dirs *dirs)
{
	watch_dirs_release(dirs, target->dir_wd);
	watch_dirs_release(dirs, target->self_wd);
	release_hops(target->hops, target->hop_count, dirs);
	target->hops = NULL;
	target->hop_count = 0;
	free(target->path);
	target->path = NULL;
}

/* The path's own directory: its length in path (1 for "/"). */
static size_t own_directory_length(const struct watch_target *target)
{
	return target->name_offset > 1 ? target->name_offset - 1 : 1;
}

/* path[0..length) as a string ("/" for 1). */
static void directory_text(const struct watch_target *target, size_t length, char *buffer,
			   size_t size)
{
	snprintf(buffer, size, "%.*s", (int)length, target->path);
}

/* Whether an entry of `directory` matches the glob. */
static bool anything_matches(const char *directory, const char *pattern)
{
	DIR *listing = opendir(directory);
	if (!listing)
		return false;
	bool found = false;
	for (struct dirent *entry; !found && (entry = readdir(listing));)
		found = watch_name_matches(pattern, true, entry->d_name);
	closedir(listing);
	return found;
}

/* The nearest directory of the path that can be watched, from its own
 * up: its wd, and its length in *length. A directory that is a loop of
 * links (-ELOOP) is as missing: the watch above it, and those on the
 * links' directories (watch_hops), see the loop mended. */
static int watch_nearest(const struct watch_target *target, struct watch_dirs *dirs, size_t *length)
{
	char directory[PATH_MAX];
	*length = own_directory_length(target);
	for (;;) {
		directory_text(target, *length, directory, sizeof(directory));
		int wd = watch_dirs_acquire(dirs, directory);
		bool missing = wd == -ENOENT || wd == -ENOTDIR || wd == -ELOOP;
		if (wd >= 0 || !missing || *length == 1)
			return wd;
		const char *slash = memrchr(target->path, '/', *length);
		*length = slash && slash > target->path ? (size_t)(slash - target->path) : 1;
	}
}

/* The directories along the path's symlinks watched (none for a path
 * through no link): 0, or -errno with `error` and nothing kept. */
static int watch_hops(const struct watch_target *target, struct watch_dirs *dirs,
		      struct watch_target_hop **hops, size_t *count, bool *cut, char *error,
		      size_t error_size)
{
	*hops = NULL;
	*count = 0;
	struct watch_chain chain;
	watch_chain_walk(target->path, &chain);
	*cut = chain.cut;
	if (!chain.links) {
		watch_chain_free(&chain);
		return 0;
	}
	*hops = xcalloc(chain.count, sizeof(**hops));
	for (size_t i = 0; i < chain.count; i++) {
		const struct watch_hop *hop = &chain.hops[i];
		int wd = watch_dirs_acquire(dirs, hop->directory);
		/* -ENOENT, -ENOTDIR: gone since the walk; a watch further up
		 * the chain sees what replaced it. */
		if (wd < 0 && wd != -ENOENT && wd != -ENOTDIR) {
			char why[256];
			watch_dirs_describe_error(wd, why, sizeof(why));
			snprintf(error, error_size, "cannot watch %s (%s leads there): %s",
				 hop->directory, target->path, why);
			release_hops(*hops, *count, dirs);
			*hops = NULL;
			*count = 0;
			watch_chain_free(&chain);
			return wd;
		}
		(*hops)[(*count)++] = (struct watch_target_hop){
		    .wd = wd < 0 ? -1 : wd,
		    .name = xstrdup(hop->name),
		    .link = hop->link,
		};
	}
	watch_chain_free(&chain);
	return 0;
}

int watch_target_resolve(struct watch_target *target, struct watch_dirs *dirs, char *error,
			 size_t error_size)
{
	size_t length;
	int dir_wd = watch_nearest(target, dirs, &length);
	if (dir_wd < 0) {
		char why[256], directory[PATH_MAX];
		watch_dirs_describe_error(dir_wd, why, sizeof(why));
		directory_text(target, length, directory, sizeof(directory));
		snprintf(error, error_size, "cannot watch %s: %s", directory, why);
		return dir_wd;
	}
	/* The links' watches before the look at what the path leads to: a
	 * part made between that look and the watch on its directory would
	 * be seen by neither (a dangling link's target made just after its
	 * directory). */
	struct watch_target_hop *hops = NULL;
	size_t hop_count = 0;
	bool cut = false;
	if (!target->pattern) {
		int result = watch_hops(target, dirs, &hops, &hop_count, &cut, error, error_size);
		if (result < 0) {
			watch_dirs_release(dirs, dir_wd);
			return result;
		}
	}
	bool at_directory = length == own_directory_length(target);
	int self_wd = -1;
	bool exists = false;
	struct stat status = {0};
	if (at_directory && target->pattern) {
		char directory[PATH_MAX];
		directory_text(target, length, directory, sizeof(directory));
		exists = anything_matches(directory, target->path + target->name_offset);
	} else if (at_directory && stat(target->path, &status) == 0) {
		exists = true;
		int result = S_ISDIR(status.st_mode) ? watch_dirs_acquire(dirs, target->path) : -1;
		/* -ENOENT, -ENOTDIR: gone since the stat, which its directory's
		 * watch sees. */
		if (result >= 0) {
			self_wd = result;
		} else if (S_ISDIR(status.st_mode) && result != -ENOENT && result != -ENOTDIR) {
			char why[256];
			watch_dirs_describe_error(result, why, sizeof(why));
			snprintf(error, error_size, "cannot watch %s: %s", target->path, why);
			release_hops(hops, hop_count, dirs);
			watch_dirs_release(dirs, dir_wd);
			return result;
		}
	}
	/* The new watches first: a directory watched before and after keeps
	 * its inotify watch. */
	watch_dirs_release(dirs, target->dir_wd);
	watch_dirs_release(dirs, target->self_wd);
	release_hops(target->hops, target->hop_count, dirs);
	target->hops = hops;
	target->hop_count = hop_count;
	target->chain_cut = cut;
	bool changed = target->resolved &&
		       (exists != target->exists ||
			(exists && !target->pattern &&
			 (status.st_dev != target->device || status.st_ino != target->inode)));
	target->dir_wd = dir_wd;
	target->dir_length = length;
	target->at_directory = at_directory;
	target->self_wd = self_wd;
	target->resolved = true;
	target->exists = exists;
	target->device = status.st_dev;
	target->inode = status.st_ino;
	return changed ? 1 : 0;
}

/* The part of the path after the watched ancestor: what must appear next. */
static bool is_next_part(const struct watch_target *target, const char *name)
{
	const char *next = target->path + target->dir_length + (target->dir_length > 1);
	size_t length = strcspn(next, "/");
	return strlen(name) == length && strncmp(next, name, length) == 0;
}

static bool is_symlink(const char *directory, const char *name)
{
	char path[PATH_MAX];
	struct stat status;
	int length = snprintf(path, sizeof(path), "%s/%s",
			      strcmp(directory, "/") == 0 ? "" : directory, name);
	return length > 0 && (size_t)length < sizeof(path) && lstat(path, &status) == 0 &&
	       S_ISLNK(status.st_mode);
}

/* A glob's matches that are symlinks through `name` (Kubernetes' files
 * through `..data`): the first into `changed`. */
static bool matches_through(const struct watch_target *target, const char *directory,
			    const char *name, char *changed, size_t size)
{
	int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *listing = fd >= 0 ? fdopendir(fd) : NULL;
	if (!listing) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	size_t name_length = strlen(name);
	bool found = false;
	for (struct dirent *entry; !found && (entry = readdir(listing));) {
		char link[PATH_MAX];
		if (!watch_name_matches(target->path + target->name_offset, true, entry->d_name))
			continue;
		ssize_t length = readlinkat(dirfd(listing), entry->d_name, link, sizeof(link) - 1);
		if (length < (ssize_t)name_length)
			continue;
		link[length] = '\0';
		if (strncmp(link, name, name_length) == 0 &&
		    (link[name_length] == '/' || link[name_length] == '\0')) {
			snprintf(changed, size, "%s/%s",
				 strcmp(directory, "/") == 0 ? "" : directory, entry->d_name);
			found = true;
		}
	}
	closedir(listing);
	return found;
}

#define SELF_GONE (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)
#define REPLACED  (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)

/* An event in a directory along the path's symlinks. */
static unsigned hop_event(const struct watch_target *target, int wd, uint32_t mask,
			  const char *name, char *changed, size_t changed_size)
{
	unsigned verdict = 0;
	for (size_t i = 0; wd >= 0 && i < target->hop_count; i++) {
		const struct watch_target_hop *hop = &target->hops[i];
		if (hop->wd != wd)
			continue;
		if (!name) {
			/* A directory on the way removed or moved: the links
			 * may lead elsewhere now. */
			if (mask & SELF_GONE)
				verdict |= WATCH_RESOLVE;
			continue;
		}
		if (strcmp(name, hop->name) != 0)
			continue;
		if (hop->link) {
			/* Re-pointed (a link is never edited in place: made
			 * anew, or renamed over), or removed. */
			if (mask & REPLACED)
				verdict |= WATCH_RESOLVE;
		} else if (target->exists) {
			/* The file the path leads to, written or replaced. */
			snprintf(changed, changed_size, "%s", target->path);
			verdict |= WATCH_CHANGED | (mask & REPLACED ? WATCH_RESOLVE : 0);
		} else if (mask & (IN_CREATE | IN_MOVED_TO)) {
			verdict |= WATCH_RESOLVE; /* a missing part appeared */
		}
	}
	return verdict;
}

/* An event in the path's own directory (or its nearest ancestor), or of
 * the directory it names. */
static unsigned own_event(const struct watch_target *target, int wd, uint32_t mask,
			  const char *name, char *changed, size_t changed_size)
{
	const uint32_t self_gone = SELF_GONE;
	if (wd == target->self_wd && wd >= 0) {
		/* Its removal is seen by name in its directory too. */
		if (mask & self_gone)
			return WATCH_RESOLVE;
		snprintf(changed, changed_size, "%s%s%s", target->path, name ? "/" : "",
			 name ? name : "");
		return WATCH_CHANGED;
	}
	if (wd != target->dir_wd || wd < 0)
		return 0;
	if (mask & self_gone)
		return WATCH_RESOLVE;
	if (!name)
		return 0;
	if (!target->at_directory)
		return is_next_part(target, name) && (mask & (IN_CREATE | IN_MOVED_TO))
			   ? WATCH_RESOLVE
			   : 0;
	char directory[PATH_MAX];
	directory_text(target, target->dir_length, directory, sizeof(directory));
	if (watch_name_matches(target->path + target->name_offset, target->pattern, name)) {
		snprintf(changed, changed_size, "%s/%s",
			 strcmp(directory, "/") == 0 ? "" : directory, name);
		/* Made, removed or replaced: a directory watch to add or drop,
		 * and what it is now. */
		bool replaced = mask & REPLACED;
		return WATCH_CHANGED | (!target->pattern && replaced ? WATCH_RESOLVE : 0);
	}
	/* A symlink made or renamed here: the path may lead elsewhere now. */
	if (!(mask & (IN_CREATE | IN_MOVED_TO)) || !is_symlink(directory, name))
		return 0;
	if (!target->pattern)
		return WATCH_RESOLVE;
	return matches_through(target, directory, name, changed, changed_size) ? WATCH_CHANGED : 0;
}

unsigned watch_target_event(const struct watch_target *target, int wd, uint32_t mask,
			    const char *name, char *changed, size_t changed_size)
{
	return hop_event(target, wd, mask, name, changed, changed_size) |
	       own_event(target, wd, mask, name, changed, changed_size);
}
