/* The control socket across `corral upgrade`: the listening socket stays
 * the same (a client that connects during the exec waits in its backlog),
 * and so does every connection, with what it had not sent yet and what
 * it follows: a `corral logs -f` or `events -f` goes on on the same
 * connection, and sees every line once. */
#include "supervisor/control/control_handover.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "supervisor/control/control_server_internal.h"
#include "supervisor/tasks/group.h"

bool control_server_handover_possible(const struct control_server *server, char *error,
				      size_t error_size)
{
	for (const struct control_client *client = server ? server->clients : NULL; client;
	     client = client->next)
		if (client->follow == CONTROL_FOLLOW_EXEC || client->outgoing_fd_count) {
			snprintf(error, error_size, "a `corral exec` session is open");
			return false;
		}
	return true;
}

static json_t *subject_name(const struct control_client *client)
{
	switch (client->follow) {
	case CONTROL_FOLLOW_LOGS:
		return json_string(
		    ((const struct task *)client->follow_subject)->config->full_name);
	case CONTROL_FOLLOW_LOGS_GROUP:
		return json_string(((const struct group *)client->follow_subject)->config->name);
	default:
		return json_null();
	}
}

json_t *control_server_handover_write(struct handover_writer *writer,
				      const struct control_server *server,
				      const struct control_client *requester)
{
	if (!server)
		return json_null();
	json_t *clients = json_array();
	for (const struct control_client *client = server->clients; client; client = client->next) {
		if (client->closed || client->cut)
			continue; /* closes with the exec */
		json_t *state =
		    json_pack("{s:o,s:i,s:b,s:s?,s:i,s:o,s:o,s:b,s:o,s:b,s:b,s:b}", "fd",
			      handover_fd(writer, client->watch.fd), "uid", (int)client->uid,
			      "owner", client->owner, "task", client->task, "follow",
			      client->follow, "subject", subject_name(client), "output",
			      handover_blob(writer, client->output + client->output_start,
					    control_client_pending(client)),
			      "sent_mid_line", client->sent_mid_line, "input",
			      handover_blob(writer, client->input,
					    client == requester ? 0 : client->input_length),
			      "input_ended", client->input_ended, "skipping_long_line",
			      client->skipping_long_line, "requester", client == requester);
		json_array_append_new(clients, state);
	}
	return json_pack("{s:o,s:s,s:o}", "fd", handover_fd(writer, server->watch.fd), "path",
			 server->path, "clients", clients);
}

json_t *control_server_listener_write(struct handover_writer *writer,
				      const struct control_server *server)
{
	if (!server)
		return json_null();
	return json_pack("{s:o,s:s,s:[]}", "fd", handover_fd(writer, server->watch.fd), "path",
			 server->path, "clients");
}

static const void *find_subject(enum control_follow follow, const char *name,
				struct group *const *groups, size_t group_count)
{
	for (size_t i = 0; name && i < group_count; i++) {
		struct group *group = groups[i];
		if (follow == CONTROL_FOLLOW_LOGS_GROUP && strcmp(group->config->name, name) == 0)
			return group;
		for (size_t t = 0; follow == CONTROL_FOLLOW_LOGS && t < group->task_count; t++)
			if (strcmp(group->tasks[t]->config->full_name, name) == 0)
				return group->tasks[t];
	}
	return NULL;
}

static void client_read(struct control_server *server, const struct handover_reader *reader,
			const json_t *state, struct group *const *groups, size_t group_count,
			struct control_client **requester)
{
	int fd = handover_fd_get(reader, state, "fd");
	const char *output, *input;
	size_t output_length, input_length;
	if (fd < 0 ||
	    !handover_blob_get(reader, json_object_get(state, "output"), &output, &output_length) ||
	    !handover_blob_get(reader, json_object_get(state, "input"), &input, &input_length) ||
	    input_length > CLIENT_INPUT_MAX)
		return;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	struct control_client *client =
	    control_client_add(server, fd, (uid_t)handover_int(state, "uid", -1),
			       handover_bool(state, "owner"), handover_string(state, "task"));
	if (!client)
		return;
	memcpy(client->input, input, input_length);
	client->input_length = input_length;
	client->input_ended = handover_bool(state, "input_ended");
	client->skipping_long_line = handover_bool(state, "skipping_long_line");
	client->sent_mid_line = handover_bool(state, "sent_mid_line");
	enum control_follow follow = (enum control_follow)handover_int(state, "follow", 0);
	if (follow != CONTROL_FOLLOW_NONE && follow != CONTROL_FOLLOW_EXEC) {
		const void *subject =
		    find_subject(follow, handover_string(state, "subject"), groups, group_count);
		if (subject || follow == CONTROL_FOLLOW_LOGS_ALL || follow == CONTROL_FOLLOW_EVENTS)
			control_client_follow(client, follow, subject);
	}
	if (output_length)
		control_client_send_later(client, output, output_length);
	if (handover_bool(state, "requester"))
		*requester = client;
}

int control_server_handover_read(struct control_server **out, struct loop *loop,
				 const struct handover_reader *reader, const json_t *state,
				 const struct control_server_settings *settings,
				 const struct control_server_ops *ops, struct group *const *groups,
				 size_t group_count, struct control_client **requester, char *error,
				 size_t error_size)
{
	*out = NULL;
	*requester = NULL;
	if (json_is_null(state) || !state)
		return 0;
	int fd = handover_fd_get(reader, state, "fd");
	const char *path = handover_string(state, "path");
	struct stat status;
	if (fd < 0 || !path || fstat(fd, &status) < 0 || !S_ISSOCK(status.st_mode)) {
		snprintf(error, error_size, "the control socket is not in the hand-over");
		return -EINVAL;
	}
	struct control_server *server;
	int failure = control_server_new(&server, loop, path, settings, ops, error, error_size);
	if (failure < 0)
		return failure;
	/* Its file, which close removes only while it is still ours. */
	server->listener.fd = fd;
	if (stat(path, &status) == 0) {
		server->listener.device = status.st_dev;
		server->listener.inode = status.st_ino;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	server->watch =
	    (struct loop_watch){.fd = fd, .callback = control_server_on_accept, .data = server};
	loop_watch_add(loop, &server->watch, EPOLLIN);
	size_t index;
	json_t *client;
	json_array_foreach(json_object_get(state, "clients"), index, client)
	    client_read(server, reader, client, groups, group_count, requester);
	*out = server;
	return 0;
}
