#include "base/unix_listener.h"

#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/dir_trust.h"

/* mkdir -p, giving the directories made `mode`. */
static int make_directories(const char *path, mode_t mode, gid_t group, bool has_group)
{
	char buffer[PATH_MAX];
	snprintf(buffer, sizeof(buffer), "%s", path);
	for (char *slash = buffer + 1;; slash++) {
		bool last = *slash == '\0';
		if (*slash != '/' && !last)
			continue;
		*slash = '\0';
		if (mkdir(buffer, mode) == 0) {
			if (has_group && chown(buffer, (uid_t)-1, group) < 0)
				return -errno;
			chmod(buffer, mode); /* not reduced by the umask */
		} else if (errno != EEXIST) {
			return -errno;
		}
		if (last)
			return 0;
		*slash = '/';
	}
}

/* A directory that was there before us (/tmp is everyone's): the
 * caller's own, or someone could swap the socket clients connect to. */
static int check_own_directory(const char *directory, char *error, size_t error_size)
{
	struct stat status;
	if (lstat(directory, &status) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "%s: %s", directory, strerror(-failure));
		return failure;
	}
	if (!S_ISDIR(status.st_mode) || status.st_uid != geteuid() || (status.st_mode & 022)) {
		snprintf(error, error_size,
			 "%s is not corral's own directory (owner uid %u, mode %04o): not used",
			 directory, (unsigned)status.st_uid, (unsigned)(status.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int unix_listener_check_directory(const char *path, char *error, size_t error_size)
{
	char buffer[PATH_MAX], own[PATH_MAX];
	snprintf(buffer, sizeof(buffer), "%s", path);
	char *directory = dirname(buffer);
	snprintf(own, sizeof(own), "%s", directory);
	struct stat status;
	/* Not there yet: corral makes it in the nearest directory that is,
	 * whose owner (or others, if they may write it) could move what
	 * corral made aside and put a directory of their own in its place. */
	while (stat(directory, &status) < 0) {
		int failure = -errno;
		if (failure != -ENOENT || strcmp(directory, "/") == 0) {
			snprintf(error, error_size, "%s: %s", directory, strerror(-failure));
			return failure;
		}
		directory = dirname(directory);
	}
	char whose[PATH_MAX + 64];
	if (strcmp(directory, own) == 0)
		snprintf(whose, sizeof(whose), "its directory %s", own);
	else
		snprintf(whose, sizeof(whose), "%s, where corral would make its directory %s,",
			 directory, own);
	switch (dir_trust_of(&status, true)) {
	case DIR_TRUSTED:
		return 0;
	case DIR_FOREIGN_OWNER:
		snprintf(error, error_size,
			 "%s: refused: %s is owned by uid %u, not by corral (uid %u) or root: its "
			 "owner could replace the socket (put it in a directory of corral's own)",
			 path, whose, (unsigned)status.st_uid, (unsigned)geteuid());
		break;
	case DIR_WRITABLE_BY_OTHERS:
		snprintf(
		    error, error_size,
		    "%s: refused: %s is writable by group or others (mode %04o) and not "
		    "sticky: they could replace the socket (make it writable by its owner only, "
		    "or put the socket in a directory of corral's own)",
		    path, whose, (unsigned)(status.st_mode & 07777));
		break;
	}
	return -EPERM;
}

bool unix_listener_at(const char *path, int *connect_errno)
{
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0) {
		*connect_errno = errno;
		return false;
	}
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
	int connected = connect(probe, (struct sockaddr *)&address, sizeof(address));
	*connect_errno = connected == 0 ? 0 : errno;
	close(probe);
	return connected == 0;
}

void unix_listener_describe_in_use(const struct unix_listener_options *options, const char *path,
				   char *error, size_t error_size)
{
	snprintf(error, error_size, "%s is already listening on %s: stop it, or %s",
		 options->other_listener, path, options->use_another);
}

/* What is at `path` already: nothing, a stale socket (removed), or
 * something we must not touch (-ENOTSOCK, -EADDRINUSE, -EBUSY), so that
 * only a failure to look (-EACCES) lets the caller try another place. */
static int clear_stale_socket(const char *path, const struct unix_listener_options *options,
			      char *error, size_t error_size)
{
	struct stat status;
	if (lstat(path, &status) < 0) {
		int failure = -errno;
		if (failure == -ENOENT)
			return 0;
		snprintf(error, error_size, "%s: %s", path, strerror(-failure));
		return failure;
	}
	if (!S_ISSOCK(status.st_mode)) {
		snprintf(error, error_size,
			 "%s exists and is not a socket: refusing to replace it (remove it, or "
			 "%s)",
			 path, options->set_another);
		return -ENOTSOCK;
	}
	int connect_errno = 0;
	if (unix_listener_at(path, &connect_errno)) {
		unix_listener_describe_in_use(options, path, error, error_size);
		return -EADDRINUSE;
	}
	if (connect_errno != ECONNREFUSED) {
		snprintf(error, error_size, "%s: cannot tell whether it is in use: %s", path,
			 strerror(connect_errno));
		return -EBUSY;
	}
	/* Left behind by a process that died: nobody listens. */
	unlink(path);
	return 0;
}

/* The listening socket's fd, or -errno with `error`. */
static int bind_socket(struct unix_listener *listener, const char *path,
		       const struct unix_listener_options *options, char *error, size_t error_size)
{
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(address.sun_path)) {
		snprintf(error, error_size, "%s: path too long for a socket", path);
		return -ENAMETOOLONG;
	}
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		int failure = -errno;
		snprintf(error, error_size, "socket: %s", strerror(-failure));
		return failure;
	}
	/* The umask makes it 0600 from birth: no window where others could
	 * connect before the chmod. */
	mode_t old_umask = umask(0177);
	int bound = bind(fd, (struct sockaddr *)&address, sizeof(address));
	int bind_errno = errno;
	umask(old_umask);
	if (bound < 0) {
		snprintf(error, error_size, "bind %s: %s", path, strerror(bind_errno));
		return -bind_errno;
	}
	if (options->has_group &&
	    (chown(path, (uid_t)-1, options->group) < 0 || chmod(path, 0660) < 0)) {
		int failure = -errno;
		snprintf(error, error_size, "%s: giving it to group %s: %s", path,
			 options->group_name, strerror(-failure));
		unlink(path);
		return failure;
	}
	struct stat status;
	if (listen(fd, SOMAXCONN) < 0 || fstat(fd, &status) < 0 || stat(path, &status) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "listen %s: %s", path, strerror(-failure));
		unlink(path);
		return failure;
	}
	listener->device = status.st_dev;
	listener->inode = status.st_ino;
	return TAKE_FD(fd);
}

