/* Networks in the config: a task's `isolation.network: {mode: ...}`, a
 * group's `network: {bridge, subnet}`, the checks between them, and which
 * address each bridge task gets. The loader's side is declared here too
 * (config_network.c); what the modes do is isolation/network.c's work. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "config/config_parse.h"

/* The bridge's address, and the tasks' gateway: the subnet's first host. */
uint32_t group_network_gateway(const struct group_network_config *network);

/* The eth0 address of task `task_index` of the group: with mode bridge,
 * the subnet's second host for the first such task in file order, the
 * third for the next, and so on, so that a task keeps its address across
 * restarts. 0 for a task of another mode. The loader checked that the
 * subnet holds them all. */
uint32_t group_network_task_address(const struct group_config *group, size_t task_index);

/* Whether some task of the group has network mode `mode`. */
bool group_has_network_mode(const struct group_config *group, enum network_mode mode);

/* "10.88.0.2": dotted quad of a host-order address into `buffer` (16). */
void network_address_format(uint32_t address, char buffer[16]);

/* ---- the loader (config_network.c) ---- */

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
 * set, and the model made one: mode none has ISOLATION_NS_NET, the other
 * modes do not (bridge and group join a namespace corral prepares). */
void isolation_network_merge(struct load_context *context, const struct isolation_fields *group,
			     const char *group_owner, const struct isolation_fields *task,
			     const struct where *task_where,
			     const struct group_network_config *network,
			     struct isolation_config *merged);

/* After the group's tasks: the subnet holds every bridge task.
 * `network_node` is the group's `network` map. */
void group_network_check_capacity(struct load_context *context, const yaml_node_t *network_node,
				  const struct where *where, const struct group_config *group);
