/* libnl loaded when first needed: see netlink_library.h. */
#include "isolation/netlink_library.h"

#include <stdio.h>

#ifdef CORRAL_NETLINK_LINKED

const struct netlink_library *netlink_library_load(char *error, size_t error_size)
{
	(void)error;
	(void)error_size;
#define NETLINK_LIBRARY_LINKED(name) .name = name,
	static const struct netlink_library linked = {NETLINK_FUNCTIONS(NETLINK_LIBRARY_LINKED)};
#undef NETLINK_LIBRARY_LINKED
	return &linked;
}

#else

#include <dlfcn.h>

static struct netlink_library loaded;
static void *handle;

/* Each name looked up in libnl-route and the libnl-3 it depends on. */
static int resolve(char *error, size_t error_size)
{
#define NETLINK_LIBRARY_RESOLVE(name)                                                              \
	if (!(loaded.name = (__typeof__(name) *)dlsym(handle, #name))) {                           \
		snprintf(error, error_size, "%s has no %s", NETLINK_LIBRARY_SONAME, #name);        \
		return -1;                                                                         \
	}
	NETLINK_FUNCTIONS(NETLINK_LIBRARY_RESOLVE)
#undef NETLINK_LIBRARY_RESOLVE
	return 0;
}

const struct netlink_library *netlink_library_load(char *error, size_t error_size)
{
	if (handle)
		return &loaded;
	/* RTLD_NOW: a missing symbol fails here, not in the middle of a
	 * bridge's set-up. The library stays loaded for corral's life. */
	handle = dlopen(NETLINK_LIBRARY_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		snprintf(error, error_size, "%s", dlerror());
		return NULL;
	}
	if (resolve(error, error_size) < 0) {
		dlclose(handle);
		handle = NULL;
		return NULL;
	}
	return &loaded;
}

#endif
