#include "supervisor/upgrade/upgrade_binary.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"

int upgrade_binary_judge(const char *name, bool directory, mode_t mode, uid_t owner, uid_t corral,
			 char *error, size_t error_size)
{
	unsigned permissions = (unsigned)(mode & 07777);
	const char *what = directory ? "its directory " : "";
	if (directory ? !S_ISDIR(mode) : !S_ISREG(mode)) {
		snprintf(error, error_size, "%s is not a %s", name,
			 directory ? "directory" : "regular file");
		return -EPERM;
	}
	if (owner != 0 && owner != corral) {
		snprintf(error, error_size,
			 "%s%s belongs to uid %u (mode %04o), not to root or to corral's user "
			 "(uid %u): its owner could change what corral would run",
			 what, name, (unsigned)owner, permissions, (unsigned)corral);
		return -EPERM;
	}
	if ((mode & (S_IWGRP | S_IWOTH)) && !(directory && (mode & S_ISVTX))) {
		snprintf(error, error_size,
			 "%s%s may be written by others (owner uid %u, mode %04o): they could "
			 "replace what corral would run; make it writable by its owner only",
			 what, name, (unsigned)owner, permissions);
		return -EPERM;
	}
	return 0;
}

/* Every directory above `path` (absolute), from its parent up to "/". */
static int judge_directories(const char *path, uid_t corral, char *error, size_t error_size)
{
	char directory[PATH_MAX];
	snprintf(directory, sizeof(directory), "%s", path);
	for (;;) {
		char *slash = strrchr(directory, '/');
		if (!slash)
			return 0;
		if (slash == directory)
			slash[1] = '\0';
		else
			*slash = '\0';
		struct stat status;
		if (stat(directory, &status) < 0) {
			int failure = -errno;
			snprintf(error, error_size, "%s: %s", directory, strerror(errno));
			return failure;
		}
		int refused = upgrade_binary_judge(directory, true, status.st_mode, status.st_uid,
						   corral, error, error_size);
		if (refused < 0 || strcmp(directory, "/") == 0)
			return refused;
	}
}

/* "" becomes the path of corral's own binary as it is on disk now: the
 * file at that path, not the one running (which may have been replaced). */
static int resolve(const char *binary, char *path, size_t size, char *error, size_t error_size)
{
	if (binary && *binary) {
		snprintf(path, size, "%s", binary);
		return 0;
	}
	ssize_t length = readlink("/proc/self/exe", path, size - 1);
	if (length < 0) {
		int failure = -errno;
		snprintf(error, error_size, "cannot find corral's own binary: /proc/self/exe: %s",
			 strerror(errno));
		return failure;
	}
	path[length] = '\0';
	static const char deleted[] = " (deleted)";
	size_t cut = strlen(path);
	if (cut > sizeof(deleted) - 1 && strcmp(path + cut - sizeof(deleted) + 1, deleted) == 0)
		path[cut - sizeof(deleted) + 1] = '\0';
	return 0;
}

int upgrade_binary_open(const char *binary, char *path, size_t path_size, char *error,
			size_t error_size)
{
	int failure = resolve(binary, path, path_size, error, error_size);
	if (failure < 0)
		return failure;
	if (path[0] != '/') {
		snprintf(error, error_size, "%s: the binary's path must be absolute", path);
		return -EINVAL;
	}
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		failure = -errno;
		snprintf(error, error_size, "%s cannot be run: %s", path, strerror(errno));
		return failure;
	}
	uid_t corral = geteuid();
	struct stat status;
	char link[64], real[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t length = readlink(link, real, sizeof(real) - 1);
	if (fstat(fd, &status) < 0 || length <= 0) {
		failure = -errno;
		snprintf(error, error_size, "%s: %s", path, strerror(errno));
		return failure;
	}
	real[length] = '\0';
	/* The file itself, where it really is, then the way the name given
	 * leads to it (a later `corral upgrade` of that name goes there). */
	if ((failure = upgrade_binary_judge(path, false, status.st_mode, status.st_uid, corral,
					    error, error_size)) < 0 ||
	    (failure = judge_directories(real, corral, error, error_size)) < 0 ||
	    (strcmp(real, path) != 0 &&
	     (failure = judge_directories(path, corral, error, error_size)) < 0))
		return failure;
	return TAKE_FD(fd);
}
