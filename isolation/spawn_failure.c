#include "isolation/spawn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The spawn's failure, read and told: what a child's setup step writes to
 * the error pipe, and the one table of texts that says which step failed,
 * for a task's start and for a join alike. */

int spawn_read_failure(int error_fd, struct spawn_failure *failure)
{
	ssize_t got;
	do
		got = read(error_fd, failure, sizeof(*failure));
	while (got < 0 && errno == EINTR);
	if (got == (ssize_t)sizeof(*failure))
		return 1;
	if (got == 0)
		return 0;
	if (got < 0 && errno == EAGAIN)
		return -EAGAIN;
	/* A short read cannot happen for a pipe write under PIPE_BUF; treat
	 * anything odd as an exec failure of unknown cause. */
	failure->stage = SPAWN_STAGE_EXEC;
	failure->error = got < 0 ? errno : EIO;
	return 1;
}

/* With the capability's name, as capabilities.c words it. */
static void describe_capability_failure(const struct spawn_failure *failure, char *buffer,
					size_t size)
{
	struct capability_failure capability = {.capability = (unsigned)failure->index};
	switch (failure->stage) {
	case SPAWN_STAGE_CAPABILITY_BOUNDING:
		capability.stage = CAPABILITY_STAGE_BOUNDING;
		break;
	case SPAWN_STAGE_KEEP_CAPABILITIES:
		capability.stage = CAPABILITY_STAGE_KEEPCAPS;
		break;
	case SPAWN_STAGE_CAPSET:
		capability.stage = CAPABILITY_STAGE_CAPSET;
		break;
	default:
		capability.stage = CAPABILITY_STAGE_AMBIENT;
		break;
	}
	capability_failure_describe(&capability, failure->error, buffer, size);
}

/* The steps whose description is their name alone. */
static const char *const plain_steps[] = {
    [SPAWN_STAGE_SYNC] = "wait for corral's step before the setup",
    [SPAWN_STAGE_NETWORK_NAMESPACE] = "join network namespace",
    [SPAWN_STAGE_JOIN_NAMESPACES] = "join the task's namespaces",
    [SPAWN_STAGE_JOIN_PID_NAMESPACE] = "start in the task's pid namespace",
    [SPAWN_STAGE_CGROUP_NAMESPACE] = "unshare the cgroup namespace",
    [SPAWN_STAGE_MOUNT_PRIVATE] = "make mounts private",
    [SPAWN_STAGE_PROC] = "mount a new /proc",
    [SPAWN_STAGE_LOOPBACK] = "bring lo up",
    [SPAWN_STAGE_NO_NEW_PRIVILEGES] = "no_new_privileges",
    [SPAWN_STAGE_SECCOMP] = "load the seccomp filter",
    [SPAWN_STAGE_EXEC_REAPER] = "exec corral's reaper (from its memfd)",
    [SPAWN_STAGE_SIGNALS] = "reset signals",
    [SPAWN_STAGE_SESSION] = "setsid",
    [SPAWN_STAGE_STDIO] = "set up stdin/stdout/stderr",
    [SPAWN_STAGE_SETGROUPS] = "setgroups",
};

void spawn_failure_describe(const struct spawn_request *request,
			    const struct spawn_failure *failure, char *buffer, size_t size)
{
	const char *reason = strerror(failure->error);
	if ((size_t)failure->stage < sizeof(plain_steps) / sizeof(plain_steps[0]) &&
	    plain_steps[failure->stage]) {
		snprintf(buffer, size, "%s: %s", plain_steps[failure->stage], reason);
		return;
	}
	switch (failure->stage) {
	case SPAWN_STAGE_CGROUP_V1:
		snprintf(buffer, size, "join v1 cgroup %s: %s",
			 request->cgroup_v1_join ? request->cgroup_v1_join[failure->index] : "?",
			 reason);
		break;
	case SPAWN_STAGE_ROOTFS:
	case SPAWN_STAGE_MOUNT_TARGET:
	case SPAWN_STAGE_MOUNT:
	case SPAWN_STAGE_PIVOT_ROOT:
	case SPAWN_STAGE_READONLY_ROOTFS:
		mount_plan_describe_failure(request->isolation ? request->isolation->mounts : NULL,
					    (int)failure->stage, failure->index, reason, buffer,
					    size);
		break;
	case SPAWN_STAGE_MASK:
		snprintf(buffer, size, "mask %s: %s", spawn_isolation_masked_path(failure->index),
			 reason);
		break;
	case SPAWN_STAGE_HIDE_CONTROL_SOCKET:
		snprintf(buffer, size, "hide corral's control socket %s: %s",
			 request->isolation && request->isolation->hidden_control_socket
			     ? request->isolation->hidden_control_socket
			     : "?",
			 reason);
		break;
	case SPAWN_STAGE_READ_ONLY:
		snprintf(buffer, size, "make %s read-only: %s",
			 spawn_isolation_read_only_path(failure->index), reason);
		break;
	case SPAWN_STAGE_OOM_SCORE:
		snprintf(buffer, size, "write %s to /proc/self/oom_score_adj: %s%s",
			 spawn_oom_score_adj_text(request), reason,
			 failure->error == EACCES ? " (lowering it needs cap_sys_resource)" : "");
		break;
	case SPAWN_STAGE_HOSTNAME:
		snprintf(buffer, size, "sethostname %s: %s",
			 request->isolation ? request->isolation->hostname : "?", reason);
		break;
	case SPAWN_STAGE_RLIMIT:
		snprintf(buffer, size, "rlimit #%d: %s", failure->index + 1, reason);
		break;
	case SPAWN_STAGE_CAPABILITY_BOUNDING:
	case SPAWN_STAGE_KEEP_CAPABILITIES:
	case SPAWN_STAGE_CAPSET:
	case SPAWN_STAGE_AMBIENT_CAPABILITIES:
		describe_capability_failure(failure, buffer, size);
		break;
	case SPAWN_STAGE_REAPER_MEMFD:
		/* Made once at start; described at each start that needs it. */
		snprintf(buffer, size, "make the memfd of corral's reaper: %s%s", reason,
			 failure->error == EACCES ? " (vm.memfd_noexec = 2 forbids an executable "
						    "memfd; with init: false no reaper is needed)"
						  : "");
		break;
	case SPAWN_STAGE_NOTIFY_FD:
		snprintf(buffer, size, "readiness fd %d: %s", request->notify_target, reason);
		break;
	case SPAWN_STAGE_REAPER_STATUS_FD:
		snprintf(buffer, size, "the reaper's status fd %d: %s",
			 request->reaper_status_target, reason);
		break;
	case SPAWN_STAGE_CHDIR:
		snprintf(buffer, size, "chdir %s: %s", request->cwd, reason);
		break;
	case SPAWN_STAGE_SETGID:
		snprintf(buffer, size, "setgid %u: %s", (unsigned)request->gid, reason);
		break;
	case SPAWN_STAGE_SETUID:
		snprintf(buffer, size, "setuid %u: %s", (unsigned)request->uid, reason);
		break;
	case SPAWN_STAGE_EXEC:
	default:
		snprintf(buffer, size, "exec %s: %s", request->executable, reason);
		break;
	}
}
