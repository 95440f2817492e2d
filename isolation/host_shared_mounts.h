/* The host's side of bidirectional mounts (config `propagation:
 * bidirectional`): the source of such a bind must be a shared mount in
 * corral's mount namespace, so that the task's clone of it is a peer, and
 * what the task mounts below it must go when the task is done.
 *
 * A source is taken by each run of each task that binds it. At the first
 * taker corral makes it shared: a directory that is not a mount point is
 * bound onto itself first (Kubernetes and Nomad ask the user to do this;
 * corral does it, and undoes it). When the last taker's run is over, what
 * the tasks mounted below it goes, and what corral did is undone: its own
 * bind is detached with everything on it; or, for a source that was a
 * mount point already, the mounts below it that were not there at the
 * first take are unmounted (deepest first, detached) and, if corral made
 * it shared, it is made private again. Two tasks binding one source share
 * its mounts while both run. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct host_shared_mount {
	char *path;
	unsigned takers;
	bool bound_by_us;  /* corral bound it onto itself */
	bool shared_by_us; /* it was a mount point; corral made it shared */
	char **existing;   /* not bound_by_us: the mount points below it at the first take */
	size_t existing_count;
};

struct host_shared_mounts {
	struct host_shared_mount *items;
	size_t count;
};

/* 0, or -1 with `error` ("make /srv/csi a shared mount: ..."). */
int host_shared_mounts_take(struct host_shared_mounts *mounts, const char *path, char *error,
			    size_t error_size);
/* Once per successful take. `log` says what could not be unmounted. */
void host_shared_mounts_give_back(struct host_shared_mounts *mounts, const char *path,
				  void (*log)(const char *format, ...));
/* At exit: every source given back, whatever its takers. */
void host_shared_mounts_close(struct host_shared_mounts *mounts,
			      void (*log)(const char *format, ...));
