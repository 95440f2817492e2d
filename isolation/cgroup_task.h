/* One task's cgroups: its v2 leaf root/<group>/<task> (always, when the
 * tree is on) and, on hybrid hosts, v1 groups for the limits only v1 can
 * enforce. Made before the task's first start and kept across restarts;
 * removed when the task is dead for good. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/model/config.h"
#include "isolation/cgroup_tree.h"

#define TASK_CGROUP_V1_MAX                                                                         \
	5 /* the limits' controllers (cgroup_limits.c): memory, cpu, pids, cpuset, blkio */

struct task_cgroup_v1 {
	char *controller;
	char *path; /* relative to the hierarchy's mount, as libcgroup takes it */
	/* Absolute .../tasks, which a child joins by writing "0": its one
	 * thread, so the whole process (see spawn.c, join_v1_cgroups). */
	char *join_path;
	bool memory; /* the memory controller's group: OOM and stats */
};

struct task_cgroup {
	/* The v2 leaf is reached as parent_fd + "NAME/file": corral keeps no
	 * fd of its own per task (a spawn or cgroup.kill opens the directory
	 * for the moment it needs it). */
	bool made;        /* the v2 leaf exists; false when the task has none */
	int parent_fd;    /* its group's directory (not owned) */
	const char *name; /* the leaf's name, inside `path` */
	char *path;       /* its absolute path, for messages */
	/* Relative to the v2 mount, as libcgroup takes it: the tail of
	 * `path` (or "/"), not a copy of its own. */
	const char *v2_relative;
	/* Its v1 groups (hybrid hosts, limits v2 cannot enforce): room for
	 * TASK_CGROUP_V1_MAX, allocated with the first; NULL for most tasks. */
	struct task_cgroup_v1 *v1;
	size_t v1_count;
	/* NULL-terminated join_path of each v1 group, for the spawn. */
	char **v1_join_paths;
	bool v2_memory; /* memory.events and memory.current are there */
	bool v2_pids;
	/* cgroup.kill was written. Some kernels (6.18 here) then kill every
	 * process cloned into the cgroup with CLONE_INTO_CGROUP (its kill
	 * counter differs from the parent's): the next run needs a fresh one. */
	bool killed;
	uint64_t oom_kills_at_start; /* the OOM counter when the current run began */
	/* Kills the counters show that were of `corral exec` commands, not of
	 * the task: an exec's session cgroup has no memory controller of its
	 * own (v2 keeps the leaf's subtree_control empty; v1 has the task's
	 * group only), so its kills land in the task's counters. */
	uint64_t oom_kills_of_execs;
};

void task_cgroup_init(struct task_cgroup *cgroup);

/* Makes the task's cgroups and writes its limits. A negative errno with
 * `error` on failure: the cgroup's own mkdir or open gives its errno (so
 * that EMFILE or ENOMEM is seen as corral short of a resource, and the
 * start tried again), a limit that cannot be applied -EINVAL ("resources:
 * cpuset \"0-63\": cpuset.cpus: Invalid argument"); nothing is left
 * behind then. `warning` is set (else empty) when optional limits had no
 * controller. */
int task_cgroup_create(struct task_cgroup *cgroup, struct cgroup_tree *tree, int group_fd,
		       const char *group_name, const char *task_name,
		       const struct resources_config *resources, char *error, size_t error_size,
		       char *warning, size_t warning_size);

bool task_cgroup_exists(const struct task_cgroup *cgroup);

/* The v2 leaf's directory, for a spawn into it (CLONE_INTO_CGROUP) or a
 * BPF attach; the caller closes it. -errno on failure. */
int task_cgroup_open_dir(const struct task_cgroup *cgroup);

/* Opens one of the v2 leaf's files (flags as for open). -errno on failure. */
int task_cgroup_open_file(const struct task_cgroup *cgroup, const char *file, int flags);

/* The task's v1 group of `controller` (mounted on a v1 hierarchy), made on
 * first use; the child joins it at the next spawn. NULL with `error`. */
struct task_cgroup_v1 *task_cgroup_v1_group(struct task_cgroup *cgroup, struct cgroup_tree *tree,
					    const char *controller, const char *group_name,
					    const char *task_name, char *error, size_t error_size);

/* A limit a reload could not write, in parts a reply can name: the
 * config key ("memory") and the kernel's words ("memory.max: Device or
 * resource busy"), or why the limit cannot be planned at all. */
struct limit_refusal {
	char resource[32];
	char reason[256];
};

/* Writes `resources` to the live cgroup (reload). Nothing when it is not
 * made yet. -1 with `error` naming the limit the kernel refused (memory
 * below what the task uses, say), and the same in `refusal` in parts; the
 * ones before it are written. */
int task_cgroup_update_limits(struct task_cgroup *cgroup, struct cgroup_tree *tree,
			      const char *group_name, const char *task_name,
			      const struct resources_config *resources,
			      struct limit_refusal *refusal, char *error, size_t error_size);

/* Kills every process in the task's cgroups (cgroup.kill). 0 or -errno. */
int task_cgroup_kill(struct task_cgroup *cgroup);

/* `signal_number` to every process of the task's cgroup but `except` (0:
 * none): kill.mode control-group. 0, or -errno. */
int task_cgroup_signal(struct task_cgroup *cgroup, int signal_number, pid_t except);

/* Whether any process is left in the v2 leaf. */
bool task_cgroup_populated(const struct task_cgroup *cgroup);

/* Opens the v2 leaf's cgroup.events for the loop to watch (EPOLLPRI on
 * every change). -errno on failure. */
int task_cgroup_open_events(const struct task_cgroup *cgroup);

/* Processes the OOM killer killed in the task's cgroup so far (v2
 * memory.events oom_kill, v1 memory.oom_control oom_kill). */
uint64_t task_cgroup_oom_kills(const struct task_cgroup *cgroup);
/* The same less the kills charged to exec commands (oom_kills_of_execs):
 * the task's own. */
uint64_t task_cgroup_own_oom_kills(const struct task_cgroup *cgroup);

struct task_cgroup_stats {
	bool has_cpu, has_memory, has_memory_peak, has_pids;
	uint64_t cpu_usec;
	uint64_t memory_current, memory_peak; /* bytes */
	uint64_t pids_current;
};

/* Reads the task's usage now. */
void task_cgroup_stats(const struct task_cgroup *cgroup, struct task_cgroup_stats *stats);

/* Kills what is left and removes the cgroups. */
void task_cgroup_remove(struct task_cgroup *cgroup, struct cgroup_tree *tree);
