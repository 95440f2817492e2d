/* The steps of a spawn that joins a running task (spawn.h, struct
 * spawn_join) which a task's own start does not take: corral's trip into
 * the task's pid namespace around the clone, and the child's entry into
 * the task's namespaces. Internal to isolation/spawn.c. */
#pragma once

#include <stdbool.h>

#include "isolation/spawn.h"

/* corral enters the task's pid namespace for its next clone. 1: entered,
 * `*own_namespace` holds corral's own for spawn_join_leave_pid_namespace;
 * 0: the task has none of its own; -errno: corral may not enter it (the
 * child must, and clone once more). */
int spawn_join_enter_pid_namespace(const struct spawn_join *join, int *own_namespace);

/* Back to corral's own pid namespace, and `own_namespace` closed. 0 or
 * -errno: corral's next children would start in the task's namespace. */
int spawn_join_leave_pid_namespace(int own_namespace);

/* Child side, before any other step that a join and a task share: the
 * limits, while the child is still in corral's user namespace, then
 * setns(namespace_fd, the task's namespaces, with_pid: the pid namespace
 * too). 0, or -errno with *stage and *index set. */
int spawn_join_enter(const struct spawn_join *join, int namespace_fd, bool with_pid, int *stage,
		     int *index);

/* Child side, last: execve of each candidate in turn, as execvp does.
 * Returns only when none ran, errno saying why (EACCES when one was found
 * but could not be run). */
void spawn_join_exec(const struct spawn_join *join, char *const *argv, char *const *envp);
