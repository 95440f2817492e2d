/* libnl loaded when first needed: see netlink_library.h. */
#include "isolation/netlink_library.h"

LIBRARY_LOADER(netlink_library_load, netlink_library, NETLINK_FUNCTIONS, NETLINK_LIBRARY_SONAME)
