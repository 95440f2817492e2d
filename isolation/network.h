/* Task networks with libnl-route, never with ip(8): network namespaces
 * made by corral itself, a bridge per group, a veth pair per bridge task
 * (the host end on the bridge, eth0 in the task's namespace), addresses,
 * the default route, and loopback up.
 *
 * A namespace is made without a helper process: corral unshares into a
 * new one, keeps an fd of it and goes back home with setns (corral is
 * single-threaded). To configure it, corral enters it just long enough to
 * open a netlink socket there: a socket stays bound to the namespace it
 * was created in. The task's child joins with setns on that fd.
 *
 * Every function returns 0 or -errno, and on failure fills a
 * `struct network_failure` with the step ("create veth cr1a2b3c4d"), so
 * that callers can name the task: "web/app: network: create veth ...:
 * File exists". These calls talk to the kernel synchronously; each takes
 * microseconds. */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

struct nl_sock;

struct network_failure {
	char step[96];
	int error; /* errno */
};

/* corral's own network namespace: an fd to come back to, and a route
 * netlink socket in it. Both opened on first use, so that a corral
 * without networks opens neither. */
struct network_host {
	int home_fd;
	struct nl_sock *socket;
};

#define NETWORK_HOST_INIT                                                                          \
	{                                                                                          \
		.home_fd = -1, .socket = NULL                                                      \
	}

void network_host_close(struct network_host *host);

/* A socket made in the network namespace `netns_fd` (its connections go
 * from there: 127.0.0.1 is that namespace's loopback), corral back home
 * at once. A socket keeps its namespace for its whole life. The fd, or
 * -errno with `failure`. */
int network_socket_in(struct network_host *host, int netns_fd, int domain, int type,
		      struct network_failure *failure);

/* A new network namespace, not entered: its fd (CLOEXEC) in *netns_fd. */
int network_namespace_create(struct network_host *host, int *netns_fd,
			     struct network_failure *failure);

/* The same with lo up: what a task of network mode none gets (a spare of
 * supervisor/tasks/network_spares.c). */
int network_namespace_create_loopback(struct network_host *host, int *netns_fd,
				      struct network_failure *failure);

/* What eth0 of a namespace gets. */
struct network_interface {
	uint32_t address; /* host byte order */
	unsigned prefix_length;
	uint32_t gateway; /* the default route's */
};

/* The bridge `name`, up, with `gateway/prefix_length`: made when missing
 * (*created), taken as it is when there (the address added unless it has
 * it: *address_added). *ifindex is its index. */
int network_bridge_open(struct network_host *host, const char *name, uint32_t gateway,
			unsigned prefix_length, bool *created, bool *address_added, int *ifindex,
			struct network_failure *failure);

/* Undoes network_bridge_open: deletes the bridge when corral made it,
 * else the address when corral added it. */
int network_bridge_close(struct network_host *host, const char *name, uint32_t gateway,
			 unsigned prefix_length, bool created, bool address_added,
			 struct network_failure *failure);

/* The host end's name of the veth of `owner` (a task's "group/task" or a
 * group's name, which has no '/', so never a task's): "cr" and 8 hex
 * digits of FNV-1a over corral's pid and `owner`, short enough for
 * IFNAMSIZ and unique per corral, so that two corrals in one namespace do
 * not collide. */
void network_veth_name(char name[IF_NAMESIZE], const char *owner);

/* A namespace made ready, as a bridge task (before its spawn or in the
 * sync window) and a group's shared namespace need it: with `eth0`, a veth
 * pair whose host end `veth_name` is up on the bridge `bridge_ifindex`
 * and whose peer is made straight into `netns_fd` as eth0 (*veth_exists
 * set once it is there, for the caller to delete), then inside: lo up,
 * eth0's address, eth0 up and the default route. Without `eth0`: lo up. */
int network_namespace_connect(struct network_host *host, int netns_fd, const char *veth_name,
			      int bridge_ifindex, const struct network_interface *eth0,
			      bool *veth_exists, struct network_failure *failure);

/* Deletes a link of corral's namespace (a veth's host end takes its peer
 * with it). A link already gone is not an error: the kernel deletes a
 * veth pair itself when the namespace of its other end dies. */
int network_link_delete(struct network_host *host, const char *name,
			struct network_failure *failure);
