/* Spare network namespaces for tasks of network mode `none` (only lo, up).
 *
 * Why: making a network namespace is the costliest part of an isolated
 * clone (about 0.6 ms of the 0.64 ms clone3 took with pid, mount, uts, ipc
 * and net: docs/benchmarks-history.md, bench_isolation). corral makes a few ahead,
 * in its own time, and a start takes one: its child joins it with setns
 * (spawn.c, as bridge and group tasks do) instead of cloning with
 * CLONE_NEWNET.
 *
 * - Each spare is used once: taken out of the pool by one start, joined by
 *   that start's child, and corral's fd closed after the spawn; the
 *   namespace dies with that run's last process.
 * - Nothing is made until a task first takes one, so a config without such
 *   tasks holds none; a take from an empty pool makes one at once.
 * - After a take, the pool is refilled when the loop is next idle (one
 *   namespace per idle moment, loop_idle): after the spawn and the events
 *   already pending, usually while the new task runs.
 * - The spares' fds are CLOEXEC and above the spawn slots, so no child
 *   copies them; they are closed when corral exits. */
#pragma once

#include <stddef.h>

#include "base/loop.h"
#include "isolation/network.h"

#define NETWORK_SPARES_SIZE 2

struct network_spares {
	int fds[NETWORK_SPARES_SIZE]; /* the first `count` are spares */
	size_t count;
	struct loop_idle refill;
	struct loop *loop;
	struct network_host *host;
};

void network_spares_init(struct network_spares *spares, struct loop *loop,
			 struct network_host *host);

/* A fresh namespace with lo up for one start, in *netns_fd (the caller's
 * to close): a spare, or one made now. Arms the refill. 0, or -errno with
 * `failure`. */
int network_spares_take(struct network_spares *spares, int *netns_fd,
			struct network_failure *failure);

/* The spares closed and the refill cancelled. Safe to call more than once. */
void network_spares_close(struct network_spares *spares);
