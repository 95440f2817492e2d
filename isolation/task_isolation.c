#include "isolation/task_isolation.h"

#include <linux/capability.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/xmalloc.h"

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
	/* Not the cgroup namespace: at clone time its root would be corral's
	 * cgroup; the child unshares it once in its own. */
	return flags;
}

/* ["corral-reaper", PATH, ARGV0, ARGS..., NULL] (isolation/reaper/). */
static char **make_reaper_argv(const struct task_config *task, const struct task_plan *plan)
{
	char **argv = xcalloc(task->argc + 3, sizeof(*argv));
	argv[0] = "corral-reaper";
	argv[1] = plan->executable;
	for (size_t i = 0; i < task->argc; i++)
		argv[2 + i] = task->argv[i];
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
	/* The kernel loads a filter only with no_new_privs or CAP_SYS_ADMIN. */
	if (program->length && !config->no_new_privileges &&
	    !(config->capabilities & (UINT64_C(1) << CAP_SYS_ADMIN))) {
		snprintf(error, error_size,
			 "isolation: a seccomp filter needs no_new_privileges: true, or "
			 "sys_admin among the capabilities");
		task_isolation_free(isolation);
		return -1;
	}
	bool non_root = plan->change_ids && plan->uid != 0;
	capability_plan_build(config->capabilities, non_root, &isolation->capabilities);

	unsigned namespaces = config->namespaces;
	struct spawn_isolation *spawn = &isolation->spawn;
	spawn->clone_flags = clone_flags_of(namespaces);
	spawn->new_cgroup_namespace = namespaces & ISOLATION_NS_CGROUP;
	spawn->fresh_proc = (namespaces & ISOLATION_NS_PID) && (namespaces & ISOLATION_NS_MOUNT);
	spawn->hostname = config->hostname;
	spawn->hostname_length = config->hostname ? strlen(config->hostname) : 0;
	spawn->loopback_up = namespaces & ISOLATION_NS_NET;
	spawn->rlimits = config->rlimits;
	spawn->rlimit_count = config->rlimit_count;
	spawn->umask = config->umask;
	spawn->capabilities = &isolation->capabilities;
	spawn->no_new_privileges = config->no_new_privileges;
	spawn->seccomp = program;
	if ((namespaces & ISOLATION_NS_PID) && config->init) {
		isolation->reaper_argv = make_reaper_argv(task, plan);
		spawn->reaper_argv = isolation->reaper_argv;
	}
	return 0;
}

void task_isolation_refresh(struct task_isolation *isolation, const struct task_plan *plan)
{
	if (isolation->reaper_argv)
		isolation->reaper_argv[1] = plan->executable;
}

void task_isolation_free(struct task_isolation *isolation)
{
	give_back_program(isolation);
	free(isolation->reaper_argv);
	memset(isolation, 0, sizeof(*isolation));
}
