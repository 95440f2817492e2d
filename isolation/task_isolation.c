#include "isolation/task_isolation.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "isolation/own_privileges.h"

static unsigned long clone_flags_of(unsigned namespaces)
{
	unsigned long flags = 0;
	if (namespaces & ISOLATION_NS_PID)
		flags |= CLONE_NEWPID;
	if (namespaces & ISOLATION_NS_MOUNT)
		flags |= CLONE_NEWNS;
	if (namespaces & ISOLATION_NS_UTS)
		flags |= CLONE_NEWUTS;
	if (namespaces & ISOLATION_NS_IPC)
		flags |= CLONE_NEWIPC;
	if (namespaces & ISOLATION_NS_NET)
		flags |= CLONE_NEWNET;
	/* The kernel makes it first: the others belong to it. */
	if (namespaces & ISOLATION_NS_USER)
		flags |= CLONE_NEWUSER;
	/* Not the cgroup namespace: at clone time its root would be corral's
	 * cgroup; the child unshares it once in its own. */
	return flags;
}

/* The reaper's argv, ["corral-reaper", "--status-fd=N", PATH, ARGV0,
 * ARGS..., NULL] (isolation/reaper/). N is 3, or 4 when the task's
 * readiness fd is 3: the one fd the command keeps. */
#define REAPER_PATH_INDEX 2

static char **make_reaper_argv(struct task_isolation *isolation, const struct task_config *task,
			       const struct task_plan *plan)
{
	const struct readiness_config *readiness = readiness_of(task);
	isolation->reaper_status_target =
	    readiness->kind == READINESS_NOTIFY_FD && readiness->fd == 3 ? 4 : 3;
	char **argv = xcalloc(task->argc + 4, sizeof(*argv));
	argv[0] = "corral-reaper";
	argv[1] = xasprintf("--status-fd=%d", isolation->reaper_status_target);
	argv[REAPER_PATH_INDEX] = plan->executable;
	for (size_t i = 0; i < task->argc; i++)
		argv[REAPER_PATH_INDEX + 1 + i] = task->argv[i];
	return argv;
}

/* Every task with the default profile uses one program: libseccomp takes
 * about 2 ms to build it (three ABIs), and it is the same for all. */
static struct seccomp_program default_program;
static unsigned default_program_users;

static const struct seccomp_program *take_program(struct task_isolation *isolation,
						  const struct seccomp_config *config, char *error,
						  size_t error_size)
{
	if (config->kind != SECCOMP_PROFILE_DEFAULT) {
		if (seccomp_program_build(config, &isolation->seccomp, error, error_size) < 0)
			return NULL;
		return &isolation->seccomp;
	}
	if (!default_program_users &&
	    seccomp_program_build(config, &default_program, error, error_size) < 0)
		return NULL;
	default_program_users++;
	isolation->shares_default_seccomp = true;
	return &default_program;
}

static void give_back_program(struct task_isolation *isolation)
{
	if (isolation->shares_default_seccomp && --default_program_users == 0)
		seccomp_program_free(&default_program);
	seccomp_program_free(&isolation->seccomp);
}

/* In a user namespace the task's ids are ids inside it: each must be one
 * the maps give, or the child's setresuid fails with a bare EINVAL. */
static int check_mapped_ids(const struct isolation_config *config, const struct task_plan *plan,
			    char *error, size_t error_size)
{
	if (!user_namespace_maps_id(config->uid_map, config->uid_map_count, plan->uid)) {
		snprintf(error, error_size, "user: uid %u is not in isolation.user.uid_map",
			 (unsigned)plan->uid);
		return -1;
	}
	for (size_t i = 0; i <= plan->group_count; i++) {
		gid_t gid = i ? plan->groups[i - 1] : plan->gid;
		if (!user_namespace_maps_id(config->gid_map, config->gid_map_count, gid)) {
			snprintf(error, error_size, "%s: gid %u is not in isolation.user.gid_map",
				 i ? "groups" : "user", (unsigned)gid);
			return -1;
		}
	}
	return 0;
}

/* A child in a user namespace has capabilities in it only: it could not
 * raise a hard limit above corral's (that takes CAP_SYS_RESOURCE in the
 * host's namespace). corral sets its limits instead, as prlimit(1) would. */
static int set_rlimits(const struct task_isolation *isolation, pid_t pid, char *error,
		       size_t error_size)
{
	for (size_t i = 0; i < isolation->parent_rlimit_count; i++) {
		const struct rlimit_config *limit = &isolation->parent_rlimits[i];
		struct rlimit value = {.rlim_cur = limit->soft, .rlim_max = limit->hard};
		if (syscall(SYS_prlimit64, pid, limit->resource, &value, NULL) < 0) {
			int failure = -errno;
			snprintf(error, error_size, "rlimit #%zu: %s", i + 1, strerror(-failure));
			return failure;
		}
	}
	return 0;
}

static int prepare_user_namespace(void *context, pid_t pid, int pidfd, char *error,
				  size_t error_size)
{
	const struct task_isolation *isolation = context;
	int result = user_namespace_write_maps(&isolation->user_maps, pid, error, error_size);
	return result < 0 ? result : set_rlimits(isolation, pid, error, error_size);
}

spawn_between_fn *task_isolation_between(const struct task_isolation *isolation)
{
	return isolation->spawn.clone_flags & CLONE_NEWUSER ? prepare_user_namespace : NULL;
}

