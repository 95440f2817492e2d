#include "isolation/cgroup_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "base/cpu_precedence.h"
#include "base/xmalloc.h"
#include "isolation/cgroup_fs.h"

#define SUPERVISOR_LEAF "supervisor"
#define INSTANCE_PREFIX "corral-"
#define HOW_TO_TURN_ON                                                                             \
	"per-task limits, cgroup.kill, OOM reports and stats are off; to turn them on, "           \
	"give corral a writable cgroup v2 tree (in a container: a cgroup namespace with "          \
	"/sys/fs/cgroup mounted read-write)"

/* `why` names what failed, e.g. "/sys/fs/cgroup is not writable". */
static void turn_off(struct cgroup_tree *tree, const char *why, int error)
{
	snprintf(tree->off_reason, sizeof(tree->off_reason), "%.400s%s%s: %s", why,
		 error ? ": " : "", error ? strerror(error) : "", HOW_TO_TURN_ON);
	tree->enabled = false;
}

static void turn_off_at(struct cgroup_tree *tree, const char *what, const char *path, int error)
{
	char why[512];
	snprintf(why, sizeof(why), "%s %s", what, path);
	turn_off(tree, why, error);
}

/* The v2 hierarchy's mount point and the cgroup path its root shows
 * (not "/" when a container runtime mounted only its own subtree). */
static bool find_v2_mount(char **mount_point, char **mount_root)
{
	FILE *file = fopen("/proc/self/mountinfo", "re");
	if (!file)
		return false;
	char *line = NULL;
	size_t capacity = 0;
	bool found = false;
	while (!found && getline(&line, &capacity, file) > 0) {
		char root[4096], point[4096];
		const char *separator = strstr(line, " - ");
		if (!separator || strncmp(separator + 3, "cgroup2 ", 8) != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2)
			continue;
		*mount_point = xstrdup(point);
		*mount_root = xstrdup(root);
		found = true;
	}
	free(line);
	fclose(file);
	return found;
}

/* corral's cgroup in the v2 hierarchy, from /proc/self/cgroup ("0::/a/b"). */
static char *own_cgroup_path(void)
{
	FILE *file = fopen("/proc/self/cgroup", "re");
	if (!file)
		return NULL;
	char *line = NULL, *path = NULL;
	size_t capacity = 0;
	while (!path && getline(&line, &capacity, file) > 0) {
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			path = xstrdup(line + 3);
		}
	}
	free(line);
	fclose(file);
	return path;
}

/* Whether corral is the only process in the cgroup at dir_fd, which is not
 * the hierarchy's real root (the root has no cgroup.events, and holds
 * every process the kernel does not put elsewhere). */
static bool alone_in(int dir_fd)
{
	if (faccessat(dir_fd, "cgroup.events", F_OK, 0) < 0)
		return false;
	char text[64];
	long length = cgroup_fs_read(dir_fd, "cgroup.procs", text, sizeof(text));
	char own[32];
	snprintf(own, sizeof(own), "%d\n", (int)getpid());
	return length > 0 && strcmp(text, own) == 0;
}

/* Processes directly in the cgroup `path` (not in its children). */
static bool holds_processes(int parent_fd, const char *path)
{
	char procs[strlen(path) + sizeof("/cgroup.procs")];
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	char text[16];
	long length = cgroup_fs_read(parent_fd, procs, text, sizeof(text));
	return length != 0; /* an error: assume alive, leave it alone */
}

/* How long a root without a supervisor leaf may stay empty: its corral
 * made it and moves in next, or died in between. */
#define YOUNG_ROOT_SECONDS 10

/* A live corral is always in its root or in the root's supervisor leaf:
 * in the root from just after mkdir, then in the leaf (made once it is in
 * the root), moving one way only. Reading the root first and the leaf
 * second never misses it. Before it moves in, its root is empty and has
 * no leaf: only an old one is taken for stale. */
