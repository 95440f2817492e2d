#include "cli/control_socket_trust.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

static bool trusted_owner(uid_t owner, uid_t caller)
{
	return owner == 0 || owner == caller;
}

int control_socket_judge_directory(const char *directory, mode_t mode, uid_t owner, uid_t caller,
				   char *error, size_t error_size)
{
	unsigned permissions = (unsigned)(mode & 07777);
	if (!S_ISDIR(mode)) {
		snprintf(error, error_size, "%s is %s, not a directory (owner uid %u)", directory,
			 S_ISLNK(mode) ? "a symlink" : "a file", (unsigned)owner);
		return -EPERM;
	}
	if (!trusted_owner(owner, caller)) {
		snprintf(error, error_size,
			 "its directory %s belongs to uid %u (mode %04o), not to root or to you "
			 "(uid %u)",
			 directory, (unsigned)owner, permissions, (unsigned)caller);
		return -EPERM;
	}
	/* Group- or other-writable: anyone who may write it may replace the
	 * socket, sticky bit or not (they may make it before the server). */
	if (mode & 022) {
		snprintf(error, error_size,
			 "its directory %s may be written by others (owner uid %u, mode %04o)",
			 directory, (unsigned)owner, permissions);
		return -EPERM;
	}
	return 0;
}

static int check_directory(const char *path, uid_t caller, char *error, size_t error_size)
{
	char buffer[PATH_MAX];
	struct stat status;
	snprintf(buffer, sizeof(buffer), "%s", path);
	const char *directory = dirname(buffer);
	/* lstat: a symlink in a default place's stead is refused, not followed.
	 * A directory we cannot look at is for connect() to report. */
	if (lstat(directory, &status) < 0)
		return 0;
	return control_socket_judge_directory(directory, status.st_mode, status.st_uid, caller,
					      error, error_size);
}

int control_socket_check_place(const char *path, bool default_place, uid_t caller, char *error,
			       size_t error_size)
{
	struct stat status;
	int refused = default_place ? check_directory(path, caller, error, error_size) : 0;
	if (refused < 0)
		return refused;
	if (stat(path, &status) < 0)
		return 0; /* not there, or not ours to see: connect() says so */
	if (!trusted_owner(status.st_uid, caller)) {
		snprintf(error, error_size,
			 "the socket belongs to uid %u (mode %04o), not to root or to you (uid %u)",
			 (unsigned)status.st_uid, (unsigned)(status.st_mode & 07777),
			 (unsigned)caller);
		return -EPERM;
	}
	return 0;
}

int control_socket_check_peer(int fd, uid_t caller, char *error, size_t error_size)
{
	struct ucred peer;
	socklen_t size = sizeof(peer);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "cannot read the server's credentials: %s",
			 strerror(-failure));
		return failure;
	}
	if (!trusted_owner(peer.uid, caller)) {
		snprintf(error, error_size,
			 "the server runs as uid %u (pid %d), not as root or as you (uid %u)",
			 (unsigned)peer.uid, (int)peer.pid, (unsigned)caller);
		return -EPERM;
	}
	return 0;
}
