/* The loader's side of networks (config_network.c): reading a task's
 * `isolation.network` and a group's `network`, and the checks between
 * them and the tasks. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/load/config_parse.h"
#include "config/model/config.h"

/* `isolation.network`: {mode: host|none|bridge|group}. *mode_node is the
 * mode as written (valid or not), for the checks between fields. */
bool isolation_network_parse(struct load_context *context, const yaml_node_t *node,
			     const struct where *where, enum network_mode *out,
			     const yaml_node_t **mode_node);

/* A group's `network` map. `earlier` are the groups read before it, whose
 * bridges and subnets it must not share. */
void group_network_parse(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, const struct group_config *earlier,
			 size_t earlier_count, struct group_network_config *out);

/* The group's own isolation fields against its network: mode host with
 * net in namespaces, mode bridge without a bridge. Reported once here,
 * not for each task. */
void isolation_network_check_group(struct load_context *context,
				   const struct isolation_fields *group, const struct where *where,
				   const struct group_network_config *network);

/* After isolation_merge: the task's mode from the task or the group (or
 * none for `net` in namespaces alone), the same checks for what the task
 * set, and the model made one: mode none has ISOLATION_NS_NET, and so has
 * mode bridge with a user namespace (cloned with it); the others do not
 * (bridge and group join a namespace corral prepares). */
void isolation_network_merge(struct load_context *context, const struct isolation_fields *group,
			     const char *group_owner, const struct isolation_fields *task,
			     const struct where *task_where,
			     const struct group_network_config *network,
			     struct isolation_config *merged);

/* After the group's tasks: the subnet holds every bridge task.
 * `network_node` is the group's `network` map. */
void group_network_check_capacity(struct load_context *context, const yaml_node_t *network_node,
				  const struct where *where, const struct group_config *group);
