#include "supervisor/control/control_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/xmalloc.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* The cgroup leaf corral itself lives in (isolation/cgroup_tree.h). */
#define SUPERVISOR_LEAF "supervisor"
/* Where systemd puts a delegated unit's control processes (ExecReload=,
 * ExecStartPost=...), beside corral's own cgroups: `systemctl reload`
 * runs `corral reload` there (docs/systemd.md). No group is named so
 * (names start with a letter or digit); a task that moved itself there
 * is still told by its descent from corral. */
#define SYSTEMD_CONTROL_LEAF ".control"

static bool is_leaf(const char *name, size_t length, const char *leaf)
{
	return length == strlen(leaf) && strncmp(name, leaf, length) == 0;
}

void control_peer_rules_init(struct control_peer_rules *rules, const char *task_cgroup_root)
{
	memset(rules, 0, sizeof(*rules));
	rules->task_cgroup_root = task_cgroup_root ? xstrdup(task_cgroup_root) : NULL;
	rules->corral_pid = getpid();
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
	if (group_length == 0 || is_leaf(group, group_length, SUPERVISOR_LEAF) ||
	    is_leaf(group, group_length, SYSTEMD_CONTROL_LEAF))
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

pid_t control_peer_stat_parent(const char *text)
{
	/* "PID (COMMAND) STATE PPID ...": COMMAND ends at the last ')'. */
	const char *end = strrchr(text, ')');
	if (!end)
		return -1;
	char state;
	int parent;
	if (sscanf(end + 1, " %c %d", &state, &parent) != 2 || parent < 0)
		return -1;
	return (pid_t)parent;
}

static pid_t parent_of(pid_t pid)
{
	char path[64], text[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t length = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (length <= 0)
		return -1;
	text[length] = '\0';
	return control_peer_stat_parent(text);
}

/* Pid chains are short; the bound only keeps a chain read while it
 * changes from looping. */
#define ANCESTRY_DEPTH_MAX 4096
/* Walks cut short by an ancestor that exited while it was read. */
#define ANCESTRY_TRIES 8

/* 1: corral is an ancestor of `pid`; 0: it is not; -1: an ancestor exited
 * while the chain was read. An ancestor that exits leaves its children to
 * the nearest subreaper: corral for its own descendants, so a walk read
 * again still ends at corral. An operator's chain ends at pid 1 (or at 0:
 * a process that entered corral's pid namespace from outside, as podman
 * exec and kubectl exec do) without passing corral. */
static int walk_ancestry(const struct control_peer_rules *rules, pid_t pid)
{
	for (int depth = 0; depth < ANCESTRY_DEPTH_MAX; depth++) {
		pid_t parent = parent_of(pid);
		if (parent == rules->corral_pid)
			return 1;
		if (parent < 0)
			return depth == 0 ? 0 : -1;
		if (parent <= 1)
			return 0;
		pid = parent;
	}
	return -1;
}

static void find_descent(const struct control_peer_rules *rules, pid_t pid,
			 struct control_peer *peer)
{
	for (int tries = 0; tries < ANCESTRY_TRIES; tries++) {
		int found = walk_ancestry(rules, pid);
		if (found >= 0) {
			peer->descends_from_corral = found;
			return;
		}
	}
	/* Cannot be told from a task: not let in (it may try again). */
	peer->gone = true;
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

/* The rest of `peer`, for `pid` held by `pidfd` (closed here). */
static void identify_held(const struct control_peer_rules *rules, pid_t pid, int pidfd,
			  struct control_peer *peer)
{
	if (pidfd < 0) {
		peer->gone = true;
		return;
	}
	find_task_cgroup(rules, pid, peer);
	find_descent(rules, pid, peer);
	peer->gone = !still_alive(pidfd);
	close(pidfd);
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
	identify_held(rules, pid, peer_pidfd(fd, pid), peer);
	return 0;
}

void control_peer_identify_pid(pid_t pid, const struct control_peer_rules *rules,
			       struct control_peer *peer)
{
	memset(peer, 0, sizeof(*peer));
	peer->credentials.pid = pid;
	identify_held(rules, pid, (int)syscall(SYS_pidfd_open, pid, 0), peer);
}
