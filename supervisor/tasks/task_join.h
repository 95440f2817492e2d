/* A process inside a running task: `corral exec` (exec_session.h) and
 * probes that run inside their task (probe.h).
 *
 * The process joins the task's namespaces (setns through a pidfd of the
 * task's process: its root comes with the mount namespace), its cgroup
 * (or a child of it), and takes its user and groups, capabilities,
 * no_new_privs, seccomp filter, rlimits, umask, environment and working
 * directory.
 *
 * How, without blocking the loop: corral forks a helper, which joins the
 * cgroup and the namespaces and clones the process with CLONE_PARENT, so
 * that it is corral's own child, inside the task's pid namespace; the
 * helper exits at once. An exec failure comes back on a CLOEXEC pipe, the
 * exit through the pidfd. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct task;

struct task_join_request {
	char *const *argv; /* looked up in the task's PATH, in its root */
	char *const *env;  /* NAME=VALUE over the task's environment, or NULL */
	const char *user;  /* name, uid or uid:gid; NULL: the task's */
	const char *cwd;   /* NULL: the task's */
	const int *fds;    /* its stdin, stdout, stderr; fewer: /dev/null */
	size_t fd_count;
	/* The cgroup.procs of a child cgroup of the task's v2 leaf to join
	 * instead of the leaf (an exec session's, so that its whole tree can
	 * be killed); -1: the leaf. Not taken over. */
	int cgroup_procs_fd;
};

struct task_join_result {
	pid_t pid; /* corral's own child, in the task's pid namespace */
	int pidfd;
	int error_fd; /* EOF once it exec'd; else task_join_read_failure */
};

/* Starts the process; 0, or -1 with `error` (nothing started). The
 * caller keeps the fds it passed. */
int task_join_spawn(struct task *task, const struct task_join_request *request,
		    struct task_join_result *result, char *error, size_t error_size);

/* The process never ran: "exec /x: No such file or directory" in
 * `message`; false when it did (EOF). */
bool task_join_read_failure(int error_fd, char *message, size_t size, const char *command);
