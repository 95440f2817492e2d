/* The host's side of bidirectional mounts (config `propagation:
 * bidirectional`): the source of such a bind must be a shared mount in
 * corral's mount namespace, so that the task's clone of it is a peer, and
 * what the task mounts below it must go when the task is done.
 *
 * A source is taken by each run of each task that binds it. At the first
 * taker, corral finds the mount holding the source (statx STATX_MNT_ID,
 * then /proc/self/mountinfo):
 * - when that mount is shared already, the source is used as it is: a bind
 *   of corral's would join the same peer group, and every mount a task
 *   made would then also be propagated, hidden, onto the mount below;
 * - otherwise corral binds the source onto itself (recursively) and makes
 *   that bind shared. A mount point that is private or a slave gets
 *   corral's bind stacked on it: corral never changes the propagation of a
 *   mount it did not make (a slave made shared and then private again
 *   would no longer receive its master's mounts).
 * The mount ids at or below the source at that moment are kept. When the
 * last taker's run is over, every mount at or below the source that was
 * not there (the tasks' mounts, one over the source itself included) is
 * detached, deepest first, each only when its path still leads to that
 * very mount; then corral's own bind. Two tasks binding one source share
 * its mounts while both run. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct host_shared_mount {
	char *requested; /* the source as the config wrote it */
	char *path;      /* canonical (realpath), as mountinfo shows it */
	unsigned takers;
	uint64_t self_bind_id; /* corral's bind of the source onto itself; 0: none */
	uint64_t *existing;    /* ids of the mounts at or below it at the first take */
	size_t existing_count;
};

struct host_shared_mounts {
	struct host_shared_mount *items;
	size_t count;
};

/* 0, or -errno with `error` ("bidirectional mount: bind /srv/csi onto itself
 * (to make it shared): ..."). */
int host_shared_mounts_take(struct host_shared_mounts *mounts, const char *path, char *error,
			    size_t error_size);
/* Once per successful take. `log` says what could not be unmounted. */
void host_shared_mounts_give_back(struct host_shared_mounts *mounts, const char *path,
				  void (*log)(const char *format, ...));
/* At exit: every source given back, whatever its takers. */
void host_shared_mounts_close(struct host_shared_mounts *mounts,
			      void (*log)(const char *format, ...));
