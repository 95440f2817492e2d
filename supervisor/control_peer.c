#include "supervisor/control_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config/xmalloc.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* Every namespace a task may be given (and the user namespace, which
 * owns the others). */
static const char *const namespace_names[CONTROL_PEER_NAMESPACES] = {
    "cgroup", "ipc", "mnt", "net", "pid", "user", "uts",
};

/* The cgroup leaf corral itself lives in (isolation/cgroup_tree.h). */
#define SUPERVISOR_LEAF "supervisor"

void control_peer_rules_init(struct control_peer_rules *rules, const char *task_cgroup_root)
{
	memset(rules, 0, sizeof(*rules));
	rules->task_cgroup_root = task_cgroup_root ? xstrdup(task_cgroup_root) : NULL;
	for (size_t i = 0; i < CONTROL_PEER_NAMESPACES; i++) {
		char path[64];
		struct stat status;
		snprintf(path, sizeof(path), "/proc/self/ns/%s", namespace_names[i]);
		if (stat(path, &status) < 0)
			continue; /* a kernel without it: nobody has one then */
		rules->has_namespace[i] = true;
		rules->namespace_device[i] = status.st_dev;
		rules->namespace_inode[i] = status.st_ino;
	}
}

void control_peer_rules_free(struct control_peer_rules *rules)
{
	free(rules->task_cgroup_root);
	rules->task_cgroup_root = NULL;
}

bool control_peer_v2_cgroup(const char *text, char *path, size_t size)
{
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t length = end ? (size_t)(end - line) : strlen(line);
		if (length >= 3 && strncmp(line, "0::", 3) == 0 && length - 3 < size) {
			memcpy(path, line + 3, length - 3);
			path[length - 3] = '\0';
			return true;
		}
		line = end ? end + 1 : NULL;
	}
	return false;
}

bool control_peer_task_of_cgroup(const char *root, const char *path, char *task, size_t size)
{
	size_t root_length = strlen(root);
	if (strncmp(path, root, root_length) != 0 || path[root_length] != '/')
		return false;
	const char *group = path + root_length + 1;
	size_t group_length = strcspn(group, "/");
	if (group_length == 0 || (group_length == sizeof(SUPERVISOR_LEAF) - 1 &&
				  strncmp(group, SUPERVISOR_LEAF, group_length) == 0))
		return false;
	/* A group's own cgroup holds no process of corral's making: one
	 * there came from a task, and is named by the group alone. */
	const char *name = group[group_length] == '/' ? group + group_length + 1 : "";
	size_t name_length = strcspn(name, "/");
	if (group_length + 1 + name_length >= size)
		return false;
	snprintf(task, size, "%.*s%s%.*s", (int)group_length, group, name_length ? "/" : "",
		 (int)name_length, name);
	return true;
}

/* The connecting process, held so that its pid cannot be reused while we
 * look: SO_PEERPIDFD (Linux 6.5), else pidfd_open of the pid, which
 * leaves the instant between the connect and this call. */
static int peer_pidfd(int fd, pid_t pid)
{
	int pidfd = -1;
	socklen_t size = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &size) == 0 && pidfd >= 0)
		return pidfd;
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static bool still_alive(int pidfd)
{
	/* A pidfd polls readable once its process has exited. */
	struct pollfd poller = {.fd = pidfd, .events = POLLIN};
	return poll(&poller, 1, 0) == 0;
}

static void find_foreign_namespaces(const struct control_peer_rules *rules, pid_t pid,
				    struct control_peer *peer)
{
	size_t used = 0;
	for (size_t i = 0; i < CONTROL_PEER_NAMESPACES; i++) {
		char path[64];
		struct stat status;
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, namespace_names[i]);
		/* EACCES: a corral that is not root may not look at another
		 * user's process; its tasks run as its own user, which it may. */
		if (!rules->has_namespace[i] || stat(path, &status) < 0)
			continue;
		if (status.st_dev == rules->namespace_device[i] &&
		    status.st_ino == rules->namespace_inode[i])
			continue;
		int wrote = snprintf(peer->foreign_namespaces + used,
				     sizeof(peer->foreign_namespaces) - used, "%s%s",
				     used ? ", " : "", namespace_names[i]);
		if (wrote > 0 && (size_t)wrote < sizeof(peer->foreign_namespaces) - used)
			used += (size_t)wrote;
	}
}

static void find_task_cgroup(const struct control_peer_rules *rules, pid_t pid,
			     struct control_peer *peer)
{
	if (!rules->task_cgroup_root)
		return;
	char path[64], text[8192], cgroup[4096];
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t length = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (length <= 0)
		return;
	text[length] = '\0';
	if (control_peer_v2_cgroup(text, cgroup, sizeof(cgroup)))
		control_peer_task_of_cgroup(rules->task_cgroup_root, cgroup, peer->task,
					    sizeof(peer->task));
}

int control_peer_identify(int fd, const struct control_peer_rules *rules, struct control_peer *peer)
{
	memset(peer, 0, sizeof(*peer));
	socklen_t size = sizeof(peer->credentials);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer->credentials, &size) < 0)
		return -errno;
	pid_t pid = peer->credentials.pid;
	if (pid == 0) {
		peer->above_corral = true;
		return 0;
	}
	int pidfd = peer_pidfd(fd, pid);
	if (pidfd < 0) {
		peer->gone = true;
		return 0;
	}
	find_task_cgroup(rules, pid, peer);
	find_foreign_namespaces(rules, pid, peer);
	peer->gone = !still_alive(pidfd);
	close(pidfd);
	return 0;
}
