/* `corral exec`: a command run inside a running task (docs/cli.md),
 * started as task_join.h says.
 *
 * Its stdin, stdout and stderr are pipes (or a pseudo-terminal) corral
 * makes (exec_streams.h); the client gets their other ends with the reply
 * and relays them, so corral's loop copies no byte. Its exit comes through
 * its pidfd, and the client gets it as its exit code.
 *
 * Each session has its own cgroup below the task's (cgroup_session.h):
 * a client that goes away takes the command's whole tree with it, setsid'd
 * children included, and what the command leaves behind when it exits is
 * killed then. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/loop.h"
#include "supervisor/control/control_protocol.h"
#include "supervisor/control/control_server.h"

struct task;
struct exec_session;

struct exec_sessions {
	struct loop *loop;
	struct exec_session *first;
	/* Ended, their leftovers being killed: their cgroups go once empty. */
	struct exec_session *draining;
	unsigned long serial; /* names the sessions' cgroups */
	/* Ended in this event batch: freed after it (exec_sessions_collect),
	 * since an event of the batch may still name their watches. */
	struct exec_session *retired;
};

/* Starts `request` (CONTROL_EXEC) in `task`. 0 with the session started,
 * the reply (with the client's ends of the streams) sent and the client
 * following it; -1 with `error` saying why not (nothing started). */
int exec_session_start(struct exec_sessions *sessions, struct task *task,
		       struct control_client *client, const struct control_request *request,
		       char *error, size_t error_size);

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
