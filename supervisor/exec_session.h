/* `corral exec`: a command run inside a running task (docs/cli.md).
 *
 * The command joins the task's namespaces (setns through a pidfd of the
 * task's process: its root comes with the mount namespace), its cgroup,
 * and takes its user and groups, capabilities, no_new_privs, seccomp
 * filter, rlimits, umask, environment and working directory. Its stdin,
 * stdout and stderr are the CLI's own fds, passed over the control socket
 * (SCM_RIGHTS): corral relays nothing.
 *
 * How, without blocking the loop: corral forks a helper, which joins the
 * cgroup and the namespaces and clones the command with CLONE_PARENT, so
 * that the command is corral's own child, inside the task's pid namespace;
 * the helper exits at once. The command's exec failure comes back on a
 * CLOEXEC pipe, its exit through its pidfd, and the CLI gets it as its
 * exit code. A client that goes away takes its command with it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "supervisor/control_protocol.h"
#include "supervisor/control_server.h"
#include "supervisor/loop.h"

struct task;
struct exec_session;

/* ---- a process inside a running task (exec, and probes run inside) ---- */

struct task_join_request {
	char *const *argv;     /* looked up in the task's PATH, in its root */
	char *const *env;      /* NAME=VALUE over the task's environment, or NULL */
	const char *user;      /* name, uid or uid:gid; NULL: the task's */
	const char *cwd;       /* NULL: the task's */
	const int *fds;        /* its stdin, stdout, stderr; fewer: /dev/null */
	size_t fd_count;
};

struct task_join_result {
	pid_t pid;    /* corral's own child, in the task's pid namespace */
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

struct exec_sessions {
	struct loop *loop;
	struct exec_session *first;
	/* Ended in this event batch: freed after it (exec_sessions_collect),
	 * since an event of the batch may still name their watches. */
	struct exec_session *retired;
};

/* Starts `request` (CONTROL_EXEC) in `task`, with `fds` as stdin, stdout,
 * stderr (fewer: /dev/null for the rest; taken over). 0 with the session
 * started, the reply sent and the client following it; -1 with `error`
 * saying why not (nothing started, the fds closed). */
int exec_session_start(struct exec_sessions *sessions, struct task *task,
		       struct control_client *client, const struct control_request *request,
		       int *fds, size_t fd_count, char *error, size_t error_size);

/* The SIGCHLD sweep found `pid` exited: true when it is a session's
 * command, now reaped (and its client told). */
bool exec_sessions_reap(struct exec_sessions *sessions, pid_t pid);

/* The session's client went away (control_server_ops.exec_client_gone):
 * its command is killed. */
void exec_session_client_gone(struct exec_sessions *sessions, const void *session);

/* The sessions in `task` now, as a JSON array for status: [{pid, command}]. */
struct json_writer;
void exec_sessions_of_task_write(const struct exec_sessions *sessions, const struct task *task,
				 struct json_writer *writer);

/* `task` is going away: its sessions' commands are killed and forgotten. */
void exec_sessions_forget_task(struct exec_sessions *sessions, const struct task *task);

/* After each event batch: frees the sessions that ended in it. */
void exec_sessions_collect(struct exec_sessions *sessions);

/* At exit: every command killed and reaped. */
void exec_sessions_close(struct exec_sessions *sessions);
