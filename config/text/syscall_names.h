/* How the config checks `isolation.seccomp` syscall names: through a table
 * its caller hands in (isolation/seccomp_syscall_names.c gives libseccomp's),
 * so that config/ links no kernel library and stays a pure parser. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct syscall_table {
	/* 0 when names can be looked up, else -1 with why not in `error`
	 * ("load libseccomp.so.2: ..."). Called before the first lookup. */
	int (*prepare)(char *error, size_t error_size);
	/* Whether `name` is a syscall of the native architecture. */
	bool (*is_known)(const char *name);
	/* The native name of syscall `number` (malloc'd), or NULL. */
	char *(*name_of)(int number);
};

/* The table every later load uses. Without one, a config that lists
 * syscall names is refused, saying that they cannot be checked. */
void config_use_syscall_names(const struct syscall_table *table);
