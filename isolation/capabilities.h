/* A task's capabilities: worked out in corral before the clone
 * (capability_plan_build), applied by the child with raw syscalls.
 *
 * The child's order, and why:
 *   1. capability_plan_apply_bounding: drop from the bounding set every
 *      capability not kept. It needs CAP_SETPCAP, so it comes while the
 *      child still has everything.
 *   2. capability_plan_apply_keepcaps (a task running as a non-root uid):
 *      PR_SET_KEEPCAPS, so that setuid away from 0 keeps the permitted set.
 *   3. setgroups, setgid, setuid (spawn.c).
 *   4. capability_plan_apply_sets: capset (effective, permitted, inheritable
 *      = the kept set), then, for a non-root uid, each kept capability into
 *      the ambient set: without it, exec of an ordinary file would clear
 *      them all. Root keeps them across exec through the bounding set.
 *   5. no_new_privs, 6. the seccomp filter (seccomp_profile.h), 7. execve.
 *
 * The child functions share corral's memory (CLONE_VM) and run while it
 * waits: they call the kernel through syscall() only, allocate nothing and
 * are not instrumented by sanitizers (see spawn.c). */
#pragma once

#include <linux/capability.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct capability_plan {
	unsigned last_cap;  /* the highest capability this kernel knows */
	uint64_t keep;      /* bounding, permitted, effective and inheritable */
	bool raise_ambient; /* a non-root task: keep them across exec as ambient */
	/* corral may not trim the bounding set (no CAP_SETPCAP): the task
	 * inherits corral's, harmless with no_new_privs (own_privileges.c). */
	bool leave_bounding_set;
	struct __user_cap_header_struct header; /* ready for capset */
	struct __user_cap_data_struct data[2];
};

/* `keep`: bit N keeps capability N; bits the kernel does not know are
 * ignored. `non_root_user`: the task will run as a uid other than 0. */
void capability_plan_build(uint64_t keep, bool non_root_user, struct capability_plan *plan);

enum capability_stage {
	CAPABILITY_STAGE_BOUNDING,
	CAPABILITY_STAGE_KEEPCAPS,
	CAPABILITY_STAGE_CAPSET,
	CAPABILITY_STAGE_AMBIENT,
};

struct capability_failure {
	enum capability_stage stage;
	unsigned capability; /* BOUNDING and AMBIENT: the one that failed */
};

/* Child side. Each returns 0, or -errno with *failure filled. */
int capability_plan_apply_bounding(const struct capability_plan *plan,
				   struct capability_failure *failure);
int capability_plan_apply_keepcaps(const struct capability_plan *plan,
				   struct capability_failure *failure);
int capability_plan_apply_sets(const struct capability_plan *plan,
			       struct capability_failure *failure);

/* Parent side: e.g. "drop cap_sys_admin from the bounding set: Operation
 * not permitted". */
void capability_failure_describe(const struct capability_failure *failure, int error, char *buffer,
				 size_t size);
