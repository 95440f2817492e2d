#include "isolation/network.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netlink/errno.h>

#include "config/load/config_network.h"
#include "isolation/netlink_library.h"

/* libnl, loaded by open_socket (netlink_library.h): every libnl call below
 * needs a socket first, so it goes through this table. */
static const struct netlink_library *nl;

/* libnl turns the kernel's errno into its own codes; turn them back, so
 * that messages read as every other of corral's ("File exists"). */
static int errno_of(int nl_error)
{
	switch (nl_error < 0 ? -nl_error : nl_error) {
	case NLE_INTR:
		return EINTR;
	case NLE_AGAIN:
		return EAGAIN;
	case NLE_NOMEM:
		return ENOMEM;
	case NLE_EXIST:
		return EEXIST;
	case NLE_INVAL:
		return EINVAL;
	case NLE_RANGE:
		return ERANGE;
	case NLE_MSGSIZE:
		return EMSGSIZE;
	case NLE_OPNOTSUPP:
		return EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:
		return EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND:
		return ENOENT;
	case NLE_NOADDR:
		return EADDRNOTAVAIL;
	case NLE_BUSY:
		return EBUSY;
	case NLE_NOACCESS:
		return EACCES;
	case NLE_PERM:
		return EPERM;
	case NLE_NODEV:
		return ENODEV;
	default:
		return EIO;
	}
}