static bool instance_is_alive(int base_fd, const char *name)
{
	char leaf[strlen(name) + sizeof("/" SUPERVISOR_LEAF)];
	snprintf(leaf, sizeof(leaf), "%s/" SUPERVISOR_LEAF, name);
	if (holds_processes(base_fd, name))
		return true;
	if (faccessat(base_fd, leaf, F_OK, 0) == 0)
		return holds_processes(base_fd, leaf);
	struct stat status;
	return fstatat(base_fd, name, &status, 0) < 0 ||
	       time(NULL) - status.st_ctime < YOUNG_ROOT_SECONDS;
}

static void remove_stale(struct cgroup_tree *tree, const char *name, const char *why)
{
	tree->log("warning: cgroup %s/%s was left by an earlier corral that died (%s): "
		  "killing what runs there and removing it",
		  tree->base_path, name, why);
	int failure = cgroup_fs_remove_tree(tree->base_fd, name);
	if (failure < 0)
		tree->log("warning: cannot remove cgroup %s/%s: %s", tree->base_path, name,
			  strerror(-failure));
}

/* Who made an instance root: its config's path, or "" when the root does
 * not say (made by a corral before the owner was kept, or on a kernel
 * without cgroupfs xattrs, before 5.7). */
#define OWNER_XATTR "user.corral.owner"

