/* A child cgroup of a task's v2 leaf for one `corral exec` session.
 *
 * What the session's command starts stays in it whatever it does (setsid,
 * a double fork, a new process group), so that one cgroup.kill ends the
 * whole tree when the client goes away: a process group would let a
 * setsid'd child escape. Being below the task's leaf, it counts in the
 * task's limits (they are hierarchical), and the task's own cgroup.kill
 * takes it too. The leaf's subtree_control stays empty, so the task's
 * processes may stay in the leaf itself. */
#pragma once

#include <stdbool.h>

#include "isolation/cgroup_task.h"

struct cgroup_session {
	int dir_fd; /* -1: none */
	char *path; /* absolute */
};

/* Makes TASK_LEAF/exec-SERIAL. 0, or -errno (the task has no v2 leaf:
 * -ENOENT) with `session->dir_fd` -1. */
int cgroup_session_create(struct cgroup_session *session, const struct task_cgroup *task,
			  unsigned long serial);

/* SIGKILLs every process in it (cgroup.kill, else each of cgroup.procs). */
int cgroup_session_kill(const struct cgroup_session *session);

/* Its cgroup.events, for the loop to watch (EPOLLPRI) until it is empty. */
int cgroup_session_open_events(const struct cgroup_session *session);

/* Whether a process is left in it, read through an open cgroup.events. */
bool cgroup_session_populated(int events_fd);

/* Removes the directory: 0, -EBUSY while processes are left in it (killed
 * ones need a moment to exit), another -errno. Gone already is 0. */
int cgroup_session_remove(const struct cgroup_session *session);

/* Closes what it holds (the directory stays; see cgroup_session_remove). */
void cgroup_session_release(struct cgroup_session *session);