int task_isolation_build(struct task_isolation *isolation, const struct task_config *task,
			 const struct task_plan *plan, char *error, size_t error_size)
{
	memset(isolation, 0, sizeof(*isolation));
	const struct isolation_config *config = &task->isolation;
	if (!config->enabled)
		return 0;
	isolation->enabled = true;
	const struct seccomp_program *program =
	    take_program(isolation, &config->seccomp, error, error_size);
	if (!program)
		return -1;
	/* The loader made sure the kernel will load the filter: with
	 * no_new_privs, or CAP_SYS_ADMIN kept. */
	if ((config->namespaces & ISOLATION_NS_USER) &&
	    check_mapped_ids(config, plan, error, error_size) < 0) {
		task_isolation_free(isolation);
		return -1;
	}
	bool non_root = plan->change_ids && plan->uid != 0;
	uint64_t keep = config->capabilities;
	bool own_bounding_set = false;
	if (!(config->namespaces & ISOLATION_NS_USER)) {
		/* In the host's user namespace a task gets at most what corral
		 * has; in a new one it has everything there. */
		keep &= own_permitted_capabilities();
		if (own_privileges_check(config, keep, error, error_size) < 0) {
			task_isolation_free(isolation);
			return -1;
		}
		own_bounding_set = !(own_permitted_capabilities() & (1ull << CAP_SETPCAP));
	}
	capability_plan_build(keep, non_root, &isolation->capabilities);
	isolation->capabilities.leave_bounding_set = own_bounding_set;

	unsigned namespaces = config->namespaces;
	bool spare_network = task_isolation_takes_spare_network(config);
	struct spawn_isolation *spawn = &isolation->spawn;
	spawn->clone_flags = clone_flags_of(namespaces);
	if (spare_network)
		spawn->clone_flags &= ~(unsigned long)CLONE_NEWNET;
	spawn->new_cgroup_namespace = namespaces & ISOLATION_NS_CGROUP;
	bool pid_and_mount = (namespaces & ISOLATION_NS_PID) && (namespaces & ISOLATION_NS_MOUNT);
	/* With a rootfs, the mount plan mounts its /proc. */
	spawn->fresh_proc = pid_and_mount && !config->rootfs;
	spawn->mask_proc = pid_and_mount || config->rootfs;
	if ((namespaces & ISOLATION_NS_MOUNT) &&
	    task_isolation_refresh_mounts(isolation, task, NULL, error, error_size) < 0) {
		task_isolation_free(isolation);
		return -1;
	}
	spawn->hostname = config->hostname;
	spawn->hostname_length = config->hostname ? strlen(config->hostname) : 0;
	spawn->loopback_up = (namespaces & ISOLATION_NS_NET) && !spare_network;
	/* corral makes and configures these namespaces (supervisor/
	 * task_network.c); the child only joins. A bridge task in a user
	 * namespace clones its own (`net` is in its namespaces), which corral
	 * configures between clone and exec. */
	spawn->join_network_namespace =
	    spare_network || config->network == NETWORK_GROUP ||
	    (config->network == NETWORK_BRIDGE && !(namespaces & ISOLATION_NS_USER));
	spawn->rlimits = config->rlimits;
	spawn->rlimit_count = config->rlimit_count;
	spawn->umask = config->umask;
	spawn->capabilities = &isolation->capabilities;
	spawn->no_new_privileges = config->no_new_privileges;
	spawn->seccomp = program;
	if (namespaces & ISOLATION_NS_USER) {
		user_namespace_maps_build(&isolation->user_maps, config);
		isolation->parent_rlimits = spawn->rlimits;
		isolation->parent_rlimit_count = spawn->rlimit_count;
		spawn->rlimit_count = 0;
	}
	if ((namespaces & ISOLATION_NS_PID) && config->init) {
		isolation->reaper_argv = make_reaper_argv(isolation, task, plan);
		spawn->reaper_argv = isolation->reaper_argv;
	}
	return 0;
}

bool task_isolation_takes_spare_network(const struct isolation_config *config)
{
	return config->enabled && config->network == NETWORK_NONE &&
	       (config->namespaces & ISOLATION_NS_NET) && !(config->namespaces & ISOLATION_NS_USER);
}

static bool has_additions(const struct start_additions *additions)
{
	return additions && (additions->mount_count || additions->device_count);
}

int task_isolation_refresh_mounts(struct task_isolation *isolation, const struct task_config *task,
				  const struct start_additions *additions, char *error,
				  size_t error_size)
{
	/* Without additions now or last time, the plan built at the first
	 * start still holds: a restart allocates nothing. */
	if (!isolation->enabled || !(task->isolation.namespaces & ISOLATION_NS_MOUNT) ||
	    (isolation->spawn.mounts && !has_additions(additions) &&
	     !isolation->mounts.has_additions))
		return 0;
	mount_plan_free(&isolation->mounts);
	isolation->spawn.mounts = NULL;
	if (mount_plan_build(&isolation->mounts, &task->isolation, additions, error, error_size) <
	    0)
		return -1;
	isolation->spawn.mounts = &isolation->mounts;
	return 0;
}

void task_isolation_refresh(struct task_isolation *isolation, const struct task_plan *plan)
{
	if (isolation->reaper_argv)
		isolation->reaper_argv[REAPER_PATH_INDEX] = plan->executable;
}

void task_isolation_free(struct task_isolation *isolation)
{
	give_back_program(isolation);
	if (isolation->reaper_argv)
		free(isolation->reaper_argv[1]);
	free(isolation->reaper_argv);
	mount_plan_free(&isolation->mounts);
	user_namespace_maps_free(&isolation->user_maps);
	memset(isolation, 0, sizeof(*isolation));
}
