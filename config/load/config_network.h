/* Networks in the config: a task's `isolation.network: {mode: ...}`, a
 * group's `network: {bridge, subnet}`, the checks between them, and which
 * address each bridge task gets. The loader's side is in
 * config_network_parse.h; what the modes do is isolation/network.c's work. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/model/config.h"

/* The bridge's address, and the tasks' gateway: the subnet's first host. */
uint32_t group_network_gateway(const struct group_network_config *network);

/* The eth0 address of task `task_index` of the group: with mode bridge,
 * the subnet's second host for the first such task in file order, the
 * third for the next, and so on, so that a task keeps its address across
 * restarts. 0 for a task of another mode. The loader checked that the
 * subnet holds them all. */
uint32_t group_network_task_address(const struct group_config *group, size_t task_index);

/* The eth0 address of the group's shared namespace (mode group) when the
 * group has a bridge: the subnet's last host, out of the way of the
 * tasks' addresses counted up from the start. 0 without a bridge or
 * without a task of mode group. */
uint32_t group_network_shared_address(const struct group_config *group);

/* Whether some task of the group has network mode `mode`. */
bool group_has_network_mode(const struct group_config *group, enum network_mode mode);

/* "10.88.0.2": dotted quad of a host-order address into `buffer` (16). */
void network_address_format(uint32_t address, char buffer[16]);
