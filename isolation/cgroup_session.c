#include "isolation/cgroup_session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "isolation/cgroup_fs.h"

int cgroup_session_create(struct cgroup_session *session, const struct task_cgroup *task,
			  unsigned long serial)
{
	session->dir_fd = -1;
	session->path = NULL;
	if (!task_cgroup_exists(task))
		return -ENOENT;
	int task_fd = task_cgroup_open_dir(task);
	if (task_fd < 0)
		return task_fd;
	char name[32];
	snprintf(name, sizeof(name), "exec-%lu", serial);
	int failure = 0;
	/* A serial never repeats within a run of corral: one that exists is
	 * a leftover of an earlier run's tree, and holds no session of ours. */
	if (mkdirat(task_fd, name, 0755) < 0 && errno != EEXIST)
		failure = -errno;
	if (!failure) {
		session->dir_fd = openat(task_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (session->dir_fd < 0)
			failure = -errno;
	}
	close(task_fd);
	if (failure)
		return failure;
	session->path = xasprintf("%s/%s", task->path, name);
	return 0;
}

int cgroup_session_kill(const struct cgroup_session *session)
{
	return cgroup_fs_kill(session->dir_fd);
}

int cgroup_session_open_events(const struct cgroup_session *session)
{
	int fd = openat(session->dir_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

bool cgroup_session_populated(int events_fd)
{
	uint64_t populated = 0;
	return cgroup_fs_pread_key(events_fd, "populated", &populated) == 0 && populated;
}

int cgroup_session_remove(const struct cgroup_session *session)
{
	if (!session->path || rmdir(session->path) == 0 || errno == ENOENT)
		return 0;
	return -errno;
}

void cgroup_session_release(struct cgroup_session *session)
{
	if (session->dir_fd >= 0)
		close(session->dir_fd);
	session->dir_fd = -1;
	free(session->path);
	session->path = NULL;
}
