/* libseccomp, loaded the first time corral builds a filter or checks a
 * syscall name (library_loader.h): a supervisor whose tasks have no
 * isolation, and every CLI call, go without it. seccomp_profile.c and
 * config_seccomp.c call it only through this table. */
#pragma once

#include <stddef.h>

#include <seccomp.h>

#include "isolation/library_loader.h"

/* The soname of the libseccomp the header describes (Debian: libseccomp2). */
#define SECCOMP_LIBRARY_SONAME "libseccomp.so.2"

/* Every libseccomp function corral calls. */
#define SECCOMP_FUNCTIONS(X)                                                                       \
	X(seccomp_arch_add)                                                                        \
	X(seccomp_arch_native)                                                                     \
	X(seccomp_attr_set)                                                                        \
	X(seccomp_export_bpf)                                                                      \
	X(seccomp_init)                                                                            \
	X(seccomp_release)                                                                         \
	X(seccomp_rule_add)                                                                        \
	X(seccomp_syscall_resolve_name)                                                            \
	X(seccomp_syscall_resolve_num_arch)

struct seccomp_library {
	SECCOMP_FUNCTIONS(LIBRARY_MEMBER)
};

/* The table, loaded on the first call and kept for corral's life; NULL when
 * libseccomp cannot be loaded, with the loader's reason in `error`. */
const struct seccomp_library *seccomp_library_load(char *error, size_t error_size);
