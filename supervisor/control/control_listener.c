/* The socket file: its directory made with the right mode, a default
 * place used only when it is corral's own, a stale socket replaced and
 * anything else at the path refused, the socket bound 0600 (0660 for a
 * control group) from birth, and removed at the end only when it is still
 * ours. Connections are control_connections.c's. */
#include "supervisor/control/control_server.h"

#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/xmalloc.h"
#include "supervisor/control/control_server_internal.h"

/* mkdir -p, giving the directories corral creates `mode`. */
static int make_directories(const char *path, mode_t mode, gid_t group, bool has_group)
{
	char buffer[PATH_MAX];
	snprintf(buffer, sizeof(buffer), "%s", path);
	for (char *slash = buffer + 1;; slash++) {
		bool last = *slash == '\0';
		if (*slash != '/' && !last)
			continue;
		*slash = '\0';
		if (mkdir(buffer, mode) == 0) {
			if (has_group && chown(buffer, (uid_t)-1, group) < 0)
				return -errno;
			chmod(buffer, mode); /* not reduced by the umask */
		} else if (errno != EEXIST) {
			return -errno;
		}
		if (last)
			return 0;
		*slash = '/';
	}
}

/* A default place's directory, when it was there before us (/tmp is
 * everyone's): corral's own, or someone could swap the socket the CLI
 * connects to. -EPERM when not, so that the next place is tried. */
static int check_own_directory(const char *directory, char *error, size_t error_size)
{
	struct stat status;
	if (lstat(directory, &status) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "%s: %s", directory, strerror(-failure));
		return failure;
	}
	if (!S_ISDIR(status.st_mode) || status.st_uid != geteuid() || (status.st_mode & 022)) {
		snprintf(error, error_size,
			 "%s is not corral's own directory (owner uid %u, mode %04o): not used",
			 directory, (unsigned)status.st_uid, (unsigned)(status.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

bool control_server_listener_at(const char *path, int *connect_errno, char *error,
				size_t error_size)
{
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0) {
		*connect_errno = errno;
		return false;
	}
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
	int connected = connect(probe, (struct sockaddr *)&address, sizeof(address));
	*connect_errno = connected == 0 ? 0 : errno;
	close(probe);
	if (connected == 0)
		snprintf(error, error_size,
			 "another corral is already listening on %s: stop it, or give this one "
			 "another socket (--socket, CORRAL_SOCKET or socket:)",
			 path);
	return connected == 0;
}

/* What is at `path` already: nothing, a stale socket (removed), or
 * something we must not touch (-ENOTSOCK, -EADDRINUSE, -EBUSY), so that
 * only a failure to look (-EACCES) lets the caller try another place. */
static int clear_stale_socket(const char *path, char *error, size_t error_size)
{
	struct stat status;
	if (lstat(path, &status) < 0) {
		int failure = -errno;
		if (failure == -ENOENT)
			return 0;
		snprintf(error, error_size, "%s: %s", path, strerror(-failure));
		return failure;
	}
	if (!S_ISSOCK(status.st_mode)) {
		snprintf(error, error_size,
			 "%s exists and is not a socket: refusing to replace it (remove it, or "
			 "set socket: to another path)",
			 path);
		return -ENOTSOCK;
	}
	int connect_errno = 0;
	if (control_server_listener_at(path, &connect_errno, error, error_size))
		return -EADDRINUSE;
	if (connect_errno != ECONNREFUSED) {
		snprintf(error, error_size, "%s: cannot tell whether it is in use: %s", path,
			 strerror(connect_errno));
		return -EBUSY;
	}
	/* Left behind by a corral that died: nobody listens. */
	unlink(path);
	return 0;
}

/* The listening socket's fd, or -errno with `error`. */
static int open_listener(struct control_server *server, const char *path, char *error,
			 size_t error_size)
{
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(address.sun_path)) {
		snprintf(error, error_size, "%s: path too long for a socket", path);
		return -ENAMETOOLONG;
	}
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		int failure = -errno;
		snprintf(error, error_size, "socket: %s", strerror(-failure));
		return failure;
	}
	/* The umask makes it 0600 from birth: no window where others could
	 * connect before the chmod. */
	mode_t old_umask = umask(0177);
	int bound = bind(fd, (struct sockaddr *)&address, sizeof(address));
	int bind_errno = errno;
	umask(old_umask);
	if (bound < 0) {
		snprintf(error, error_size, "bind %s: %s", path, strerror(bind_errno));
		return -bind_errno;
	}
	if (server->has_group &&
	    (chown(path, (uid_t)-1, server->group) < 0 || chmod(path, 0660) < 0)) {
		int failure = -errno;
		snprintf(error, error_size, "%s: giving it to group %s: %s", path,
			 server->group_name, strerror(-failure));
		unlink(path);
		return failure;
	}
	struct stat status;
	if (listen(fd, SOMAXCONN) < 0 || fstat(fd, &status) < 0 || stat(path, &status) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "listen %s: %s", path, strerror(-failure));
		unlink(path);
		return failure;
	}
	server->device = status.st_dev;
	server->inode = status.st_ino;
	return TAKE_FD(fd);
}

