/* What a task needs at every start that can be worked out once, when corral
 * starts: its environment and the ids it runs as. Keeping this off the spawn
 * path means a restart costs no passwd lookup.
 *
 * The environment is kept as the task's own assignments over a borrowed
 * base (corral's environ); the envp array a start needs is made from them
 * for each start and freed after it: kept for every task, it was about
 * 450 bytes an idle task (measured: bench_supervisor --memory-only). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/model/config.h"

struct task_plan {
	char *executable; /* argv[0] resolved against the task's PATH, owned */
	/* NULL-terminated, borrowed: corral's own environment, which corral
	 * never changes, so every task shares its strings. */
	char *const *base_env;
	/* NULL-terminated, owned: the assignments laid over base_env, in
	 * order (a later one replaces an earlier one of the same name). One
	 * allocation, the strings after the array: free() it. */
	char **env_owned;
	/* base_env with env_owned laid over it, for holders of the pointer:
	 * NULL until task_plan_pin_environment(). The array is owned; its
	 * strings are base_env's or env_owned's. */
	char **envp;
	/* envp with the prestart hooks' env laid over it, owned; NULL: none,
	 * envp as it is. */
	char **start_envp;
	bool change_ids;
	/* With change_ids: leave the supplementary groups as they are. A user
	 * namespace made by a corral without CAP_SETGID denies setgroups
	 * (user_namespace.c); the task keeps corral's, unmapped there. */
	bool keep_groups;
	uid_t uid;
	gid_t gid;
	gid_t *groups; /* supplementary groups (the user's, then `groups`), owned */
	size_t group_count;
	/* `oom_score_adj:` as the text written to /proc; "": not set, the
	 * value corral started with. */
	char oom_score_adj[12];
};

/* The environment is `base_env` (corral's own) with the task's `env:` laid
 * over it, plus CORRAL_GROUP and CORRAL_TASK, and `corral_env` (NULL, or
 * NULL-terminated assignments corral gives the task, e.g. NOTIFY_SOCKET). `user` and `groups`
 * are resolved through the passwd and group databases; in a user namespace
 * they are ids inside it, and the task runs as 0:0 when `user` is not set. Returns 0, or -1 with
 * `error` saying what is wrong (e.g. `user "bob": no such user`). */
int task_plan_build(struct task_plan *plan, const struct task_config *task, const char *group_name,
		    char *const *base_env, char *const *corral_env, char *error, size_t error_size);

/* When argv[0] was not found on PATH at load, looks again (the program may
 * have been installed since, by a prestart task say). Cheap when it was. */
void task_plan_refresh_executable(struct task_plan *plan, const struct task_config *task);

/* The prestart hooks' variables (NULL-terminated "NAME=VALUE", or NULL)
 * for the next starts: they override the task's `env:`. */
void task_plan_set_additions(struct task_plan *plan, char *const *env);

/* What a start gives the task: a new NULL-terminated array, the
 * environment with the prestart hooks' additions when there are. The
 * caller frees the array (free()) once the start is done; its strings are
 * the plan's and live as long as it. */
char **task_plan_environment(const struct task_plan *plan);

/* The environment without the additions, kept in the plan for its life:
 * for holders of the pointer (a task's hooks, its exec probes). Made at
 * the first call. */
char *const *task_plan_pin_environment(struct task_plan *plan);

/* The assignment `from` of corral's own ("NOTIFY_SOCKET=@1a2b3") made
 * `to`, of the same length, where it lies: every holder of the pinned
 * environment sees it. 0, -ENOENT when there is none, -EINVAL for
 * another length. */
int task_plan_replace_assignment(struct task_plan *plan, const char *from, const char *to);

/* The value of NAME in the task's environment, or NULL, without making
 * envp. */
const char *task_plan_getenv(const struct task_plan *plan, const char *name);

void task_plan_free(struct task_plan *plan);
