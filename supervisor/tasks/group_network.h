/* A group's network while it runs: the bridge corral opens for it
 * (`network: {bridge, subnet}`), made when missing and deleted at the end
 * only when corral made it; and the network namespace its tasks of mode
 * group share, like a pod's, from the group's start to its end. With a
 * bridge, that namespace also gets eth0 on it, as a bridge task does, with
 * the subnet's last host address. */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

struct group;

struct group_network {
	int bridge_ifindex; /* 0: the group has no bridge */
	bool bridge_created;
	bool address_added;          /* to a bridge that was there already */
	int netns_fd;                /* mode group: the shared namespace, lo up; -1: none */
	char veth_name[IF_NAMESIZE]; /* its veth's host end, with a bridge */
	bool veth_exists;
};

/* Before any task starts. Errors name the group and the step:
 * "group web: network: create bridge corral0: Operation not permitted". */
int group_network_open(struct group *group, char *error, size_t error_size);

/* After its tasks are gone: the namespace released, the bridge deleted
 * when corral made it. */
void group_network_close(struct group *group);
