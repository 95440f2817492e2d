/* The host's side of bidirectional binds (`propagation: bidirectional`,
 * docs/architecture.md "Bidirectional mounts"), in corral's own mount
 * namespace:
 * - before a start, each source is made a shared mount, so that the
 *   task's clone of it joins a peer group with the host: a source on a
 *   mount that is shared already is used as it is (the mount holding it is
 *   the host's choice); otherwise corral binds the source onto itself and
 *   makes that bind shared, never changing the propagation of a mount it
 *   did not make;
 * - when the last task using a source ends its run, what appeared under
 *   the source since the first of them started is unmounted (deepest
 *   first, MNT_DETACH), then corral's own bind, so that nothing leaks.
 * Tasks that bind one source share one entry, counted: the mounts go when
 * the last of them stops (a mount under the source cannot be told to be
 * one task's rather than another's; they all see each other's).
 * corral is single-threaded: the table is corral's own, for its life. */
#pragma once

#include <stddef.h>

/* Takes a reference on `source` (a host directory). 0, or -errno with
 * `error` ("make /srv/plugins a shared mount: ..."). `canonical` (PATH_MAX)
 * receives the path to give back to shared_source_release. */
int shared_source_acquire(const char *source, char *canonical, char *error, size_t error_size);

/* Gives back a reference; the last one unmounts. 0, or -1 with `error`
 * saying what could not be unmounted (the rest was). */
int shared_source_release(const char *canonical, char *error, size_t error_size);
