/* A process inside a running task: `corral exec` (exec_session.h) and
 * probes that run inside their task (probe.h).
 *
 * This builds the request of a spawn in join mode (isolation/spawn.h,
 * struct spawn_join) from the task: its environment with the overrides,
 * its ids (or the request's user), its cgroup (or an exec session's below
 * it), its rlimits, umask, capabilities, no_new_privs and seccomp filter,
 * a pidfd of its process and which of that process's namespaces are not
 * corral's. The spawn does the rest; the process is corral's child, its
 * exit seen through its pidfd in the loop like any other. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "isolation/spawn.h"

struct task;

struct task_join_request {
	char *const *argv; /* looked up in the task's PATH, in its root */
	char *const *env;  /* NAME=VALUE over the task's environment, or NULL */
	const char *user;  /* name, uid or uid:gid; NULL: the task's */
	const char *cwd;   /* NULL: the task's */
	const int *fds;    /* its stdin, stdout, stderr; fewer: /dev/null */
	size_t fd_count;
	bool take_terminal; /* stdin is a terminal: make it the session's */
	/* The directory of a child cgroup of the task's v2 leaf to start in
	 * instead of the leaf (an exec session's, so that its whole tree can
	 * be killed); -1: the leaf. Not taken over. */
	int cgroup_fd;
};

/* A started process's failure messages name its command, working
 * directory and ids: what a spawn_request keeps of them, owned here. */
struct task_join {
	struct spawn_request names;
	char *command;
	char *cwd;
};

/* Starts the process; 0 with *result and *join filled, or -1 with `error`
 * (nothing started, nothing to release). The caller keeps the fds it
 * passed. */
int task_join_spawn(struct task *task, const struct task_join_request *request,
		    struct task_join *join, struct spawn_result *result, char *error,
		    size_t error_size);

/* The process never ran: "exec /x: No such file or directory" in
 * `message`; false when it did (EOF), or has not said yet. */
bool task_join_read_failure(const struct task_join *join, int error_fd, char *message, size_t size);

void task_join_release(struct task_join *join);
