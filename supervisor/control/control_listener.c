/* The socket file, made by base/unix_listener.c: its directory made with
 * the right mode, a default place used only when it is corral's own, a
 * stale socket replaced and anything else at the path refused, the socket
 * bound 0600 (0660 for a control group) from birth, and removed at the end
 * only when it is still ours. Connections are control_connections.c's. */
#include "supervisor/control/control_server.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "base/xmalloc.h"
#include "supervisor/control/control_server_internal.h"

/* What the messages about a path in the way say for the control socket. */
static const struct unix_listener_options control_socket_words = {
    .other_listener = "another corral",
    .use_another = "give this one another socket (--socket, CORRAL_SOCKET or socket:)",
    .set_another = "set socket: to another path",
};

bool control_server_listener_at(const char *path, int *connect_errno, char *error,
				size_t error_size)
{
	if (!unix_listener_at(path, connect_errno))
		return false;
	unix_listener_describe_in_use(&control_socket_words, path, error, error_size);
	return true;
}

int control_server_new(struct control_server **out, struct loop *loop, const char *path,
		       const struct control_server_settings *settings,
		       const struct control_server_ops *ops, char *error, size_t error_size)
{
	*out = NULL;
	const char *control_group = settings->control_group;
	struct control_server *server = xcalloc(1, sizeof(*server));
	server->loop = loop;
	server->ops = *ops;
	server->path = xstrdup(path);
	server->watch.fd = -1;
	server->listener.fd = -1;
	control_peer_rules_init(&server->peer_rules, settings->task_cgroup_root);
	control_refusals_init(server);
	server->idle_timeout_ms = settings->idle_timeout_ms;
	server->limits = (struct control_admission_limits){
	    .total = CONTROL_CONNECTIONS_MAX,
	    .reserved_for_owners = CONTROL_CONNECTIONS_RESERVED,
	    .per_user = settings->connections_per_user,
	};
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
	*out = server;
	return 0;
}

int control_server_open(struct control_server **out, struct loop *loop, const char *path,
			bool path_is_default, const struct control_server_settings *settings,
			const struct control_server_ops *ops, char *error, size_t error_size)
{
	struct control_server *server;
	int failure = control_server_new(&server, loop, path, settings, ops, error, error_size);
	if (failure < 0)
		return failure;
	*out = NULL;

	struct unix_listener_options options = control_socket_words;
	options.has_group = server->has_group;
	options.group = server->group;
	options.group_name = server->group_name;
	options.directory_must_be_own = path_is_default;
	failure = unix_listener_open(&server->listener, path, &options, error, error_size);
	if (failure < 0) {
		control_server_close(server);
		/* The default path is a convenience: a corral that may not
		 * write /run still supervises, without a control socket. */
		if (path_is_default &&
		    (failure == -EACCES || failure == -EROFS || failure == -EPERM))
			return 1;
		return failure;
	}
	int fd = server->listener.fd;
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
	/* The socket goes first: a follower that sees its stream end then
	 * finds no socket, and knows corral stopped rather than died
	 * (cli/command_stream.c follows a corral that died again). */
	if (server->watch.fd >= 0)
		loop_watch_remove(server->loop, &server->watch);
	unix_listener_close(&server->listener, server->path);
	while (server->clients)
		control_client_retire(server->clients);
	control_server_collect(server);
	control_refusals_stop(server);
	free(server->path);
	free(server->group_name);
	control_peer_rules_free(&server->peer_rules);
	free(server);
}
