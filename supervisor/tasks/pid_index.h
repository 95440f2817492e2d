/* Which task a pid is the main process of, in constant time.
 *
 * Why: every SIGCHLD makes corral look at its zombies (reaper.c), and a
 * zombie that is a task's main process was found by walking every task:
 * stopping 5000 tasks walked about 12 million (a tenth of corral's CPU
 * while stopping, docs/benchmarks.md). Helper processes (probe runs,
 * hooks) and orphans are still found by the walk: they are few.
 *
 * An open-addressing table of pids, grown at half full; a removed entry
 * leaves a tombstone; once half the table is used, it is rebuilt without
 * them, twice as large only if the pids in it fill a quarter. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

struct pid_index_entry {
	pid_t pid; /* 0: empty; -1: removed */
	void *owner;
};

struct pid_index {
	struct pid_index_entry *entries;
	size_t capacity; /* a power of two, or 0 */
	size_t used;     /* entries not empty, tombstones included */
	size_t live;     /* pids in the table */
};

void pid_index_put(struct pid_index *index, pid_t pid, void *owner);
/* The owner put for `pid`, or NULL. */
void *pid_index_get(const struct pid_index *index, pid_t pid);
void pid_index_remove(struct pid_index *index, pid_t pid);
void pid_index_free(struct pid_index *index);
