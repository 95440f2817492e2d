/* corral's own cgroup tree: found at start, removed at exit.
 *
 * corral finds its cgroup in the v2 hierarchy (/sys/fs/cgroup, or
 * /sys/fs/cgroup/unified on hybrid hosts). When it owns that cgroup (it is
 * the machine's init, or alone in a cgroup of its own, as PID 1 of a
 * container with a cgroup namespace is), the cgroup is the tree's root.
 * When others share it (a shell's session, the root of a hybrid host's
 * unified tree), corral makes a root of its own below it,
 * `corral-<pid>-<random>`, so that several corrals never meet. Either way:
 *
 *     root/supervisor       corral itself (a leaf: v2 allows no processes
 *                           where controllers are enabled for children)
 *     root/<group>/<task>   one leaf per task
 *
 * When the hierarchy cannot be written (a container whose /sys/fs/cgroup
 * is read-only, as runc's and Docker's defaults give), the tree is off:
 * `off_reason` says why and how to turn it on, and tasks run without
 * cgroups of their own. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef void (*cgroup_log_function)(const char *format, ...) __attribute__((format(printf, 1, 2)));

struct cgroup_tree {
	bool enabled;
	char off_reason[1024];

	char *mount_path;    /* the v2 hierarchy: "/sys/fs/cgroup/unified" */
	char *base_path;     /* corral's cgroup when it started, absolute */
	char *instance_name; /* NULL when corral owns base, else "corral-..." */
	char *root_path;     /* base, or base/instance_name */
	/* The root as /proc/PID/cgroup's "0::" line shows it ("" when it is
	 * the hierarchy's root, "/a/corral-1-ab"); NULL when unknown. */
	char *proc_root_path;
	int base_fd;
	int root_fd;
	/* v2 controllers enabled for the groups and tasks: "cpu memory pids" */
	char controllers[256];
	/* Below corral's cgroup in each v1 hierarchy: "" or "/corral-..." */
	const char *v1_suffix;

	cgroup_log_function log;
	/* Whose instance roots this corral may take for its own stale ones
	 * (its config's path, kept on its root as an xattr); NULL: none,
	 * every earlier instance is left alone (one-command mode). */
	const char *owner;

	/* What close removes besides the v2 tree. */
	const char *const *group_names;
	size_t group_count;
	char *v1_roots[8]; /* corral's own cgroup (+ suffix) in each v1 hierarchy used */
	size_t v1_root_count;
};

/* Finds or makes the tree and moves corral into root/supervisor. Leftovers
 * of an earlier corral that died are killed and removed, with a warning:
 * `group_names` are the groups an owning corral may find there; beside
 * other corrals, only the roots of an earlier corral of the same `owner`
 * (see the struct). Never fails: when cgroups cannot be used,
 * tree->enabled is false. */
/* A process that goes into corral's supervisor leaf with it (corral's
 * keeper, docs/decisions.md "corral outlives its own death"); 0:
 * none. Set before cgroup_tree_open. */
void cgroup_tree_move_with(pid_t pid);

void cgroup_tree_open(struct cgroup_tree *tree, bool machine_init, const char *const *group_names,
		      size_t group_count, const char *owner, cgroup_log_function log);

/* What an earlier cgroup_tree_open of the same process found and made,
 * as `corral upgrade` hands it over. */
struct cgroup_tree_found {
	bool enabled;
	const char *off_reason;
	const char *mount_path, *base_path, *instance_name, *proc_root_path;
	const char *controllers;
	const char *const *v1_roots;
	size_t v1_root_count;
};

/* The tree of `found` opened again, without a look for leftovers and
 * without a move (corral is in root/supervisor already): 0, or -errno
 * when a directory cannot be opened. */
int cgroup_tree_reopen(struct cgroup_tree *tree, const struct cgroup_tree_found *found,
		       const char *const *group_names, size_t group_count, const char *owner,
		       cgroup_log_function log);

/* Removes what corral made (once every task's cgroup is gone). */
void cgroup_tree_close(struct cgroup_tree *tree);

bool cgroup_tree_has_controller(const struct cgroup_tree *tree, const char *controller);

/* Makes root/<name> with the tree's controllers enabled for its children.
 * Returns its directory fd, or -errno. */
int cgroup_tree_make_group(struct cgroup_tree *tree, const char *name);

/* Remembers a v1 directory (absolute) under which close removes the
 * groups' cgroups (or the whole of it, for a root of corral's own). */
void cgroup_tree_note_v1_root(struct cgroup_tree *tree, const char *path);

/* Removes root/<name> and whatever is below it. */
void cgroup_tree_remove_group(struct cgroup_tree *tree, const char *name);
