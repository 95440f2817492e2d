#include "supervisor/pid1/fd_budget.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/resource.h>

#include "isolation/task_isolation.h"
#include "supervisor/http/http_server.h"
#include "supervisor/tasks/network_spares.h"

/* corral's own: stdio, the spawn slots, epoll, signalfd, timerfd, the
 * control socket and a few clients, the event log file, the termination
 * log, the socket to corral's own parent (NOTIFY_SOCKET). */
#define FDS_OF_CORRAL 64

/* What a running task holds (supervisor/tasks/task.c and its parts). */
static size_t fds_of_task(const struct task_config *task)
{
	/* Write ends of the output pipes and the cgroup's directory are
	 * opened for a spawn and closed after it (task_output.h). */
	size_t fds = 1; /* its output pipe's read end */
	fds += 1;       /* its pidfd */
	fds += 1;       /* cgroup.events while what a run left behind dies */
	if (task->log_separate_streams)
		fds += 1; /* stderr's own pipe, its read end */
	if (readiness_of(task)->kind == READINESS_NOTIFY_SYSTEMD)
		fds += 1; /* the notify socket */
	if (task->log_dir)
		fds += 2; /* the log file and its directory, held */
	if (isolation_has_own_network(&task->isolation))
		fds += 1; /* its network namespace */
	return fds;
}

size_t fd_budget(const struct config *config)
{
	size_t fds = FDS_OF_CORRAL;
	bool spares = false;
	if (config->http.kind != HTTP_LISTEN_OFF)
		fds += 1 + HTTP_CONNECTIONS_MAX; /* the listening socket, its connections */
	for (size_t g = 0; g < config->group_count; g++) {
		fds += 2; /* its cgroup's directory and memory.events (group_oom_watch.h) */
		for (size_t t = 0; t < config->groups[g].task_count; t++) {
			const struct task_config *task = &config->groups[g].tasks[t];
			fds += fds_of_task(task);
			spares = spares || task_isolation_takes_spare_network(&task->isolation);
		}
	}
	/* Once for all tasks of network mode none: the namespaces made ahead. */
	if (spares)
		fds += NETWORK_SPARES_SIZE;
	return fds;
}

int fd_budget_check(const struct config *config, bool after_raise, char *error, size_t error_size)
{
	struct rlimit limit;
	if (getrlimit(RLIMIT_NOFILE, &limit) < 0)
		return 0;
	rlim_t allowed = after_raise ? limit.rlim_max : limit.rlim_cur;
	size_t needed = fd_budget(config), tasks = 0;
	if (allowed == RLIM_INFINITY || needed <= allowed)
		return 0;
	for (size_t g = 0; g < config->group_count; g++)
		tasks += config->groups[g].task_count;
	snprintf(error, error_size,
		 "%zu task%s need about %zu fds, and RLIMIT_NOFILE allows %llu%s: some would "
		 "fail to start; raise the limit (ulimit -n, docker run --ulimit nofile=N, "
		 "LimitNOFILE= in a systemd unit)",
		 tasks, tasks == 1 ? "" : "s", needed, (unsigned long long)allowed,
		 after_raise ? " (its hard limit)" : "");
	return -1;
}
