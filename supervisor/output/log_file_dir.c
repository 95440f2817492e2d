#include "supervisor/output/log_file_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/dir_trust.h"
#include "base/file_kind.h"

#define FILE_FLAGS (O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
#define DIR_FLAGS  (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

static void fail(struct log_dir_failure *failure, bool refused, int error, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static void fail(struct log_dir_failure *failure, bool refused, int error, const char *format, ...)
{
	failure->refused = refused;
	failure->error = error;
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(failure->why, sizeof(failure->why), format, arguments);
	va_end(arguments);
}

/* `name` is one component (a group or file name, never with a '/'), so
 * O_NOFOLLOW alone would do; openat2 says the same to the kernel in
 * words that also hold if a name ever grows a '/'. Kernels before 5.6
 * (and seccomp profiles that refuse openat2) get openat. */
static int open_beneath(int dir_fd, const char *name, int flags, mode_t mode)
{
	struct open_how how = {
	    .flags = (uint64_t)flags,
	    .mode = (flags & O_CREAT) ? mode : 0,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, dir_fd, name, &how, sizeof(how));
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return fd;
	return openat(dir_fd, name, flags, mode);
}

/* A directory a task's user could write is where it plants links. */
/* `sticky_is_enough`: for DIR only. In a sticky directory owned by root or
 * corral (/tmp), others may add names but not replace corral's: the GROUP
 * directory below it is corral's own (checked in turn, and opened without
 * following a link), so what others plant beside it is never used. */
static bool trusted(int fd, const char *path, bool shared_dir, bool sticky_is_enough,
		    struct log_dir_failure *failure)
{
	struct stat status;
	if (fstat(fd, &status) < 0) {
		fail(failure, false, errno, "%s: %s", path, strerror(errno));
		return false;
	}
	if (shared_dir)
		return true;
	switch (dir_trust_of(&status, sticky_is_enough)) {
	case DIR_TRUSTED:
		return true;
	case DIR_FOREIGN_OWNER:
		fail(failure, true, EPERM,
		     "%s is owned by uid %u, not by corral (uid %u) or root: its owner could put a "
		     "link in place of the file (set log.shared_dir: true if that is meant)",
		     path, (unsigned)status.st_uid, (unsigned)geteuid());
		return false;
	case DIR_WRITABLE_BY_OTHERS:
		fail(failure, true, EPERM,
		     "%s is writable by group or others (mode %04o): they could put a link in "
		     "place of the file (make it writable by its owner only, or set "
		     "log.shared_dir: true if that is meant)",
		     path, (unsigned)(status.st_mode & 07777));
		return false;
	}
	return false;
}

int log_dir_open(const char *dir, const char *group, bool shared_dir,
		 struct log_dir_failure *failure)
{
	/* DIR is the operator's path, followed as written (it may well be a
	 * link to a larger disk); from there on nothing is. A DIR that cannot
	 * be made says why better than the ENOENT of the open that follows. */
	int made = mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : errno;
	int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0) {
		int code = made && errno == ENOENT ? made : errno;
		fail(failure, false, code, "%s: %s", dir, strerror(code));
		return -failure->error;
	}
	if (!trusted(dir_fd, dir, shared_dir, true, failure)) {
		close(dir_fd);
		return -failure->error;
	}
	made = mkdirat(dir_fd, group, 0755) == 0 || errno == EEXIST ? 0 : errno;
	int group_fd = open_beneath(dir_fd, group, DIR_FLAGS, 0);
	/* ENOENT after a mkdirat that failed: the mkdirat's reason. */
	int code = made && errno == ENOENT ? made : errno;
	close(dir_fd);
	if (group_fd < 0) {
		if (code == ELOOP || code == ENOTDIR)
			fail(failure, true, code, "%s/%s is %s", dir, group,
			     code == ELOOP ? "a symbolic link" : "not a directory");
		else
			fail(failure, false, code, "%s/%s: %s", dir, group, strerror(code));
		return -failure->error;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, group);
	if (!trusted(group_fd, path, shared_dir, false, failure)) {
		close(group_fd);
		return -failure->error;
	}
	return group_fd;
}

int log_dir_open_file(int dir_fd, const char *name, bool exclusive, uint64_t *size,
		      struct log_dir_failure *failure)
{
	int fd = open_beneath(dir_fd, name, FILE_FLAGS | (exclusive ? O_EXCL : 0), 0644);
	if (fd < 0) {
		int code = errno;
		if (code == ELOOP)
			fail(failure, true, code, "it is a symbolic link");
		else if (code == EEXIST)
			fail(failure, true, code,
			     "something was put at its name while it was rotated");
		else if (code == EISDIR)
			fail(failure, true, code, "it is a directory");
		else if (code == ENXIO)
			fail(failure, true, code, "it is a FIFO or socket");
		else
			fail(failure, false, code, "%s", strerror(code));
		return -failure->error;
	}
	struct stat status;
	if (fstat(fd, &status) < 0) {
		fail(failure, false, errno, "%s", strerror(errno));
	} else if (!S_ISREG(status.st_mode)) {
		fail(failure, true, EINVAL, "it is %s", file_kind(status.st_mode));
	} else if (status.st_nlink > 1) {
		/* Another name for a file elsewhere (/etc/shadow, say). */
		fail(failure, true, EMLINK, "it has %lu hard links",
		     (unsigned long)status.st_nlink);
	} else {
		*size = (uint64_t)status.st_size;
		return fd;
	}
	close(fd);
	return -failure->error;
}

int log_dir_rotate(int dir_fd, const char *name, unsigned keep, int *older_error)
{
	*older_error = 0;
	if (keep == 0)
		return unlinkat(dir_fd, name, 0) == 0 || errno == ENOENT ? 0 : -errno;
	char from[NAME_MAX + 16], to[NAME_MAX + 16];
	snprintf(to, sizeof(to), "%s.%u", name, keep);
	if (unlinkat(dir_fd, to, 0) < 0 && errno != ENOENT)
		*older_error = errno;
	for (unsigned n = keep; n > 1; n--) {
		snprintf(from, sizeof(from), "%s.%u", name, n - 1);
		snprintf(to, sizeof(to), "%s.%u", name, n);
		/* renameat never follows a link at either name: a link is
		 * moved, or replaced, as a name. */
		if (renameat(dir_fd, from, dir_fd, to) < 0 && errno != ENOENT && !*older_error)
			*older_error = errno;
	}
	snprintf(to, sizeof(to), "%s.1", name);
	return renameat(dir_fd, name, dir_fd, to) == 0 ? 0 : -errno;
}

bool log_dir_gone(int dir_fd)
{
	struct stat status;
	return fstat(dir_fd, &status) == 0 && status.st_nlink == 0;
}

bool log_dir_file_gone(int dir_fd, const char *name, int fd)
{
	struct stat named, open_file;
	if (fstat(fd, &open_file) < 0)
		return false; /* nothing to compare: write on */
	if (fstatat(dir_fd, name, &named, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT;
	return named.st_ino != open_file.st_ino || named.st_dev != open_file.st_dev ||
	       log_dir_gone(dir_fd);
}
