/* Whether the CLI may talk to the socket it is about to use. The server
 * takes a default place only in a directory of its own that no one else
 * may write (control_listener.c); the CLI keeps the same rule from its side,
 * or another local user who made /tmp/corral-UID first would receive the
 * operator's requests: exec's -e values and its stdin, stdout and stderr.
 *
 * - a default place (control_socket_places.h), whoever names it: its
 *   directory is owned by root or the caller and writable by neither its
 *   group nor others;
 * - every path: the socket is owned by root or the caller, and once
 *   connected, before a byte is sent, the server (SO_PEERCRED) runs as
 *   root or as the caller.
 * A path named with --socket, CORRAL_SOCKET or the socket: of -c CONFIG
 * skips the directory rule: it may sit in a shared directory on purpose
 * (a container's /tmp, 1777); the owner and the server's credentials
 * still decide. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The directory rule on an lstat() of `directory` (owner, mode): 0, or
 * -EPERM with `error` ("its directory D belongs to uid 1002 (mode 0755), not to
 * root or to you (uid 1000)"). Pure, for the unit tests. */
int control_socket_judge_directory(const char *directory, mode_t mode, uid_t owner, uid_t caller,
				   char *error, size_t error_size);

/* The rules a path can be held to before connecting (above): 0, or
 * -EPERM with `error`. A path that is not there is for connect() to report. */
int control_socket_check_place(const char *path, bool default_place, uid_t caller, char *error,
			       size_t error_size);

/* The server's credentials on a connected `fd`: 0 when it runs as root or
 * as `caller`, else -EPERM (-errno when they cannot be read) with
 * `error`. */
int control_socket_check_peer(int fd, uid_t caller, char *error, size_t error_size);