static int fail(struct network_failure *failure, int error, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Records the step that failed; returns -error (an errno). */
static int fail(struct network_failure *failure, int error, const char *format, ...)
{
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(failure->step, sizeof(failure->step), format, arguments);
	va_end(arguments);
	failure->error = error;
	return -error;
}

/* A route netlink socket in the calling thread's current namespace. */
static int open_socket(struct nl_sock **out)
{
	struct nl_sock *socket = nl->nl_socket_alloc();
	if (!socket)
		return -ENOMEM;
	int result = nl->nl_connect(socket, NETLINK_ROUTE);
	if (result < 0) {
		nl->nl_socket_free(socket);
		return -errno_of(result);
	}
	*out = socket;
	return 0;
}

/* corral's own namespace, to come back to from a task's. */
static int home_open(struct network_host *host, struct network_failure *failure)
{
	if (host->home_fd >= 0)
		return 0;
	host->home_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	return host->home_fd < 0 ? fail(failure, errno, "open /proc/self/ns/net") : 0;
}

static int netlink_load(struct network_failure *failure)
{
	char reason[sizeof(failure->step) - sizeof("load ")];
	if (!nl)
		nl = netlink_library_load(reason, sizeof(reason));
	return nl ? 0 : fail(failure, ELIBACC, "load %s", reason);
}

/* Home, libnl and a route netlink socket in corral's namespace. */
static int host_open(struct network_host *host, struct network_failure *failure)
{
	if (host->socket)
		return 0;
	int result = home_open(host, failure);
	if (result == 0)
		result = netlink_load(failure);
	if (result < 0)
		return result;
	result = open_socket(&host->socket);
	return result < 0 ? fail(failure, -result, "open a route netlink socket") : 0;
}

void network_host_close(struct network_host *host)
{
	if (host->socket)
		nl->nl_socket_free(host->socket);
	if (host->home_fd >= 0)
		close(host->home_fd);
	*host = (struct network_host)NETWORK_HOST_INIT;
}

/* Back to corral's namespace. It cannot fail (corral was just there, with
 * the capability it needs); if it ever did, corral would go on in a
 * task's namespace, which is worse than stopping. */
static void go_home(struct network_host *host)
{
	if (setns(host->home_fd, CLONE_NEWNET) < 0) {
		fprintf(stderr, "corral: cannot return to its own network namespace: %s\n",
			strerror(errno));
		abort();
	}
}

int network_socket_in(struct network_host *host, int netns_fd, int domain, int type,
		      struct network_failure *failure)
{
	int result = home_open(host, failure);
	if (result < 0)
		return result;
	if (setns(netns_fd, CLONE_NEWNET) < 0)
		return fail(failure, errno, "enter the task's network namespace");
	int fd = socket(domain, type, 0);
	int saved_errno = errno;
	go_home(host);
	if (fd < 0)
		return fail(failure, saved_errno, "socket");
	return fd;
}

/* lo of the namespace corral is in, up: one ioctl, as a task's child does
 * for itself (spawn_isolation.c), cheaper than a netlink round trip. */
static int bring_loopback_up_here(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct ifreq request = {.ifr_name = "lo"};
	int result = ioctl(fd, SIOCGIFFLAGS, &request);
	if (result == 0) {
		request.ifr_flags |= IFF_UP;
		result = ioctl(fd, SIOCSIFFLAGS, &request);
	}
	int failure = result < 0 ? -errno : 0;
	close(fd);
	return failure;
}

static int create_namespace(struct network_host *host, bool loopback_up, int *netns_fd,
			    struct network_failure *failure)
{
	int result = home_open(host, failure);
	if (result < 0)
		return result;
	if (unshare(CLONE_NEWNET) < 0)
		return fail(failure, errno, "create a network namespace");
	result = loopback_up ? bring_loopback_up_here() : 0;
	int fd = -1, error = 0;
	if (result == 0) {
		fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		error = errno;
	}
	go_home(host);
	if (result < 0)
		return fail(failure, -result, "bring lo up");
	if (fd < 0)
		return fail(failure, error, "open the new network namespace");
	*netns_fd = fd;
	return 0;
}

int network_namespace_create(struct network_host *host, int *netns_fd,
			     struct network_failure *failure)
{
	return create_namespace(host, false, netns_fd, failure);
}

int network_namespace_create_loopback(struct network_host *host, int *netns_fd,
				      struct network_failure *failure)
{
	return create_namespace(host, true, netns_fd, failure);
}

/* The link `name` of the socket's namespace, or -errno. */
static int find_link(struct nl_sock *socket, const char *name, struct rtnl_link **link)
{
	int result = nl->rtnl_link_get_kernel(socket, 0, name, link);
	return result < 0 ? -errno_of(result) : 0;
}

static int set_up(struct nl_sock *socket, struct rtnl_link *link)
{
	struct rtnl_link *change = nl->rtnl_link_alloc();
	if (!change)
		return -ENOMEM;
	nl->rtnl_link_set_flags(change, IFF_UP);
	int result = nl->rtnl_link_change(socket, link, change, 0);
	nl->rtnl_link_put(change);
	return result < 0 ? -errno_of(result) : 0;
}

static struct nl_addr *ipv4_address(uint32_t address, unsigned prefix_length)
{
	uint32_t network_order = htonl(address);
	struct nl_addr *built = nl->nl_addr_build(AF_INET, &network_order, sizeof(network_order));
	if (built)
		nl->nl_addr_set_prefixlen(built, (int)prefix_length);
	return built;
}

/* `address/prefix_length` on link `ifindex`: adds it, or deletes it. */
static int change_address(struct nl_sock *socket, int ifindex, uint32_t address,
			  unsigned prefix_length, bool add)
{
	struct rtnl_addr *request = nl->rtnl_addr_alloc();
	struct nl_addr *local = ipv4_address(address, prefix_length);
	int result = -NLE_NOMEM;
	if (request && local) {
		nl->rtnl_addr_set_ifindex(request, ifindex);
		nl->rtnl_addr_set_family(request, AF_INET);
		nl->rtnl_addr_set_prefixlen(request, (int)prefix_length);
		result = nl->rtnl_addr_set_local(request, local);
		if (result >= 0)
			result = add ? nl->rtnl_addr_add(socket, request, 0)
				     : nl->rtnl_addr_delete(socket, request, 0);
	}
	nl->nl_addr_put(local);
	nl->rtnl_addr_put(request);
	return result < 0 ? -errno_of(result) : 0;
}

static int add_default_route(struct nl_sock *socket, int ifindex, uint32_t gateway)
{
	struct rtnl_route *route = nl->rtnl_route_alloc();
	struct rtnl_nexthop *hop = nl->rtnl_route_nh_alloc();
	struct nl_addr *destination = ipv4_address(0, 0);
	struct nl_addr *via = ipv4_address(gateway, 32);
	int result = -NLE_NOMEM;
	if (route && hop && destination && via) {
		nl->rtnl_route_set_family(route, AF_INET);
		nl->rtnl_route_set_table(route, RT_TABLE_MAIN);
		result = nl->rtnl_route_set_dst(route, destination);
		nl->rtnl_route_nh_set_ifindex(hop, ifindex);
		nl->rtnl_route_nh_set_gateway(hop, via);
		nl->rtnl_route_add_nexthop(route, hop);
		hop = NULL; /* the route's now */
		if (result >= 0)
			result = nl->rtnl_route_add(socket, route, NLM_F_CREATE | NLM_F_EXCL);
	}
	if (hop)
		nl->rtnl_route_nh_free(hop);
	nl->nl_addr_put(via);
	nl->nl_addr_put(destination);
	nl->rtnl_route_put(route);
	return result < 0 ? -errno_of(result) : 0;
}

/* With a socket of the namespace: lo up; eth0 addressed, up, routed. */
static int configure_inside(struct nl_sock *socket, const struct network_interface *eth0,
			    struct network_failure *failure)
{
	struct rtnl_link *link = NULL;
	int result = find_link(socket, "lo", &link);
	if (result == 0)
		result = set_up(socket, link);
	nl->rtnl_link_put(link);
	if (result < 0)
		return fail(failure, -result, "bring lo up");
	if (!eth0)
		return 0;

	char shown[16];
	link = NULL;
	result = find_link(socket, "eth0", &link);
	if (result < 0)
		return fail(failure, -result, "find eth0 in the task's namespace");
	int ifindex = nl->rtnl_link_get_ifindex(link);
	network_address_format(eth0->address, shown);
	result = change_address(socket, ifindex, eth0->address, eth0->prefix_length, true);
	if (result < 0) {
		nl->rtnl_link_put(link);
		return fail(failure, -result, "add address %s/%u to eth0", shown,
			    eth0->prefix_length);
	}
	result = set_up(socket, link);
	nl->rtnl_link_put(link);
	if (result < 0)
		return fail(failure, -result, "bring eth0 up");
	result = add_default_route(socket, ifindex, eth0->gateway);
	if (result < 0) {
		network_address_format(eth0->gateway, shown);
		return fail(failure, -result, "add the default route via %s", shown);
	}
	return 0;
}

/* Inside the namespace: lo up; with `eth0`, also the address, eth0 up
 * and the default route (eth0 must be there: veth_add). */
static int namespace_configure(struct network_host *host, int netns_fd,
			       const struct network_interface *eth0,
			       struct network_failure *failure)
{
	int result = host_open(host, failure);
	if (result < 0)
		return result;
	/* In and out again: the socket stays the namespace's. */
	if (setns(netns_fd, CLONE_NEWNET) < 0)
		return fail(failure, errno, "enter the network namespace");
	struct nl_sock *socket = NULL;
	result = open_socket(&socket);
	go_home(host);
	if (result < 0)
		return fail(failure, -result, "open a route netlink socket in the namespace");
	result = configure_inside(socket, eth0, failure);
	nl->nl_socket_free(socket);
	return result;
}

static int create_bridge(struct nl_sock *socket, const char *name)
{
	struct rtnl_link *bridge = nl->rtnl_link_bridge_alloc();
	if (!bridge)
		return -ENOMEM;
	nl->rtnl_link_set_name(bridge, name);
	int result = nl->rtnl_link_add(socket, bridge, NLM_F_CREATE | NLM_F_EXCL);
	nl->rtnl_link_put(bridge);
	return result < 0 ? -errno_of(result) : 0;
}

int network_bridge_open(struct network_host *host, const char *name, uint32_t gateway,
			unsigned prefix_length, bool *created, bool *address_added, int *ifindex,
			struct network_failure *failure)
{
	*created = *address_added = false;
	int result = host_open(host, failure);
	if (result < 0)
		return result;
	struct rtnl_link *link = NULL;
	result = find_link(host->socket, name, &link);
	if (result == -ENODEV || result == -ENOENT) {
		result = create_bridge(host->socket, name);
		if (result < 0)
			return fail(failure, -result, "create bridge %s", name);
		*created = true;
		result = find_link(host->socket, name, &link);
	}
	if (result < 0)
		return fail(failure, -result, "find bridge %s", name);
	if (!*created && !nl->rtnl_link_is_bridge(link)) {
		nl->rtnl_link_put(link);
		return fail(failure, EEXIST, "use %s as the bridge (it is not one)", name);
	}
	*ifindex = nl->rtnl_link_get_ifindex(link);
	result = set_up(host->socket, link);
	nl->rtnl_link_put(link);
	if (result < 0)
		return fail(failure, -result, "bring bridge %s up", name);
	result = change_address(host->socket, *ifindex, gateway, prefix_length, true);
	if (result == -EEXIST && !*created)
		return 0; /* a bridge that was there with our address */
	if (result < 0) {
		char shown[16];
		network_address_format(gateway, shown);
		return fail(failure, -result, "add address %s/%u to bridge %s", shown,
			    prefix_length, name);
	}
	*address_added = !*created;
	return 0;
}

int network_bridge_close(struct network_host *host, const char *name, uint32_t gateway,
			 unsigned prefix_length, bool created, bool address_added,
			 struct network_failure *failure)
{
	if (created)
		return network_link_delete(host, name, failure);
	if (!address_added)
		return 0;
	struct rtnl_link *link = NULL;
	int result = find_link(host->socket, name, &link);
	if (result == 0)
		result = change_address(host->socket, nl->rtnl_link_get_ifindex(link), gateway,
					prefix_length, false);
	nl->rtnl_link_put(link);
	if (result < 0 && result != -ENODEV && result != -EADDRNOTAVAIL)
		return fail(failure, -result, "remove corral's address from bridge %s", name);
	return 0;
}

/* A veth pair: `host_name` in corral's namespace, up, on the bridge
 * `bridge_ifindex`; its peer made straight into `netns_fd` as eth0. */
static int veth_add(struct network_host *host, const char *host_name, int bridge_ifindex,
		    int netns_fd, struct network_failure *failure)
{
	int result = host_open(host, failure);
	if (result < 0)
		return result;
	struct rtnl_link *veth = nl->rtnl_link_veth_alloc();
	if (!veth)
		return fail(failure, ENOMEM, "create veth %s", host_name);
	/* One request: the host end named, on the bridge and up; the peer
	 * made in the task's namespace, where eth0 is free whatever the
	 * host has. */
	nl->rtnl_link_set_name(veth, host_name);
	nl->rtnl_link_set_master(veth, bridge_ifindex);
	nl->rtnl_link_set_flags(veth, IFF_UP);
	struct rtnl_link *peer = nl->rtnl_link_veth_get_peer(veth);
	nl->rtnl_link_set_name(peer, "eth0");
	nl->rtnl_link_set_ns_fd(peer, netns_fd);
	nl->rtnl_link_put(peer);
	result = nl->rtnl_link_add(host->socket, veth, NLM_F_CREATE | NLM_F_EXCL);
	nl->rtnl_link_veth_release(veth);
	if (result < 0)
		return fail(failure, errno_of(result), "create veth %s", host_name);
	return 0;
}

int network_namespace_connect(struct network_host *host, int netns_fd, const char *veth_name,
			      int bridge_ifindex, const struct network_interface *eth0,
			      bool *veth_exists, struct network_failure *failure)
{
	if (eth0) {
		int result = veth_add(host, veth_name, bridge_ifindex, netns_fd, failure);
		if (result < 0)
			return result;
		*veth_exists = true;
	}
	return namespace_configure(host, netns_fd, eth0, failure);
}

void network_veth_name(char name[IF_NAMESIZE], const char *owner)
{
	char key[160];
	uint32_t hash = 2166136261u;

	snprintf(key, sizeof(key), "%d/%s", (int)getpid(), owner);
	for (const char *text = key; *text; text++)
		hash = (hash ^ (unsigned char)*text) * 16777619u;
	snprintf(name, IF_NAMESIZE, "cr%08x", hash);
}

int network_link_delete(struct network_host *host, const char *name,
			struct network_failure *failure)
{
	int result = host_open(host, failure);
	if (result < 0)
		return result;
	struct rtnl_link *link = nl->rtnl_link_alloc();
	if (!link)
		return fail(failure, ENOMEM, "delete %s", name);
	nl->rtnl_link_set_name(link, name);
	result = nl->rtnl_link_delete(host->socket, link);
	nl->rtnl_link_put(link);
	if (result < 0 && errno_of(result) != ENODEV && errno_of(result) != ENOENT)
		return fail(failure, errno_of(result), "delete %s", name);
	return 0;
}
