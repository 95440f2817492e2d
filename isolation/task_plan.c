#include "isolation/task_plan.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "config/text/ids.h"
#include "isolation/own_privileges.h"
#include "isolation/spawn.h"

static size_t name_length(const char *assignment)
{
	const char *equals = strchr(assignment, '=');
	return equals ? (size_t)(equals - assignment) : strlen(assignment);
}

/* Replaces the variable of the same name, or appends. */
static void env_set(char **envp, size_t *count, char *assignment)
{
	size_t length = name_length(assignment);
	for (size_t i = 0; i < *count; i++) {
		if (name_length(envp[i]) == length && strncmp(envp[i], assignment, length) == 0) {
			free(envp[i]);
			envp[i] = assignment;
			return;
		}
	}
	envp[(*count)++] = assignment;
}

static size_t count_env(char *const *env)
{
	size_t count = 0;
	while (env && env[count])
		count++;
	return count;
}

/* Replaces the variable of the same name, or appends; the entry replaced
 * is not freed: it is borrowed, or in env_owned. */
static void env_put(char **envp, size_t *count, char *assignment)
{
	size_t length = name_length(assignment);
	for (size_t i = 0; i < *count; i++) {
		if (name_length(envp[i]) == length && strncmp(envp[i], assignment, length) == 0) {
			envp[i] = assignment;
			return;
		}
	}
	envp[(*count)++] = assignment;
}

/* The task's own assignments, in the order they are laid over base_env:
 * `env:`, CORRAL_GROUP, CORRAL_TASK, CORRAL_INSTANCE, then corral_env.
 * base_env's strings are borrowed, not copied: with 1000 tasks, a copy of
 * corral's environment each was megabytes. The array and its strings are
 * one allocation: a string each cost malloc's rounding and header. */
static void build_environment(struct task_plan *plan, const struct task_config *task,
			      const char *group_name, char *const *base_env,
			      char *const *corral_env, char *const *account_env)
{
	char instance[32] = "";
	if (task->instance_of)
		snprintf(instance, sizeof(instance), "CORRAL_INSTANCE=%u", task->instance);
	size_t group_length = strlen("CORRAL_GROUP=") + strlen(group_name) + 1;
	size_t task_length = strlen("CORRAL_TASK=") + strlen(task->name) + 1;
	size_t own_count = count_env(account_env) + task->env_count + count_env(corral_env) + 3;
	size_t bytes = group_length + task_length + strlen(instance) + 1;
	for (size_t i = 0; account_env && account_env[i]; i++)
		bytes += strlen(account_env[i]) + 1;
	for (size_t i = 0; i < task->env_count; i++)
		bytes += strlen(task->env[i]) + 1;
	for (size_t i = 0; corral_env && corral_env[i]; i++)
		bytes += strlen(corral_env[i]) + 1;

	char **owned = xcalloc(1, (own_count + 1) * sizeof(*owned) + bytes);
	char *next = (char *)(owned + own_count + 1);
	size_t made = 0;
#define TAKE(...)                                                                                  \
	do {                                                                                       \
		owned[made++] = next;                                                              \
		next += sprintf(next, __VA_ARGS__) + 1;                                            \
	} while (0)
	/* First, so that the task's own `env:` may set them otherwise. */
	for (size_t i = 0; account_env && account_env[i]; i++)
		TAKE("%s", account_env[i]);
	for (size_t i = 0; i < task->env_count; i++)
		TAKE("%s", task->env[i]);
	TAKE("CORRAL_GROUP=%s", group_name);
	TAKE("CORRAL_TASK=%s", task->name);
	if (instance[0])
		TAKE("%s", instance);
	for (size_t i = 0; corral_env && corral_env[i]; i++)
		TAKE("%s", corral_env[i]);
#undef TAKE
	owned[made] = NULL;
	plan->base_env = base_env;
	plan->env_owned = owned;
}

static char **merge_environment(const struct task_plan *plan)
{
	size_t base_count = count_env(plan->base_env);
	size_t own_count = count_env(plan->env_owned);
	char **envp = xcalloc(base_count + own_count + 1, sizeof(*envp));
	size_t count = 0;
	for (size_t i = 0; i < base_count; i++)
		env_put(envp, &count, plan->base_env[i]);
	for (size_t i = 0; i < own_count; i++)
		env_put(envp, &count, plan->env_owned[i]);
	envp[count] = NULL;
	return envp;
}

char *const *task_plan_pin_environment(struct task_plan *plan)
{
	if (!plan->envp)
		plan->envp = merge_environment(plan);
	return plan->envp;
}

