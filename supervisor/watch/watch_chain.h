/* Where a watched path leads through symlinks: each symlink it goes
 * through (the directory that holds it, and its name there) and where it
 * ends (the file, or the first part that is missing). A symlink whose
 * target is in another directory (`/etc/app.conf -> /srv/real/app.conf`)
 * is edited there, where a watch on the path's own directory sees
 * nothing; a symlink re-pointed, a link that dangles until its target
 * appears, a directory on the way that is a link (Kubernetes' `..data`)
 * are seen in the directories this names.
 *
 * The walk is the kernel's own (each part looked up with lstat, a link's
 * text followed from the directory that holds it, `..` from the directory
 * reached), done by hand so that every link on the way is seen. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The kernel's MAXSYMLINKS: past this many links followed the walk stops
 * (a loop), as open(2) would with ELOOP. */
#define WATCH_CHAIN_MAX_LINKS 40

struct watch_hop {
	char *directory; /* absolute, with no symlink in it */
	char *name;      /* one entry of it */
	bool link;       /* a symlink followed; else where the path ends */
};

struct watch_chain {
	struct watch_hop *hops; /* in the order met; each (directory, name) once */
	size_t count;
	size_t links; /* hops that are links */
	/* Not followed to its end: more than WATCH_CHAIN_MAX_LINKS links
	 * (a loop), or a path longer than PATH_MAX. The links met are kept. */
	bool cut;
};

/* `path`: absolute. Never fails: what cannot be looked at ends the walk. */
void watch_chain_walk(const char *path, struct watch_chain *chain);
void watch_chain_free(struct watch_chain *chain);
