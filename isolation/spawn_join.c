#include "isolation/spawn_join.h"

#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "isolation/child_code.h"

int spawn_join_enter_pid_namespace(const struct spawn_join *join, int *own_namespace)
{
	*own_namespace = -1;
	if (!(join->namespaces & CLONE_NEWPID))
		return 0;
	/* A pidfd names its process's active pid namespace: corral's. */
	int own = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (own < 0)
		return -errno;
	if (setns(join->pidfd, CLONE_NEWPID) < 0) {
		int failure = -errno;
		close(own);
		return failure;
	}
	*own_namespace = own;
	return 1;
}

int spawn_join_leave_pid_namespace(int own_namespace)
{
	int result = setns(own_namespace, CLONE_NEWPID) < 0 ? -errno : 0;
	close(own_namespace);
	return result;
}

CHILD_CODE int spawn_join_enter(const struct spawn_join *join, int namespace_fd, bool with_pid,
				int *stage, int *index)
{
	if (spawn_isolation_set_rlimits(join->rlimits, join->rlimit_count, stage, index) < 0)
		return -errno;
	/* One call joins them all, the user namespace first (the kernel's
	 * order): the task's root and working directory come with its mount
	 * namespace. */
	unsigned long flags = join->namespaces & (with_pid ? ~0UL : ~(unsigned long)CLONE_NEWPID);
	if (flags && syscall(SYS_setns, namespace_fd, flags) < 0) {
		*stage = SPAWN_STAGE_JOIN_NAMESPACES;
		return -errno;
	}
	return 0;
}

/* As glibc's execvpe: a candidate that is not there lets the next one try;
 * one that is there but may not be run is remembered; any other failure
 * ends the search. */
CHILD_CODE void spawn_join_exec(const struct spawn_join *join, char *const *argv, char *const *envp)
{
	bool denied = false;
	int failure = ENOENT;
	for (char *const *candidate = join->executable_candidates; *candidate; candidate++) {
		syscall(SYS_execve, *candidate, argv, envp);
		if (errno == EACCES) {
			denied = true;
			continue;
		}
		if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ENODEV &&
		    errno != ETIMEDOUT) {
			failure = errno;
			break;
		}
	}
	errno = denied && failure == ENOENT ? EACCES : failure;
}
