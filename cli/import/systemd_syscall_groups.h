/* systemd's system call groups (systemd.exec(5), "SystemCallFilter="), as
 * data generated from systemd-analyze (systemd_syscall_groups_data.c), and
 * their expansion into syscall names for isolation.seccomp. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct systemd_syscall_group {
	const char *name;  /* "@system-service" */
	const char *calls; /* space-separated names and @groups */
};

extern const struct systemd_syscall_group systemd_syscall_groups[];
extern const char systemd_syscall_groups_version[];

/* A set of syscall names, in the order first added. */
struct syscall_set {
	char **names;
	size_t count;
};

/* Adds NAME (a syscall, or an @group expanded, nested groups too) to
 * `set`, or removes it with `remove`. false for an unknown @group. */
bool syscall_set_apply(struct syscall_set *set, const char *name, bool remove);
bool syscall_set_has(const struct syscall_set *set, const char *name);
void syscall_set_free(struct syscall_set *set);
