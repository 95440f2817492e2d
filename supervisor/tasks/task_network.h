/* A task's network around each start (host needs nothing from corral's
 * side):
 * - none: a fresh namespace with lo up per start, taken from the spares
 *   corral makes ahead (network_spares.h); in a user namespace, cloned
 *   with the child instead.
 * - bridge: a fresh namespace per start, a veth pair whose host end
 *   (crXXXXXXXX) sits on the group's bridge and whose peer is eth0 inside,
 *   with the task's address (the same on every start), lo up and the
 *   default route via the bridge. The veth goes when the run ends; the
 *   namespace dies with the run's last process.
 * - group: the group's namespace, joined as it is.
 * The child joins the namespace with setns (spawn.c); except a bridge task
 * in a user namespace, which may join no namespace of corral's: it clones
 * its own, and corral connects it between clone and exec. */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "isolation/network.h"

struct task;

struct task_network {
	struct network_interface eth0; /* bridge: the same on every start */
	char veth_name[IF_NAMESIZE];   /* bridge: the host end's name */
	bool veth_exists;
	int netns_fd;       /* during a start: the namespace the child joins; -1 */
	bool owns_netns_fd; /* bridge, none: this start's own, closed after the spawn */
};

/* Once, in task_init: eth0 (address, prefix, gateway) and the veth's name. */
void task_network_init(struct task *task, size_t index_in_group);

/* Before a spawn: the namespace ready in task->network.netns_fd. -1 with
 * `error` ("network: create veth cr1a2b3c4d: File exists"). */
int task_network_prepare_start(struct task *task, char *error, size_t error_size);

/* A bridge task in a user namespace: its network is set up in the sync
 * window (task_network_between), not before the spawn. */
bool task_network_needs_between(const struct task *task);

/* In the sync window: the veth's peer moved into the network namespace of
 * the child `pid` as eth0, configured there. -errno with `error`. */
int task_network_between(struct task *task, pid_t pid, char *error, size_t error_size);

/* After the spawn: the child joined (or failed); corral's fd of a
 * bridge task's namespace is closed. */
void task_network_spawned(struct task *task);

/* The run is over, or the start failed: the veth is deleted. Safe to
 * call more than once. */
void task_network_run_ended(struct task *task);