/* "NAME=value" as the envp made from the plan would have it (the last
 * assignment of NAME wins), or NULL. */
static const char *find_assignment(const struct task_plan *plan, const char *name)
{
	size_t length = strlen(name);
	for (size_t i = count_env(plan->env_owned); i-- > 0;)
		if (strncmp(plan->env_owned[i], name, length) == 0 &&
		    plan->env_owned[i][length] == '=')
			return plan->env_owned[i];
	for (char *const *entry = plan->base_env; entry && *entry; entry++)
		if (strncmp(*entry, name, length) == 0 && (*entry)[length] == '=')
			return *entry;
	return NULL;
}

int task_plan_replace_assignment(struct task_plan *plan, const char *from, const char *to)
{
	if (strlen(from) != strlen(to))
		return -EINVAL;
	for (size_t i = 0; plan->env_owned && plan->env_owned[i]; i++)
		if (strcmp(plan->env_owned[i], from) == 0) {
			memcpy(plan->env_owned[i], to, strlen(to));
			return 0;
		}
	return -ENOENT;
}

const char *task_plan_getenv(const struct task_plan *plan, const char *name)
{
	const char *assignment = find_assignment(plan, name);
	return assignment ? assignment + strlen(name) + 1 : NULL;
}

/* A number, in range (config/text/ids.h); else a name. The loader refused
 * numbers out of range, so none reaches this as a name. */
static bool parse_id(const char *text, unsigned long *out)
{
	uint32_t id;
	if (id_text_read(text, strlen(text), &id) != ID_TEXT_NUMBER)
		return false;
	*out = id;
	return true;
}

static int resolve_group(const char *spec, gid_t *gid, char *error, size_t error_size)
{
	unsigned long number;
	if (parse_id(spec, &number)) {
		*gid = (gid_t)number;
		return 0;
	}
	struct group *entry = getgrnam(spec);
	if (!entry) {
		snprintf(error, error_size, "group \"%s\": no such group", spec);
		return -1;
	}
	*gid = entry->gr_gid;
	return 0;
}

/* The supplementary groups of a passwd user, as login(1) would set them. */
static void load_supplementary_groups(struct task_plan *plan, const char *user_name, gid_t primary)
{
	int count = 16;
	for (;;) {
		plan->groups = xreallocarray(plan->groups, (size_t)count, sizeof(gid_t));
		int wanted = count;
		if (getgrouplist(user_name, primary, plan->groups, &wanted) >= 0) {
			plan->group_count = (size_t)wanted;
			return;
		}
		count = wanted > count ? wanted : count * 2;
	}
}

/* "uid", "uid:gid", "name", "name:group". A uid without a passwd entry runs
 * with gid = uid and no supplementary groups, rather than gid 0. */
/* The variables a login as the task's user sets, as Docker (HOME) and
 * systemd's User= (HOME, USER, LOGNAME) do: without them the task keeps
 * corral's HOME=/root and a shell as that user fails reading root's
 * files. A uid without a passwd entry gets HOME=/, as Docker gives it. */
struct account_env {
	char *assignments[4];
};

static void account_env_set(struct account_env *account, const struct passwd *entry)
{
	if (!entry) {
		account->assignments[0] = xstrdup("HOME=/");
		return;
	}
	account->assignments[0] =
	    xasprintf("HOME=%s", entry->pw_dir && entry->pw_dir[0] ? entry->pw_dir : "/");
	account->assignments[1] = xasprintf("USER=%s", entry->pw_name);
	account->assignments[2] = xasprintf("LOGNAME=%s", entry->pw_name);
}

static void account_env_free(struct account_env *account)
{
	for (size_t i = 0; account->assignments[i]; i++)
		free(account->assignments[i]);
}

static int resolve_user(struct task_plan *plan, const char *spec, struct account_env *account,
			char *error, size_t error_size)
{
	char *user = xstrdup(spec);
	char *group_part = strchr(user, ':');
	if (group_part)
		*group_part++ = '\0';

	unsigned long number;
	struct passwd *entry;
	int result = -1;
	if (parse_id(user, &number)) {
		plan->uid = (uid_t)number;
		entry = getpwuid(plan->uid);
		plan->gid = entry ? entry->pw_gid : (gid_t)number;
	} else {
		entry = getpwnam(user);
		if (!entry) {
			snprintf(error, error_size, "user \"%s\": no such user", user);
			goto out;
		}
		plan->uid = entry->pw_uid;
		plan->gid = entry->pw_gid;
	}
	/* Before resolve_group: getgrnam may reuse the static passwd entry. */
	account_env_set(account, entry);
	char *name = entry ? xstrdup(entry->pw_name) : NULL;
	if (group_part && resolve_group(group_part, &plan->gid, error, error_size) < 0) {
		free(name);
		goto out;
	}
	if (name)
		load_supplementary_groups(plan, name, plan->gid);
	free(name);
	plan->change_ids = true;
	result = 0;
out:
	free(user);
	return result;
}

