/* One memory.events watch per group: see group_oom_watch.h. */
#include "supervisor/tasks/group_oom_watch.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "isolation/cgroup_fs.h"
#include "isolation/cgroup_tree.h"
#include "supervisor/tasks/group.h"

static void on_memory_events(struct loop_watch *watch, uint32_t events)
{
	(void)events;
	struct group *group = watch->data;
	uint64_t kills; /* read through the watched fd, which rearms it */
	if (cgroup_fs_pread_key(watch->fd, "oom_kill", &kills) < 0)
		return;
	for (size_t i = 0; i < group->task_count; i++)
		task_report_oom_kills_while_running(group->tasks[i]);
}

void group_oom_watch_open(struct group *group)
{
	group->memory_events_watch =
	    (struct loop_watch){.fd = -1, .callback = on_memory_events, .data = group};
	if (group->cgroup_fd < 0 || !cgroup_tree_has_controller(group->services->cgroups, "memory"))
		return;
	int fd = openat(group->cgroup_fd, "memory.events", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	group->memory_events_watch.fd = fd;
	loop_watch_add(group->services->loop, &group->memory_events_watch, EPOLLPRI);
}

void group_oom_watch_close(struct group *group)
{
	struct loop_watch *watch = &group->memory_events_watch;
	if (watch->fd < 0)
		return;
	loop_watch_remove(group->services->loop, watch);
	close(watch->fd);
	watch->fd = -1;
}
