#include "isolation/spawn_isolation.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "isolation/child_code.h"
#include "isolation/spawn.h"

/* The step of the capability plan that failed, as a step of the spawn. */
static const int capability_stages[] = {
    [CAPABILITY_STAGE_BOUNDING] = SPAWN_STAGE_CAPABILITY_BOUNDING,
    [CAPABILITY_STAGE_KEEPCAPS] = SPAWN_STAGE_KEEP_CAPABILITIES,
    [CAPABILITY_STAGE_CAPSET] = SPAWN_STAGE_CAPSET,
    [CAPABILITY_STAGE_AMBIENT] = SPAWN_STAGE_AMBIENT_CAPABILITIES,
};

/* The step `which` failed with `error` (-errno). */
CHILD_CODE static int fail_with(int *stage, int which, int error)
{
	*stage = which;
	return error;
}

/* The step `which` failed in the system call just made. */
CHILD_CODE static int fail(int *stage, int which)
{
	return fail_with(stage, which, -errno);
}

/* What a task with a mount namespace may read but not write, as the OCI
 * defaults have it: the kernel's knobs and the cgroup file system (a root
 * task without capabilities could otherwise still move itself out of its
 * cgroup, its files being root's). Read-only recursively: /sys holds every
 * cgroup mount below it. /sys first: with a rootfs the mount plan binds it
 * read-only itself, and the loop starts after it. */
static const char *const read_only_paths[] = {
    "/sys", "/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs",
};

/* Hidden: files get /dev/null over them, directories an empty read-only
 * tmpfs. Only on a fresh /proc, which is the task's own. */
static const char *const masked_paths[] = {
    "/proc/kcore",         "/proc/keys", "/proc/timer_list", "/proc/sched_debug",
    "/proc/latency_stats", "/proc/acpi", "/proc/scsi",
};

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

CHILD_CODE static bool is_missing(int error)
{
	return error == -ENOENT;
}

/* A path the task cannot reach is hidden already: missing in its rootfs,
 * or behind a directory its (user namespace's) root may not search. */
CHILD_CODE static bool is_out_of_reach(int error)
{
	return error == -ENOENT || error == -ENOTDIR || error == -EACCES;
}