int control_server_open(struct control_server **out, struct loop *loop, const char *path,
			bool path_is_default, const struct control_server_settings *settings,
			const struct control_server_ops *ops, char *error, size_t error_size)
{
	*out = NULL;
	const char *control_group = settings->control_group;
	struct control_server *server = xcalloc(1, sizeof(*server));
	server->loop = loop;
	server->ops = *ops;
	server->path = xstrdup(path);
	server->watch.fd = -1;
	control_peer_rules_init(&server->peer_rules, settings->task_cgroup_root);
	server->idle_timeout_ms = settings->idle_timeout_ms;
	server->limits = (struct control_admission_limits){
	    .total = CONTROL_CONNECTIONS_MAX,
	    .reserved_for_owners = CONTROL_CONNECTIONS_RESERVED,
	    .per_user = settings->connections_per_user,
	};
	int failure = 0;
	if (control_group) {
		struct group *entry = getgrnam(control_group);
		if (!entry) {
			snprintf(error, error_size, "control.group \"%s\": no such group",
				 control_group);
			control_server_close(server);
			return -ENOENT;
		}
		server->has_group = true;
		server->group = entry->gr_gid;
		server->group_name = xstrdup(control_group);
	}

	char buffer[PATH_MAX];
	snprintf(buffer, sizeof(buffer), "%s", path);
	const char *directory = dirname(buffer);
	failure = make_directories(directory, server->has_group ? 0750 : 0700, server->group,
				   server->has_group);
	if (failure < 0)
		snprintf(error, error_size, "cannot create the directory of %s: %s", path,
			 strerror(-failure));
	if (failure == 0 && path_is_default)
		failure = check_own_directory(directory, error, error_size);
	if (failure == 0)
		failure = clear_stale_socket(path, error, error_size);
	int fd = failure == 0 ? open_listener(server, path, error, error_size) : failure;
	if (fd < 0) {
		control_server_close(server);
		/* The default path is a convenience: a corral that may not
		 * write /run still supervises, without a control socket. */
		if (path_is_default && (fd == -EACCES || fd == -EROFS || fd == -EPERM))
			return 1;
		return fd;
	}
	server->watch =
	    (struct loop_watch){.fd = fd, .callback = control_server_on_accept, .data = server};
	loop_watch_add(loop, &server->watch, EPOLLIN);
	*out = server;
	return 0;
}

const char *control_server_path(const struct control_server *server)
{
	return server ? server->path : NULL;
}

void control_server_close(struct control_server *server)
{
	if (!server)
		return;
	while (server->clients)
		control_client_retire(server->clients);
	control_server_collect(server);
	if (server->watch.fd >= 0) {
		loop_watch_remove(server->loop, &server->watch);
		close(server->watch.fd);
		/* Only our own socket: another corral may have replaced it. */
		struct stat status;
		if (stat(server->path, &status) == 0 && status.st_dev == server->device &&
		    status.st_ino == server->inode)
			unlink(server->path);
	}
	free(server->path);
	free(server->group_name);
	control_peer_rules_free(&server->peer_rules);
	free(server);
}
