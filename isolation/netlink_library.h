/* libnl-route, loaded the first time corral needs netlink (a bridge or a
 * group network), not when corral starts (library_loader.h). Its
 * constructors register some hundred object types and read
 * /etc/libnl/classid, which kept about 570 KiB of its pages resident in a
 * supervisor that never makes a bridge. network.c calls libnl only
 * through this table. */
#pragma once

#include <stddef.h>

#include "isolation/library_loader.h"

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/bridge.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>

/* The soname of the libnl-route the headers describe (Debian: libnl-route-3-200).
 * It depends on libnl-3, which the loader brings in with it. */
#define NETLINK_LIBRARY_SONAME "libnl-route-3.so.200"

/* Every libnl function corral calls. */
#define NETLINK_FUNCTIONS(X)                                                                       \
	X(nl_addr_build)                                                                           \
	X(nl_addr_put)                                                                             \
	X(nl_addr_set_prefixlen)                                                                   \
	X(nl_connect)                                                                              \
	X(nl_socket_alloc)                                                                         \
	X(nl_socket_free)                                                                          \
	X(rtnl_addr_add)                                                                           \
	X(rtnl_addr_alloc)                                                                         \
	X(rtnl_addr_delete)                                                                        \
	X(rtnl_addr_put)                                                                           \
	X(rtnl_addr_set_family)                                                                    \
	X(rtnl_addr_set_ifindex)                                                                   \
	X(rtnl_addr_set_local)                                                                     \
	X(rtnl_addr_set_prefixlen)                                                                 \
	X(rtnl_link_add)                                                                           \
	X(rtnl_link_alloc)                                                                         \
	X(rtnl_link_bridge_alloc)                                                                  \
	X(rtnl_link_change)                                                                        \
	X(rtnl_link_delete)                                                                        \
	X(rtnl_link_get_ifindex)                                                                   \
	X(rtnl_link_get_kernel)                                                                    \
	X(rtnl_link_is_bridge)                                                                     \
	X(rtnl_link_put)                                                                           \
	X(rtnl_link_set_flags)                                                                     \
	X(rtnl_link_set_master)                                                                    \
	X(rtnl_link_set_name)                                                                      \
	X(rtnl_link_set_ns_fd)                                                                     \
	X(rtnl_link_veth_alloc)                                                                    \
	X(rtnl_link_veth_get_peer)                                                                 \
	X(rtnl_link_veth_release)                                                                  \
	X(rtnl_route_add)                                                                          \
	X(rtnl_route_add_nexthop)                                                                  \
	X(rtnl_route_alloc)                                                                        \
	X(rtnl_route_nh_alloc)                                                                     \
	X(rtnl_route_nh_free)                                                                      \
	X(rtnl_route_nh_set_gateway)                                                               \
	X(rtnl_route_nh_set_ifindex)                                                               \
	X(rtnl_route_put)                                                                          \
	X(rtnl_route_set_dst)                                                                      \
	X(rtnl_route_set_family)                                                                   \
	X(rtnl_route_set_table)

struct netlink_library {
	NETLINK_FUNCTIONS(LIBRARY_MEMBER)
};

/* The table, loaded on the first call and kept for corral's life; NULL when
 * libnl cannot be loaded, with the loader's reason in `error`. */
const struct netlink_library *netlink_library_load(char *error, size_t error_size);