/* A bind of `path` onto itself, made read-only with everything below it. */
CHILD_CODE static int make_read_only(const char *path)
{
	if (syscall(SYS_mount, path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
		return is_missing(-errno) ? 0 : -errno;
	struct mount_attr attributes = {.attr_set = MOUNT_ATTR_RDONLY};
	return syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attributes,
		       sizeof(attributes)) < 0
		   ? -errno
		   : 0;
}

/* readonly_rootfs: the root mount alone, last; what is mounted below
 * (/proc, /dev, /tmp...) keeps its own flags. */
CHILD_CODE static int make_root_read_only(void)
{
	struct mount_attr attributes = {.attr_set = MOUNT_ATTR_RDONLY};
	return syscall(SYS_mount_setattr, AT_FDCWD, "/", 0, &attributes, sizeof(attributes)) < 0
		   ? -errno
		   : 0;
}

CHILD_CODE static int mask(const char *path)
{
	struct stat status;
	if (syscall(SYS_newfstatat, AT_FDCWD, path, &status, AT_SYMLINK_NOFOLLOW) < 0)
		return is_missing(-errno) ? 0 : -errno;
	long result = S_ISDIR(status.st_mode)
			  ? syscall(SYS_mount, "tmpfs", path, "tmpfs", MS_RDONLY, NULL)
			  : syscall(SYS_mount, "/dev/null", path, NULL, MS_BIND, NULL);
	return result < 0 ? -errno : 0;
}

/* lo of a new network namespace is down; a task expects 127.0.0.1. */
CHILD_CODE static int bring_loopback_up(void)
{
	long fd = syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct ifreq request = {.ifr_name = "lo"};
	long result = syscall(SYS_ioctl, (int)fd, SIOCGIFFLAGS, &request);
	if (result == 0) {
		request.ifr_flags |= IFF_UP;
		result = syscall(SYS_ioctl, (int)fd, SIOCSIFFLAGS, &request);
	}
	if (result < 0)
		result = -errno;
	syscall(SYS_close, (int)fd);
	return (int)result;
}

const char *spawn_isolation_read_only_path(int index)
{
	return index >= 0 && (size_t)index < COUNT(read_only_paths) ? read_only_paths[index] : "?";
}

const char *spawn_isolation_masked_path(int index)
{
	return index >= 0 && (size_t)index < COUNT(masked_paths) ? masked_paths[index] : "?";
}

CHILD_CODE int spawn_isolation_set_rlimits(const struct rlimit_config *rlimits, size_t count,
					   int *stage, int *index)
{
	for (size_t i = 0; i < count; i++) {
		struct rlimit value = {.rlim_cur = rlimits[i].soft, .rlim_max = rlimits[i].hard};
		if (syscall(SYS_prlimit64, 0, rlimits[i].resource, &value, NULL) < 0) {
			*index = (int)i;
			return fail(stage, SPAWN_STAGE_RLIMIT);
		}
	}
	return 0;
}

CHILD_CODE int spawn_isolation_before_ids(const struct spawn_isolation *isolation, int *stage,
					  int *index)
{
	if (isolation->new_cgroup_namespace && syscall(SYS_unshare, CLONE_NEWCGROUP) < 0)
		return fail(stage, SPAWN_STAGE_CGROUP_NAMESPACE);
	if (isolation->clone_flags & CLONE_NEWNS) {
		/* A bidirectional bind's tree, while it is still a peer of the
		 * host's source; it stays one (a detached tree is not touched
		 * by what follows). */
		int held[MOUNT_BIDIRECTIONAL_MAX];
		int result = isolation->mounts
				 ? mount_plan_hold_shared(isolation->mounts, held, stage, index)
				 : 0;
		if (result < 0)
			return result;
		/* Nothing else mounted here may reach corral's mount namespace. */
		if (syscall(SYS_mount, NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			return fail(stage, SPAWN_STAGE_MOUNT_PRIVATE);
		if (isolation->fresh_proc && syscall(SYS_mount, "proc", "/proc", "proc",
						     MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
			return fail(stage, SPAWN_STAGE_PROC);
		if (isolation->mounts)
			result = mount_plan_apply(isolation->mounts, held, stage, index);
		if (result < 0)
			return result;
		for (size_t i = 0; isolation->mask_proc && i < COUNT(masked_paths); i++) {
			result = mask(masked_paths[i]);
			if (result < 0) {
				*index = (int)i;
				return fail_with(stage, SPAWN_STAGE_MASK, result);
			}
		}
		/* A task is never an operator: the socket is covered in its
		 * namespace, where (without a rootfs) it would see the host's. */
		result =
		    isolation->hidden_control_socket ? mask(isolation->hidden_control_socket) : 0;
		if (result < 0 && !is_out_of_reach(result))
			return fail_with(stage, SPAWN_STAGE_HIDE_CONTROL_SOCKET, result);
		/* With a rootfs the plan bound /sys read-only already. */
		bool has_rootfs = isolation->mounts && isolation->mounts->rootfs;
		for (size_t i = has_rootfs ? 1 : 0; i < COUNT(read_only_paths); i++) {
			result = make_read_only(read_only_paths[i]);
			if (result < 0) {
				*index = (int)i;
				return fail_with(stage, SPAWN_STAGE_READ_ONLY, result);
			}
		}
		result = isolation->mounts && isolation->mounts->readonly_rootfs
			     ? make_root_read_only()
			     : 0;
		if (result < 0)
			return fail_with(stage, SPAWN_STAGE_READONLY_ROOTFS, result);
	}
	if (isolation->hostname &&
	    syscall(SYS_sethostname, isolation->hostname, isolation->hostname_length) < 0)
		return fail(stage, SPAWN_STAGE_HOSTNAME);
	int loopback = isolation->loopback_up ? bring_loopback_up() : 0;
	if (loopback < 0)
		return fail_with(stage, SPAWN_STAGE_LOOPBACK, loopback);
	int limits =
	    spawn_isolation_set_rlimits(isolation->rlimits, isolation->rlimit_count, stage, index);
	if (limits < 0)
		return limits;
	if (isolation->umask >= 0)
		syscall(SYS_umask, isolation->umask);
	if (isolation->capabilities) {
		struct capability_failure failure;
		/* The bounding set first (dropping needs CAP_SETPCAP), then
		 * keep-caps, so that the kept ones survive a non-root uid. */
		if (capability_plan_apply_bounding(isolation->capabilities, &failure) < 0 ||
		    capability_plan_apply_keepcaps(isolation->capabilities, &failure) < 0) {
			*index = (int)failure.capability;
			return fail(stage, capability_stages[failure.stage]);
		}
	}
	return 0;
}

CHILD_CODE int spawn_isolation_after_ids(const struct spawn_isolation *isolation, int *stage,
					 int *index)
{
	struct capability_failure failure;
	if (isolation->capabilities &&
	    capability_plan_apply_sets(isolation->capabilities, &failure) < 0) {
		*index = (int)failure.capability;
		return fail(stage, capability_stages[failure.stage]);
	}
	if (isolation->no_new_privileges && syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail(stage, SPAWN_STAGE_NO_NEW_PRIVILEGES);
	return 0;
}

CHILD_CODE int spawn_isolation_seccomp(const struct spawn_isolation *isolation, int *stage)
{
	const struct seccomp_program *program = isolation->seccomp;
	if (!program || !program->length)
		return 0;
	struct sock_fprog filter = {.len = program->length, .filter = program->filter};
	if (syscall(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter, 0, 0) < 0)
		return fail(stage, SPAWN_STAGE_SECCOMP);
	return 0;
}