static void add_group(struct task_plan *plan, gid_t gid)
{
	for (size_t i = 0; i < plan->group_count; i++)
		if (plan->groups[i] == gid)
			return;
	plan->groups = xreallocarray(plan->groups, plan->group_count + 1, sizeof(gid_t));
	plan->groups[plan->group_count++] = gid;
}

/* The ids a task runs as when `user` does not say: corral's own, except in
 * a user namespace, where corral's ids mean nothing (they may not even be
 * mapped) and the task is root of its namespace, 0:0, without corral's
 * supplementary groups. */
static void default_ids(struct task_plan *plan, const struct task_config *task)
{
	if (task->isolation.enabled && (task->isolation.namespaces & ISOLATION_NS_USER)) {
		plan->change_ids = true;
		plan->keep_groups = !(own_permitted_capabilities() & (1ull << CAP_SETGID));
		return; /* 0:0, no groups */
	}
	/* `groups` alone: corral's ids, these supplementary groups. */
	if (task->groups) {
		plan->change_ids = true;
		plan->uid = getuid();
		plan->gid = getgid();
	}
}

void task_plan_refresh_executable(struct task_plan *plan, const struct task_config *task)
{
	if (plan->executable && strchr(plan->executable, '/'))
		return;
	char buffer[PATH_MAX];
	/* Only PATH is looked at: no envp is made for it. */
	char *const path_env[] = {(char *)find_assignment(plan, "PATH"), NULL};
	const char *found = spawn_resolve_executable_in(task->isolation.rootfs, task->argv[0],
							path_env, buffer, sizeof(buffer));
	if (plan->executable && strcmp(found, plan->executable) == 0)
		return;
	free(plan->executable);
	plan->executable = xstrdup(found);
}

int task_plan_build(struct task_plan *plan, const struct task_config *task, const char *group_name,
		    char *const *base_env, char *const *corral_env, char *error, size_t error_size)
{
	memset(plan, 0, sizeof(*plan));
	struct account_env account = {0};
	if (task->user && resolve_user(plan, task->user, &account, error, error_size) < 0) {
		account_env_free(&account);
		goto fail;
	}
	build_environment(plan, task, group_name, base_env, corral_env, account.assignments);
	account_env_free(&account);
	if (task->oom_score_adj_set)
		snprintf(plan->oom_score_adj, sizeof(plan->oom_score_adj), "%d",
			 task->oom_score_adj);
	task_plan_refresh_executable(plan, task);
	if (!task->user)
		default_ids(plan, task);
	for (size_t i = 0; i < task->group_count; i++) {
		gid_t gid;
		char why[160];
		if (resolve_group(task->groups[i], &gid, why, sizeof(why)) < 0) {
			snprintf(error, error_size, "groups: %s", why);
			goto fail;
		}
		add_group(plan, gid);
	}
	return 0;
fail:
	task_plan_free(plan);
	return -1;
}

void task_plan_set_additions(struct task_plan *plan, char *const *env)
{
	string_vector_free(plan->start_envp);
	plan->start_envp = NULL;
	if (!env || !env[0])
		return;
	char **base = merge_environment(plan);
	size_t count = count_env(base);
	char **envp = xcalloc(count + count_env(env) + 1, sizeof(*envp));
	for (size_t i = 0; i < count; i++)
		envp[i] = xstrdup(base[i]);
	free(base);
	/* Hooks may not set corral's own variables (hooks/hook_protocol.c),
	 * so laying them over everything overrides only `env:` and corral's
	 * inherited environment. */
	for (size_t i = 0; env[i]; i++)
		env_set(envp, &count, xstrdup(env[i]));
	envp[count] = NULL;
	plan->start_envp = envp;
}

char **task_plan_environment(const struct task_plan *plan)
{
	if (!plan->start_envp)
		return merge_environment(plan);
	size_t count = count_env(plan->start_envp);
	char **envp = xcalloc(count + 1, sizeof(*envp));
	memcpy(envp, plan->start_envp, count * sizeof(*envp));
	return envp;
}

void task_plan_free(struct task_plan *plan)
{
	string_vector_free(plan->start_envp);
	free(plan->env_owned); /* one allocation with its strings */
	free(plan->envp);
	free(plan->executable);
	free(plan->groups);
	memset(plan, 0, sizeof(*plan));
}