int unix_listener_open(struct unix_listener *listener, const char *path,
		       const struct unix_listener_options *options, char *error, size_t error_size)
{
	*listener = (struct unix_listener){.fd = -1};
	char buffer[PATH_MAX];
	snprintf(buffer, sizeof(buffer), "%s", path);
	const char *directory = dirname(buffer);
	int failure;
	/* Before the directories are made, where they would be made. */
	if (options->directory_must_be_trusted &&
	    (failure = unix_listener_check_directory(path, error, error_size)) == -EPERM)
		return failure;
	failure = make_directories(directory, options->has_group ? 0750 : 0700, options->group,
				   options->has_group);
	if (failure < 0) {
		snprintf(error, error_size, "cannot create the directory of %s: %s", path,
			 strerror(-failure));
		return failure;
	}
	if (options->directory_must_be_own &&
	    (failure = check_own_directory(directory, error, error_size)) < 0)
		return failure;
	if (options->directory_must_be_trusted &&
	    (failure = unix_listener_check_directory(path, error, error_size)) < 0)
		return failure;
	if ((failure = clear_stale_socket(path, options, error, error_size)) < 0)
		return failure;
	int fd = bind_socket(listener, path, options, error, error_size);
	if (fd < 0)
		return fd;
	listener->fd = fd;
	return 0;
}

void unix_listener_close(struct unix_listener *listener, const char *path)
{
	if (listener->fd < 0)
		return;
	close(listener->fd);
	listener->fd = -1;
	/* Only our own socket: another process may have replaced it. */
	struct stat status;
	if (stat(path, &status) == 0 && status.st_dev == listener->device &&
	    status.st_ino == listener->inode)
		unlink(path);
}

int unix_listener_group(const char *name, gid_t *gid)
{
	struct group *entry = getgrnam(name);
	if (!entry)
		return -ENOENT;
	*gid = entry->gr_gid;
	return 0;
}
