/* The child's side of a mount plan (mount_plan.h): between clone and exec,
 * in the task's new mount namespace, raw syscalls only (child_code.h). */
#include "isolation/mount_plan.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "isolation/child_code.h"
#include "isolation/spawn.h"

/* `error` (-errno) of the step `which`, for the error pipe. */
CHILD_CODE static int fail(int *stage, int which, long error)
{
	*stage = which;
	return (int)error;
}

CHILD_CODE static void close_fd(long fd)
{
	if (fd >= 0)
		syscall(SYS_close, (int)fd);
}

/* `path` looked up with `root_fd` as its /: "..", absolute symlinks and
 * symlinks climbing out all stay inside; /proc's magic links (which could
 * lead anywhere) are refused. An O_PATH fd, or -errno. */
CHILD_CODE static long open_in_root(int root_fd, const char *path, int flags)
{
	struct open_how how = {
	    .flags = (unsigned long long)(O_PATH | O_CLOEXEC | flags),
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

/* The directory that holds the last part of `path`, made (with its own
 * parents) where missing, each one resolved inside the root. `buffer`
 * (PATH_MAX) receives a copy of the path; *name points at its last part
 * there. Returns an O_PATH fd, or -errno. */
CHILD_CODE static long open_parent(int root_fd, const char *path, char *buffer, const char **name)
{
	size_t length = 0;
	while (path[length]) {
		if (length + 1 >= PATH_MAX)
			return -ENAMETOOLONG;
		buffer[length] = path[length];
		length++;
	}
	while (length > 1 && buffer[length - 1] == '/')
		length--;
	buffer[length] = '\0';
	size_t last = length;
	while (last > 0 && buffer[last - 1] != '/')
		last--;
	*name = buffer + last;

	long parent = open_in_root(root_fd, "/", O_DIRECTORY);
	size_t start = 0;
	for (size_t end = 0; parent >= 0 && end < last; end++) {
		if (buffer[end] != '/')
			continue;
		if (end > start + 1) { /* a part from start+1 to end */
			buffer[end] = '\0';
			long next = open_in_root(root_fd, buffer, O_DIRECTORY);
			if (next == -ENOENT) {
				if (syscall(SYS_mkdirat, (int)parent, buffer + start + 1, 0755) ==
					0 ||
				    errno == EEXIST)
					next = open_in_root(root_fd, buffer, O_DIRECTORY);
				else
					next = -errno;
			}
			buffer[end] = '/';
			close_fd(parent);
			parent = next;
		}
		start = end;
	}
	return parent;
}

/* The mount point of a step, made when missing: a directory, or an empty
 * file for a bind of a file. An O_PATH fd, or -errno. */
CHILD_CODE static long open_target(int root_fd, const struct mount_step *step)
{
	long fd = open_in_root(root_fd, step->target, 0);
	if (fd != -ENOENT)
		return fd;
	char buffer[PATH_MAX];
	const char *name;
	long parent = open_parent(root_fd, step->target, buffer, &name);
	if (parent < 0)
		return parent;
	long made;
	if (step->target_is_file)
		made = syscall(SYS_openat, (int)parent, name,
			       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	else
		made = syscall(SYS_mkdirat, (int)parent, name, 0755);
	long made_error = made < 0 ? -errno : 0;
	if (step->target_is_file)
		close_fd(made);
	close_fd(parent);
	/* EEXIST: a dangling symlink, say; the lookup below follows it
	 * inside the root, and fails if it leads nowhere. */
	if (made_error < 0 && made_error != -EEXIST)
		return made_error;
	return open_in_root(root_fd, step->target, 0);
}

CHILD_CODE static int make_symlink(int root_fd, const struct mount_step *step, int *stage)
{
	char buffer[PATH_MAX];
	const char *name;
	long parent = open_parent(root_fd, step->target, buffer, &name);
	if (parent < 0)
		return fail(stage, SPAWN_STAGE_MOUNT_TARGET, parent);
	long result = syscall(SYS_symlinkat, step->source, (int)parent, name);
	if (result < 0)
		result = -errno;
	close_fd(parent);
	return result < 0 ? fail(stage, SPAWN_STAGE_MOUNT, result) : 0;
}

/* A detached copy of the step's source: a tree fd, or -errno. */
CHILD_CODE static long clone_tree(const struct mount_step *step)
{
	long tree =
	    syscall(SYS_open_tree, AT_FDCWD, step->source,
		    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (step->recursive ? AT_RECURSIVE : 0));
	return tree < 0 ? -errno : tree;
}

/* A detached mount (or tree) for the step: a clone of the host's path, or
 * a new file system configured with the step's options. A mount fd, or
 * -errno. */
CHILD_CODE static long make_mount(const struct mount_step *step)
{
	if (step->kind == MOUNT_STEP_BIND)
		return clone_tree(step);
	long context = syscall(SYS_fsopen, step->type, FSOPEN_CLOEXEC);
	if (context < 0)
		return -errno;
	long result = 0;
	if (step->source)
		result = syscall(SYS_fsconfig, (int)context, FSCONFIG_SET_STRING, "source",
				 step->source, 0);
	for (size_t i = 0; result == 0 && step->option_keys && step->option_keys[i]; i++) {
		const char *value = step->option_values[i];
		result = syscall(SYS_fsconfig, (int)context,
				 value ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG,
				 step->option_keys[i], value, 0);
	}
	if (result == 0)
		result = syscall(SYS_fsconfig, (int)context, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	long mount = result == 0
			 ? syscall(SYS_fsmount, (int)context, FSMOUNT_CLOEXEC, step->attributes)
			 : -1;
	if (mount < 0)
		mount = -errno;
	close_fd(context);
	return mount;
}

CHILD_CODE static int set_attributes(long mount, const struct mount_step *step)
{
	uint64_t set = (step->readonly ? MOUNT_ATTR_RDONLY : 0) |
		       (step->kind == MOUNT_STEP_BIND ? step->attributes : 0);
	if (set) {
		struct mount_attr attributes = {.attr_set = set};
		if (syscall(SYS_mount_setattr, (int)mount, "", AT_EMPTY_PATH | AT_RECURSIVE,
			    &attributes, sizeof(attributes)) < 0)
			return -errno;
	}
	if (step->propagation) {
		struct mount_attr attributes = {.propagation = step->propagation & ~MS_REC};
		unsigned flags = AT_EMPTY_PATH | (step->propagation & MS_REC ? AT_RECURSIVE : 0);
		if (syscall(SYS_mount_setattr, (int)mount, "", flags, &attributes,
			    sizeof(attributes)) < 0)
			return -errno;
	}
	return 0;
}

/* `held`: the step's tree, cloned before the namespace was made private
 * (shared_with_host), or -1. */
CHILD_CODE static int apply_step(int root_fd, const struct mount_step *step, int held, int *stage)
{
	if (step->kind == MOUNT_STEP_SYMLINK)
		return make_symlink(root_fd, step, stage);
	long target = open_target(root_fd, step);
	if (target < 0) {
		close_fd(held);
		return fail(stage, SPAWN_STAGE_MOUNT_TARGET, target);
	}
	long mount = held >= 0 ? held : make_mount(step);
	long result = mount;
	if (mount >= 0)
		result = syscall(SYS_move_mount, (int)mount, "", (int)target, "",
				 MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0
			     ? -errno
			     : 0;
	/* Attributes through the mount's own fd, now that it is attached:
	 * readonly reaches the mounts below a recursive bind too. */
	if (result == 0)
		result = set_attributes(mount, step);
	close_fd(mount);
	close_fd(target);
	return result < 0 ? fail(stage, SPAWN_STAGE_MOUNT, result) : 0;
}

/* As runc does: with the new root as cwd, pivot_root(".", ".") stacks the
 * old root on top of it; detaching "." then drops the old root, and with
 * it every host mount, from the namespace. No directory for the old root
 * is needed inside the rootfs. */
CHILD_CODE static int pivot_into(int root_fd)
{
	if (syscall(SYS_fchdir, root_fd) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    syscall(SYS_umount2, ".", MNT_DETACH) < 0 || syscall(SYS_chdir, "/") < 0)
		return -errno;
	return 0;
}

CHILD_CODE int mount_plan_hold_shared(const struct mount_plan *plan,
				      int held[MOUNT_BIDIRECTIONAL_MAX], int *stage, int *index)
{
	size_t count = 0;
	for (size_t i = 0; i < plan->step_count; i++) {
		const struct mount_step *step = &plan->steps[i];
		if (!step->shared_with_host || count == MOUNT_BIDIRECTIONAL_MAX)
			continue;
		*index = (int)i;
		long tree = clone_tree(step);
		if (tree < 0)
			return fail(stage, SPAWN_STAGE_MOUNT, tree);
		held[count++] = (int)tree;
	}
	return 0;
}

CHILD_CODE int mount_plan_apply(const struct mount_plan *plan,
				const int held[MOUNT_BIDIRECTIONAL_MAX], int *stage, int *index)
{
	size_t used = 0;
	const char *root = plan->rootfs ? plan->rootfs : "/";
	/* pivot_root needs the new root to be a mount point. */
	if (plan->rootfs &&
	    syscall(SYS_mount, plan->rootfs, plan->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
		return fail(stage, SPAWN_STAGE_ROOTFS, -errno);
	long root_fd = syscall(SYS_openat, AT_FDCWD, root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return fail(stage, SPAWN_STAGE_ROOTFS, -errno);
	int result = 0;
	for (size_t i = 0; result == 0 && i < plan->step_count; i++) {
		const struct mount_step *step = &plan->steps[i];
		bool shared = step->shared_with_host && used < MOUNT_BIDIRECTIONAL_MAX;
		*index = (int)i;
		result = apply_step((int)root_fd, step, shared ? held[used++] : -1, stage);
	}
	if (result == 0 && plan->rootfs) {
		int pivoted = pivot_into((int)root_fd);
		if (pivoted < 0)
			result = fail(stage, SPAWN_STAGE_PIVOT_ROOT, pivoted);
	}
	close_fd(root_fd);
	return result;
}
