/* The control socket and its connections across `corral upgrade`
 * (supervisor/upgrade/): the listening socket, and each connection with
 * its unsent bytes and what it follows. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/handover.h"
#include "supervisor/control/control_server.h"

struct group;

/* false with `why` while something cannot be handed over (an exec
 * session, whose streams are the CLI's own fds). */
bool control_server_handover_possible(const struct control_server *server, char *error,
				      size_t error_size);

/* The server (null for none) and its clients; `requester` (the client
 * that asked for the upgrade) is marked, and its request not kept. */
/* The listening socket only, no client: a keeper's record (a restore's
 * clients connect again). */
json_t *control_server_listener_write(struct handover_writer *writer,
				      const struct control_server *server);
json_t *control_server_handover_write(struct handover_writer *writer,
				      const struct control_server *server,
				      const struct control_client *requester);

/* The server from the hand-over, *out NULL when there was none; the
 * clients follow the same tasks and groups (found by name in `groups`).
 * Nothing is sent before the loop runs. 0, or -errno with `error`. */
int control_server_handover_read(struct control_server **out, struct loop *loop,
				 const struct handover_reader *reader, const json_t *state,
				 const struct control_server_settings *settings,
				 const struct control_server_ops *ops, struct group *const *groups,
				 size_t group_count, struct control_client **requester, char *error,
				 size_t error_size);
