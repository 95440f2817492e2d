/* The mounts of one start of a task with a mount namespace, worked out in
 * corral before the clone (mount_plan.c) and applied by the child with raw
 * syscalls (mount_apply.c).
 *
 * A plan is a list of steps with every string they need. It comes from the
 * task's `isolation` (rootfs, mounts, devices) and from what the prestart
 * hooks added to this start (struct start_additions): a hook's mount is a
 * configured one, through the same code.
 *
 * The child's order (docs/decisions.md, "Isolation"):
 *   1. with a rootfs, the rootfs bound onto itself (recursively), so that it
 *      is a mount point pivot_root takes; without, the host's / (in the
 *      task's own mount namespace);
 *   2. with a rootfs: /proc (a new instance with a pid namespace, else the
 *      host's bound), /sys bound read-only, and a minimal /dev: a tmpfs with
 *      null, zero, full, random, urandom and tty bound from the host's,
 *      /dev/pts (a new devpts instance) with /dev/ptmx, /dev/shm, /dev/mqueue
 *      (with an ipc namespace), and the fd, stdin, stdout, stderr links;
 *   3. the configured mounts, then the hooks' mounts;
 *   4. the devices (configured, then the hooks'), bound at their targets;
 *   5. with a rootfs, pivot_root into it; the host's tree is detached.
 * Then spawn_isolation.c hides the OCI masked paths, makes the kernel's
 * knobs read-only, and, with readonly_rootfs, the root itself.
 *
 * Every target is resolved inside the root (openat2 RESOLVE_IN_ROOT): a
 * symlink in the rootfs pointing at /etc leads to the rootfs' /etc, never
 * the host's. Missing directories (or a file, for a bind of a file) are
 * made on the way. Mounts are made with the new mount API (open_tree,
 * fsopen, fsmount, move_mount) onto the resolved fd, so nothing is looked
 * up by path twice. Everything lives in the task's mount namespace and
 * goes with it: a start that fails half-way leaves nothing on the host. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/model/config.h"

enum mount_step_kind {
	MOUNT_STEP_BIND,    /* `source` (a host path) at `target` */
	MOUNT_STEP_FS,      /* a new file system of `type` at `target` */
	MOUNT_STEP_SYMLINK, /* `target` made a symlink to `source` */
};

struct mount_step {
	enum mount_step_kind kind;
	bool device;  /* a bind of a device node (for messages) */
	char *type;   /* FS: "tmpfs", "proc", ... */
	char *source; /* BIND: the host path; FS: fsconfig's "source", or NULL;
		       * SYMLINK: the link's text */
	char *target; /* absolute, resolved inside the root */
	/* FS: fsconfig keys and, at the same index, values (NULL: a flag
	 * such as "newinstance"). NULL-terminated keys, or NULL. */
	char **option_keys;
	char **option_values;
	bool recursive;      /* BIND: with the mounts below source */
	bool target_is_file; /* a missing target is made a file, not a directory */
	bool readonly;       /* recursively */
	/* MOUNT_ATTR_NOSUID, ...: FS, given to fsmount; BIND, set on the
	 * bound tree (recursively) once it is attached. */
	uint64_t attributes;
	unsigned long propagation; /* MS_PRIVATE|MS_SLAVE|MS_SHARED [|MS_REC]; 0: keep */
	/* BIND, propagation bidirectional: the tree is cloned while the new
	 * namespace's copy of the host's (shared) source is still its peer,
	 * before everything is made private (mount_plan_hold_shared); the
	 * clone stays in the host's peer group. */
	bool shared_with_host;
};

struct mount_plan {
	char *rootfs; /* NULL: the host's / */
	bool readonly_rootfs;
	struct mount_step *steps;
	size_t step_count;
	size_t capacity;
	bool has_additions; /* built with a start's additions: rebuild next time */
};

/* From the task's isolation and this start's additions (NULL: none).
 * Returns 0, or -1 with `error` naming the mount that cannot be made (a
 * hook's relative target, say). On failure the plan is empty. */
int mount_plan_build(struct mount_plan *plan, const struct isolation_config *config,
		     const struct start_additions *additions, char *error, size_t error_size);
void mount_plan_free(struct mount_plan *plan);

/* "bind /srv/data on /data", "mount tmpfs on /tmp", "symlink /dev/ptmx":
 * what step `index` does, for messages. */
void mount_plan_describe_step(const struct mount_plan *plan, int index, char *buffer, size_t size);

/* A failed step, as messages show it after the task's name:
 * "bind /srv/data on /data: No such file or directory",
 * "pivot_root into /srv/app/rootfs: Invalid argument". `stage` is the
 * SPAWN_STAGE_* the child reported, `reason` strerror's text. */
void mount_plan_describe_failure(const struct mount_plan *plan, int stage, int index,
				 const char *reason, char *buffer, size_t size);

/* Child side (mount_apply.c), raw syscalls only. What failed is said by
 * *stage (a SPAWN_STAGE_*) and *index (the step).
 *
 * First, before the namespace is made private: a detached clone of each
 * shared_with_host step's source, in step order, into held[]. */
int mount_plan_hold_shared(const struct mount_plan *plan, int held[MOUNT_BIDIRECTIONAL_MAX],
			   int *stage, int *index);
/* Then the steps; the shared ones attach what was held. */
int mount_plan_apply(const struct mount_plan *plan, const int held[MOUNT_BIDIRECTIONAL_MAX],
		     int *stage, int *index);
