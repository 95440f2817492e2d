/* What an isolated task's child does between clone and exec, beyond the
 * plain spawn: namespaces, mounts, hostname, loopback, limits, privileges
 * and the seccomp filter. Everything is prepared by corral before the
 * clone (task_plan); the child runs raw syscalls only (see spawn.c).
 *
 * The order, fixed (docs/decisions.md, "Isolation"):
 *   1. the cgroup namespace (unshared here, once the child is in its own
 *      cgroup, so that the namespace's root is the task's cgroup);
 *   2. mount: private propagation on /, then a fresh /proc when the task
 *      also has a pid namespace (without a rootfs), then the mount plan
 *      (mount_plan.h: rootfs, /proc, /sys, /dev, the mounts, the devices,
 *      pivot_root), then the OCI default masked paths hidden, corral's
 *      control socket hidden (unless the task may use it), /sys (the
 *      cgroup file system with it) and /proc's kernel knobs made
 *      read-only, and with readonly_rootfs, / itself;
 *   3. hostname (uts), loopback up (net);
 *   4. rlimits, umask;
 *   5. the capability bounding set (it needs CAP_SETPCAP, so before the
 *      sets drop it), and keep-caps across the uid change;
 *   -- the uid/gid change (spawn.c) --
 *   6. capability sets and the ambient set, no_new_privs;
 *   -- fds marked CLOEXEC, readiness fd (spawn.c) --
 *   7. the seccomp filter, last: only execve follows it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/model/config.h"
#include "isolation/capabilities.h"
#include "isolation/mount_plan.h"
#include "isolation/seccomp_profile.h"

struct spawn_isolation {
	unsigned long clone_flags; /* CLONE_NEWPID|NEWNS|NEWUTS|NEWIPC|NEWNET */
	bool new_cgroup_namespace;
	bool fresh_proc;                 /* pid + mount namespaces, no rootfs */
	bool mask_proc;                  /* the OCI masked paths: the task's own /proc */
	const struct mount_plan *mounts; /* with a mount namespace */
	/* With a mount namespace: corral's control socket, covered with
	 * /dev/null so that a task that may not use it does not see it
	 * (supervisor/control/control_server.h); NULL: left as it is. */
	const char *hidden_control_socket;
	const char *hostname; /* NULL: keep */
	size_t hostname_length;
	bool loopback_up;            /* net namespace */
	bool join_network_namespace; /* network bridge, group: setns to the
				      * request's netns_fd, first thing */
	const struct rlimit_config *rlimits;
	size_t rlimit_count;
	int umask;                                  /* -1: keep */
	const struct capability_plan *capabilities; /* NULL: keep corral's */
	bool no_new_privileges;
	const struct seccomp_program *seccomp; /* NULL or empty: none */
	/* Non-NULL: the pid namespace's PID 1 is corral's reaper, exec'd from
	 * its memfd (spawn_slots) with this argv; the command runs under it. */
	char *const *reaper_argv;
};

/* Child side. Each returns 0, or -errno with *stage (and *index for an
 * rlimit) saying which step failed. */
int spawn_isolation_before_ids(const struct spawn_isolation *isolation, int *stage, int *index);
int spawn_isolation_after_ids(const struct spawn_isolation *isolation, int *stage, int *index);
int spawn_isolation_seccomp(const struct spawn_isolation *isolation, int *stage);

/* The limits alone, for a spawn that joins a task (spawn.h, spawn_join):
 * they are set before its user namespace is, where a hard limit could not
 * be raised. */
int spawn_isolation_set_rlimits(const struct rlimit_config *rlimits, size_t count, int *stage,
				int *index);

/* For messages: the path of a failed SPAWN_STAGE_READ_ONLY / _MASK. */
const char *spawn_isolation_read_only_path(int index);
const char *spawn_isolation_masked_path(int index);
