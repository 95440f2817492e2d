/* Every task's `watch:` entries at run time (docs/config.md, "Watching
 * files"): their paths watched through one inotify fd in corral's event
 * loop (no polling), a debounce timer each, and the action once the
 * changes settle (watch_action.h).
 *
 * The entries follow the tasks: watch_set_sync makes them match what the
 * tasks' definitions say now, at start and after each reload (an entry
 * added, removed or changed with its task; a task's next definition, when
 * a reload left one waiting, is the one that counts). Paths are resolved
 * in corral's mount namespace. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/loop.h"
#include "supervisor/tasks/services.h"
#include "supervisor/watch/watch_dirs.h"

struct watch_entry;

struct watch_set {
	struct services *services; /* the groups and tasks, the loop, the event log */
	struct watch_dirs dirs;
	struct loop_watch inotify; /* dirs.fd in the loop, while open */
	struct watch_entry **entries;
	size_t entry_count;
	/* The action `reload`: corral's config read again. */
	void (*reload)(void *context);
	void *reload_context;
};

void watch_set_init(struct watch_set *set, struct services *services, void (*reload)(void *context),
		    void *reload_context);

/* The new corral of an upgrade: the inotify fd the old one handed over
 * (or -1), used by the watch_set_sync that follows (watch_dirs_adopt). */
void watch_set_adopt(struct watch_set *set, int fd);

/* The entries made to match every task's definition now. */
void watch_set_sync(struct watch_set *set);

/* Every watch and timer given back. */
void watch_set_close(struct watch_set *set);
