/* A listening Unix stream socket made safely, for the control socket and
 * the HTTP endpoint's socket alike: its directory made with the right
 * mode, anything at the path that is not a stale socket refused, the
 * socket 0600 (0660 for a group) from birth, and removed at the end only
 * when it is still the one made. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct unix_listener_options {
	/* The socket 0660 and its directories 0750, given to `group`;
	 * else 0600 and 0700. */
	bool has_group;
	gid_t group;
	const char *group_name; /* for messages */
	/* A directory already there must be the caller's own and not
	 * writable by others (a default place such as /tmp/corral-UID): else
	 * -EPERM and the next place may be tried. */
	bool directory_must_be_own;
	/* The directory that holds the socket, there already or made, must
	 * be one only the caller's user or root can change names in
	 * (dir_trust.h, as log.dir): else -EPERM. A sticky one (/tmp) is
	 * fine. For a path the operator chose (http.listen). */
	bool directory_must_be_trusted;
	/* For messages about what is in the way: who a listener there would
	 * be ("another corral"), and what to do instead ("give this one
	 * another socket (--socket, CORRAL_SOCKET or socket:)", "set
	 * socket: to another path"). */
	const char *other_listener;
	const char *use_another;
	const char *set_another;
};

struct unix_listener {
	int fd; /* listening, non-blocking, close-on-exec */
	dev_t device;
	ino_t inode;
};

/* Makes the socket at `path`: 0 with `listener` filled, or -errno with
 * `error` (-ENOTSOCK: something else is at the path; -EADDRINUSE: someone
 * listens there; -EBUSY: cannot tell; -EPERM: a directory not the
 * caller's own). */
int unix_listener_open(struct unix_listener *listener, const char *path,
		       const struct unix_listener_options *options, char *error, size_t error_size);

/* The directory that holds `path`, as directory_must_be_trusted asks:
 * 0; -EPERM with `error` (the path, the directory, and why) when others
 * could replace the socket in it; -errno (-ENOENT: not there yet). */
int unix_listener_check_directory(const char *path, char *error, size_t error_size);

/* Closes it, and removes `path` when it is still this socket (another
 * process may have replaced it). */
void unix_listener_close(struct unix_listener *listener, const char *path);

/* Whether a server listens on `path` now; when not, the connect's errno in
 * *connect_errno (ECONNREFUSED: a socket left behind, ENOENT: none). */
bool unix_listener_at(const char *path, int *connect_errno);

/* "another corral is already listening on PATH: stop it, or give this
 * one another socket (...)": what unix_listener_open says when someone
 * listens at `path`, for a caller that looked before. */
void unix_listener_describe_in_use(const struct unix_listener_options *options, const char *path,
				   char *error, size_t error_size);

/* The id of group `name` for unix_listener_options (getgrnam): 0, or
 * -ENOENT when there is no such group. */
int unix_listener_group(const char *name, gid_t *gid);