static void instance_owner(int base_fd, const char *name, char *owner, size_t size)
{
	owner[0] = '\0';
	int fd = openat(base_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t length = fgetxattr(fd, OWNER_XATTR, owner, size - 1);
	close(fd);
	owner[length > 0 ? length : 0] = '\0';
}

/* Only an earlier corral of the same config's leftovers are this one's to
 * clean: another corral's (another config, a one-command run) are not,
 * even when that corral is dead; a root that does not say is taken as
 * before. */
static bool instance_is_ours(const struct cgroup_tree *tree, const char *name)
{
	char owner[PATH_MAX];
	instance_owner(tree->base_fd, name, owner, sizeof(owner));
	return !owner[0] || strcmp(owner, tree->owner) == 0;
}

/* The entries of the base cgroup, from the first. Not through a dup of
 * base_fd: a dup shares its offset, so that the second walk of a run (at
 * the exit) began where the first had ended and saw nothing. */
static DIR *base_entries(const struct cgroup_tree *tree)
{
	int fd = openat(tree->base_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *directory = fd >= 0 ? fdopendir(fd) : NULL;
	if (!directory && fd >= 0)
		close(fd);
	return directory;
}

/* Beside a corral that shares its cgroup: roots named corral-* whose corral
 * is gone, made by an earlier corral of the same owner. A root made by a
 * corral that has not moved into it yet looks the same: if it is taken,
 * that corral tries another name. */
static void remove_stale_instances(struct cgroup_tree *tree)
{
	if (!tree->owner)
		return; /* one-command mode: nothing earlier is its own */
	DIR *directory = base_entries(tree);
	if (!directory)
		return;
	struct dirent *entry;
	while ((entry = readdir(directory))) {
		if (entry->d_type != DT_DIR ||
		    strncmp(entry->d_name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)) != 0)
			continue;
		if (!instance_is_alive(tree->base_fd, entry->d_name) &&
		    instance_is_ours(tree, entry->d_name))
			remove_stale(tree, entry->d_name, "its corral is gone");
	}
	closedir(directory);
}

/* What a root given up at the start looks like: nothing runs anywhere in
 * it, and it never got an owner (set once corral is in). A root of the
 * same name made by a corral in another pid namespace (another
 * container's PID 1 in a shared cgroup) has an owner or processes. */
static bool given_up(const struct cgroup_tree *tree, const char *name)
{
	char owner[PATH_MAX], events_path[strlen(name) + sizeof("/cgroup.events")], events[256];
	instance_owner(tree->base_fd, name, owner, sizeof(owner));
	snprintf(events_path, sizeof(events_path), "%s/cgroup.events", name);
	return !owner[0] &&
	       cgroup_fs_read(tree->base_fd, events_path, events, sizeof(events)) > 0 &&
	       strstr(events, "populated 0") != NULL;
}

/* The names the corral that made this tree tried at its start and gave
 * up: roots named for its pid (the first loop's, which a restored loop
 * keeps in `instance_name`), empty and with no owner. Removed whatever
 * their age, where remove_stale_instances leaves a young root alone (a
 * restore soak in CI found one left behind 13 s after the start). */
static void remove_given_up_roots(struct cgroup_tree *tree)
{
	const char *dash = strrchr(tree->instance_name, '-');
	DIR *directory = dash ? base_entries(tree) : NULL;
	if (!directory)
		return;
	size_t prefix = (size_t)(dash - tree->instance_name) + 1;
	struct dirent *entry;
	while ((entry = readdir(directory))) {
		if (entry->d_type != DT_DIR ||
		    strncmp(entry->d_name, tree->instance_name, prefix) != 0 ||
		    strcmp(entry->d_name, tree->instance_name) == 0 ||
		    !given_up(tree, entry->d_name))
			continue;
		int failure = cgroup_fs_remove_tree(tree->base_fd, entry->d_name);
		if (failure < 0)
			tree->log("warning: cannot remove cgroup %s/%s: %s", tree->base_path,
				  entry->d_name, strerror(-failure));
	}
	closedir(directory);
}

/* An owning corral finds its groups' cgroups only if an earlier corral in
 * the same cgroup died without removing them. */
static void remove_stale_groups(struct cgroup_tree *tree, const char *const *group_names,
				size_t group_count)
{
	for (size_t i = 0; i < group_count; i++)
		if (faccessat(tree->base_fd, group_names[i], F_OK, 0) == 0)
			remove_stale(tree, group_names[i], "corral is alone in its cgroup");
}

/* corral's keeper: it goes where corral goes (cgroup_tree.h). */
static pid_t companion;

void cgroup_tree_move_with(pid_t pid)
{
	companion = pid;
}

/* corral (and its keeper) into the cgroup at `dir_fd`; *self_moved says
 * whether corral itself went, whatever failed after. */
static int move_self(int dir_fd, bool *self_moved)
{
	int failure = cgroup_fs_write(dir_fd, "cgroup.procs", "0");
	*self_moved = failure == 0;
	if (failure == 0 && companion > 0) {
		char pid[24];
		snprintf(pid, sizeof(pid), "%d", (int)companion);
		/* Left in the root, it would keep controllers from being
		 * enabled there (no internal processes). */
		int moved = cgroup_fs_write(dir_fd, "cgroup.procs", pid);
		if (moved < 0)
			return moved;
	}
	return failure;
}

/* The controllers corral's limits and stats use. Only these are enabled:
 * each one enabled in a cgroup keeps processes out of it, and a container
 * runtime's `exec` joins the container's cgroup (runc falls back to the
 * init's cgroup on pure v2 hosts, not on hybrid ones, whose v2 tree has
 * only controllers corral has no use for, such as hugetlb). */
static const char *const used_controllers[] = {"cpu", "cpuset", "io", "memory", "pids"};

/* Enables, one by one, each used controller `dir_fd` may hand to its
 * children. One at a time: a controller that cannot be enabled (EBUSY where
 * processes live) does not keep the others off. */
static void enable_controllers(int dir_fd)
{
	char available[256];
	if (cgroup_fs_read(dir_fd, "cgroup.controllers", available, sizeof(available)) < 0)
		return;
	for (size_t i = 0; i < sizeof(used_controllers) / sizeof(used_controllers[0]); i++) {
		if (!cgroup_fs_has_word(available, used_controllers[i]))
			continue;
		char change[64];
		snprintf(change, sizeof(change), "+%s", used_controllers[i]);
		cgroup_fs_write(dir_fd, "cgroup.subtree_control", change);
	}
}

static void read_enabled_controllers(struct cgroup_tree *tree)
{
	if (cgroup_fs_read(tree->root_fd, "cgroup.subtree_control", tree->controllers,
			   sizeof(tree->controllers)) < 0)
		tree->controllers[0] = '\0';
	tree->controllers[strcspn(tree->controllers, "\n")] = '\0';
}

/* corral before its tasks for the CPU (base/cpu_precedence.h): best
 * effort, as the nice. */
static void weigh_supervisor_leaf(struct cgroup_tree *tree)
{
	int leaf_fd = openat(tree->root_fd, SUPERVISOR_LEAF, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (leaf_fd < 0)
		return;
	int failure = cgroup_fs_write(leaf_fd, "cpu.weight", CPU_PRECEDENCE_WEIGHT);
	if (failure < 0)
		tree->log("warning: cannot give corral's own cgroup %s/" SUPERVISOR_LEAF
			  " cpu.weight " CPU_PRECEDENCE_WEIGHT ": %s",
			  tree->root_path, strerror(-failure));
	close(leaf_fd);
}

/* Moves corral into root/supervisor. 0 or -errno. */
static int enter_supervisor_leaf(struct cgroup_tree *tree)
{
	if (mkdirat(tree->root_fd, SUPERVISOR_LEAF, 0755) < 0 && errno != EEXIST)
		return -errno;
	int leaf_fd = openat(tree->root_fd, SUPERVISOR_LEAF, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (leaf_fd < 0)
		return -errno;
	bool self_moved;
	int failure = move_self(leaf_fd, &self_moved);
	close(leaf_fd);
	return failure;
}

static int open_owned_root(struct cgroup_tree *tree, const char *const *group_names,
			   size_t group_count)
{
	tree->root_path = xstrdup(tree->base_path);
	tree->root_fd = fcntl(tree->base_fd, F_DUPFD_CLOEXEC, 0);
	tree->v1_suffix = "";
	remove_stale_groups(tree, group_names, group_count);
	return enter_supervisor_leaf(tree);
}

/* A root of its own below a shared cgroup. corral moves into it at once:
 * a root with a process in it is never taken for a stale one. */
static int open_shared_root(struct cgroup_tree *tree)
{
	remove_stale_instances(tree);
	for (int attempt = 0; attempt < 3; attempt++) {
		unsigned short random_part = 0;
		if (getrandom(&random_part, sizeof(random_part), GRND_NONBLOCK) < 0)
			random_part = (unsigned short)attempt;
		free(tree->instance_name);
		tree->instance_name =
		    xasprintf(INSTANCE_PREFIX "%d-%04x", (int)getpid(), random_part);
		if (mkdirat(tree->base_fd, tree->instance_name, 0755) < 0) {
			if (errno == EEXIST)
				continue;
			return -errno;
		}
		tree->root_fd =
		    openat(tree->base_fd, tree->instance_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		bool self_moved = false;
		int failure = tree->root_fd < 0 ? -errno : move_self(tree->root_fd, &self_moved);
		if (failure < 0) {
			/* Taken for stale by another corral in the instant
			 * before corral moved in, or its keeper could not
			 * follow: try another name. corral goes back out
			 * first, or the root it leaves could not be removed
			 * (it was, found by the restore soak). */
			if (self_moved)
				cgroup_fs_write(tree->base_fd, "cgroup.procs", "0");
			if (tree->root_fd >= 0)
				close(tree->root_fd);
			tree->root_fd = -1;
			tree->log("warning: cannot move corral%s into cgroup %s/%s: %s; trying "
				  "another name",
				  companion > 0 ? " and its keeper" : "", tree->base_path,
				  tree->instance_name, strerror(-failure));
			/* What cannot be removed now goes at the exit
			 * (remove_given_up_roots). */
			unlinkat(tree->base_fd, tree->instance_name, AT_REMOVEDIR);
			continue;
		}
		/* Best effort: without it, a later corral takes the root for
		 * anyone's, as before the owner was kept. */
		if (tree->owner)
			fsetxattr(tree->root_fd, OWNER_XATTR, tree->owner, strlen(tree->owner), 0);
		tree->root_path = xasprintf("%s/%s", tree->base_path, tree->instance_name);
		tree->v1_suffix = xasprintf("/%s", tree->instance_name);
		/* Works at the hierarchy's root; elsewhere, what the shared
		 * cgroup already enables is what there is. */
		enable_controllers(tree->base_fd);
		return enter_supervisor_leaf(tree);
	}
	return -EEXIST;
}

/* corral is in root/supervisor now: its /proc/self/cgroup line, less the
 * leaf, is the root as /proc/PID/cgroup shows it for any process (in
 * corral's cgroup namespace), which is how a control client is found to
 * be in a task's cgroup. */
static void note_root_as_proc_shows_it(struct cgroup_tree *tree)
{
	char *own = own_cgroup_path();
	size_t length = own ? strlen(own) : 0;
	size_t leaf = sizeof("/" SUPERVISOR_LEAF) - 1;
	if (length >= leaf && strcmp(own + length - leaf, "/" SUPERVISOR_LEAF) == 0) {
		own[length - leaf] = '\0';
		tree->proc_root_path = own;
		return;
	}
	free(own);
}

void cgroup_tree_open(struct cgroup_tree *tree, bool machine_init, const char *const *group_names,
		      size_t group_count, const char *owner, cgroup_log_function log)
{
	memset(tree, 0, sizeof(*tree));
	tree->base_fd = tree->root_fd = -1;
	tree->log = log;
	tree->owner = owner;
	tree->v1_suffix = "";
	tree->group_names = group_names;
	tree->group_count = group_count;

	char *mount_root = NULL;
	char *own_path = own_cgroup_path();
	if (!own_path || !find_v2_mount(&tree->mount_path, &mount_root)) {
		turn_off(tree, "no cgroup v2 hierarchy is mounted", 0);
		free(own_path);
		return;
	}
	/* Where corral's cgroup is under the mount point. */
	size_t root_length = strcmp(mount_root, "/") == 0 ? 0 : strlen(mount_root);
	if (strncmp(own_path, mount_root, root_length) != 0) {
		turn_off_at(tree, "the mounted cgroup tree does not hold corral's cgroup", own_path,
			    0);
		free(own_path);
		free(mount_root);
		return;
	}
	const char *below = own_path + root_length;
	tree->base_path = xasprintf("%s%s", tree->mount_path, strcmp(below, "/") == 0 ? "" : below);
	free(own_path);
	free(mount_root);

	tree->base_fd = open(tree->base_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tree->base_fd < 0) {
		turn_off_at(tree, "cannot open", tree->base_path, errno);
		return;
	}
	if (faccessat(tree->base_fd, "cgroup.procs", W_OK, AT_EACCESS) < 0) {
		turn_off_at(tree, "cannot write to", tree->base_path, errno);
		return;
	}
	bool owned = machine_init || alone_in(tree->base_fd);
	int failure =
	    owned ? open_owned_root(tree, group_names, group_count) : open_shared_root(tree);
	if (failure < 0) {
		turn_off_at(tree, "cannot set up corral's cgroup below", tree->base_path, -failure);
		return;
	}
	enable_controllers(tree->root_fd);
	read_enabled_controllers(tree);
	/* Not in one-command mode (no owner), tini's, where corral goes
	 * before nobody. */
	if (tree->owner && cgroup_fs_has_word(tree->controllers, "cpu"))
		weigh_supervisor_leaf(tree);
	note_root_as_proc_shows_it(tree);
	tree->enabled = true;
}

int cgroup_tree_reopen(struct cgroup_tree *tree, const struct cgroup_tree_found *found,
		       const char *const *group_names, size_t group_count, const char *owner,
		       cgroup_log_function log)
{
	memset(tree, 0, sizeof(*tree));
	tree->base_fd = tree->root_fd = -1;
	tree->log = log;
	tree->owner = owner;
	tree->v1_suffix = "";
	tree->group_names = group_names;
	tree->group_count = group_count;
	snprintf(tree->off_reason, sizeof(tree->off_reason), "%s",
		 found->off_reason ? found->off_reason : "");
	for (size_t i = 0; i < found->v1_root_count; i++)
		cgroup_tree_note_v1_root(tree, found->v1_roots[i]);
	if (!found->enabled)
		return 0;
	if (!found->mount_path || !found->base_path)
		return -EINVAL;
	tree->mount_path = xstrdup(found->mount_path);
	tree->base_path = xstrdup(found->base_path);
	tree->instance_name = found->instance_name ? xstrdup(found->instance_name) : NULL;
	tree->root_path = tree->instance_name
			      ? xasprintf("%s/%s", tree->base_path, tree->instance_name)
			      : xstrdup(tree->base_path);
	if (tree->instance_name)
		tree->v1_suffix = xasprintf("/%s", tree->instance_name);
	tree->proc_root_path = found->proc_root_path ? xstrdup(found->proc_root_path) : NULL;
	snprintf(tree->controllers, sizeof(tree->controllers), "%s",
		 found->controllers ? found->controllers : "");
	tree->base_fd = open(tree->base_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	tree->root_fd = open(tree->root_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tree->base_fd < 0 || tree->root_fd < 0)
		return -errno;
	tree->enabled = true;
	return 0;
}

bool cgroup_tree_has_controller(const struct cgroup_tree *tree, const char *controller)
{
	return tree->enabled && cgroup_fs_has_word(tree->controllers, controller);
}

int cgroup_tree_make_group(struct cgroup_tree *tree, const char *name)
{
	if (mkdirat(tree->root_fd, name, 0755) < 0 && errno != EEXIST)
		return -errno;
	int fd = openat(tree->root_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	enable_controllers(fd);
	return fd;
}

void cgroup_tree_remove_group(struct cgroup_tree *tree, const char *name)
{
	if (!tree->enabled)
		return;
	int failure = cgroup_fs_remove_tree(tree->root_fd, name);
	if (failure < 0)
		tree->log("warning: cannot remove cgroup %s/%s: %s", tree->root_path, name,
			  strerror(-failure));
}

void cgroup_tree_note_v1_root(struct cgroup_tree *tree, const char *path)
{
	for (size_t i = 0; i < tree->v1_root_count; i++)
		if (strcmp(tree->v1_roots[i], path) == 0)
			return;
	if (tree->v1_root_count < sizeof(tree->v1_roots) / sizeof(tree->v1_roots[0]))
		tree->v1_roots[tree->v1_root_count++] = xstrdup(path);
}

static void remove_v1_root(struct cgroup_tree *tree, const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (size_t i = 0; i < tree->group_count; i++)
		cgroup_fs_remove_tree(fd, tree->group_names[i]);
	close(fd);
	if (tree->instance_name)
		rmdir(path);
}

void cgroup_tree_close(struct cgroup_tree *tree)
{
	for (size_t i = 0; i < tree->v1_root_count; i++) {
		remove_v1_root(tree, tree->v1_roots[i]);
		free(tree->v1_roots[i]);
	}
	if (tree->enabled && tree->instance_name) {
		/* Back where corral started, so that its own root can go. */
		bool self_moved;
		move_self(tree->base_fd, &self_moved);
		int failure = cgroup_fs_remove_tree(tree->base_fd, tree->instance_name);
		if (failure < 0)
			tree->log("warning: cannot remove cgroup %s: %s", tree->root_path,
				  strerror(-failure));
		/* And any empty root of ours left beside it (a name tried at
		 * the start and given up; an earlier run's): a corral leaves
		 * no cgroup behind. */
		remove_given_up_roots(tree);
		remove_stale_instances(tree);
	}
	if (tree->root_fd >= 0)
		close(tree->root_fd);
	if (tree->base_fd >= 0)
		close(tree->base_fd);
	if (*tree->v1_suffix)
		free((char *)tree->v1_suffix);
	free(tree->mount_path);
	free(tree->base_path);
	free(tree->instance_name);
	free(tree->root_path);
	free(tree->proc_root_path);
	memset(tree, 0, sizeof(*tree));
	tree->base_fd = tree->root_fd = -1;
}
