/* An isolated task's spawn, prepared once when corral starts (as
 * task_plan.c does for the environment and ids): the clone flags, the
 * capability plan and the seccomp program are worked out in corral, so
 * that the child only applies them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/model/config.h"
#include "isolation/capabilities.h"
#include "isolation/seccomp_profile.h"
#include "isolation/spawn.h"
#include "isolation/spawn_isolation.h"
#include "isolation/task_plan.h"
#include "isolation/user_namespace.h"

struct task_isolation {
	bool enabled; /* the task has an `isolation:` map */
	struct spawn_isolation spawn;
	struct capability_plan capabilities;
	struct seccomp_program seccomp; /* a custom profile's own */
	bool shares_default_seccomp;    /* the default profile: one for all */
	char **reaper_argv;             /* owned array; the strings are the task's, but
					 * for the --status-fd option (owned) */
	/* The fd the reaper reports on (its argv's --status-fd=N); 0 without
	 * a reaper. */
	int reaper_status_target;
	struct mount_plan mounts; /* with a mount namespace */
	struct user_namespace_maps user_maps;
	/* In a user namespace corral sets the rlimits, not the child. */
	const struct rlimit_config *parent_rlimits;
	size_t parent_rlimit_count;
};

/* A task of network mode none without a user namespace: its child joins
 * a namespace corral made ahead, lo up (supervisor/tasks/network_spares.h),
 * rather than cloning one. In a user namespace the network namespace must
 * belong to the new user namespace, so it is cloned with it. */
bool task_isolation_takes_spare_network(const struct isolation_config *config);

/* 0, or -1 with `error` (a seccomp profile that cannot be built). */
int task_isolation_build(struct task_isolation *isolation, const struct task_config *task,
			 const struct task_plan *plan, char *error, size_t error_size);

/* Before a start: the mount plan again when this start's additions (the
 * prestart hooks' mounts and devices) differ from the last, so that they
 * are mounted as configured ones are. 0, or -1 with `error` (a hook's
 * mount that cannot be made). */
int task_isolation_refresh_mounts(struct task_isolation *isolation, const struct task_config *task,
				  const struct start_additions *additions, char *error,
				  size_t error_size);
/* corral's work between the clone and the child's setup, for
 * spawn_request.between (context: the struct task_isolation); NULL when the
 * task needs none and takes the vfork fast path. */
spawn_between_fn *task_isolation_between(const struct task_isolation *isolation);

/* The reaper execs the command by its path: follow the plan's. */
void task_isolation_refresh(struct task_isolation *isolation, const struct task_plan *plan);

void task_isolation_free(struct task_isolation *isolation);
