/* c-ares, loaded the first time corral resolves a host name (a `wait_for`
 * target such as db:5432), not when it starts (isolation/library_loader.h):
 * a config without one never maps it. name_resolver.c calls it only
 * through this table. Why c-ares and not getaddrinfo(3): corral's loop
 * must never block on DNS, getaddrinfo_a runs threads beside a supervisor
 * that clones its tasks with raw clone(2), and a static corral cannot load
 * glibc's NSS modules; docs/dependencies.md. */
#pragma once

#include <stddef.h>

#include <ares.h>

#include "isolation/library_loader.h"

/* The soname of the c-ares the header describes (Debian: libc-ares2). */
#define RESOLVER_LIBRARY_SONAME "libcares.so.2"

/* Every c-ares function corral calls. */
#define RESOLVER_FUNCTIONS(X)                                                                      \
	X(ares_destroy)                                                                            \
	X(ares_freeaddrinfo)                                                                       \
	X(ares_getaddrinfo)                                                                        \
	X(ares_init_options)                                                                       \
	X(ares_library_init)                                                                       \
	X(ares_process_fd)                                                                         \
	X(ares_strerror)                                                                           \
	X(ares_timeout)

struct resolver_library {
	RESOLVER_FUNCTIONS(LIBRARY_MEMBER)
};

/* The table, loaded on the first call and kept for corral's life; NULL when
 * c-ares cannot be loaded, with the loader's reason in `error`. */
const struct resolver_library *resolver_library_load(char *error, size_t error_size);
