/* A group's bridge and shared namespace: see group_network.h. */
#include "supervisor/tasks/group_network.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "config/load/config_network.h"
#include "isolation/network.h"
#include "supervisor/tasks/group.h"

static int describe(const struct group *group, const struct network_failure *failure, char *error,
		    size_t error_size)
{
	snprintf(error, error_size, "group %s: network: %s: %s", group->config->name, failure->step,
		 strerror(failure->error));
	return failure->error > 0 ? -failure->error : -EIO;
}

int group_network_open(struct group *group, char *error, size_t error_size)
{
	const struct group_config *config = group->config;
	struct network_host *host = group->services->network;
	struct group_network *network = &group->network;
	struct network_failure failure;

	*network = (struct group_network){.netns_fd = -1};
	if (config->network.bridge &&
	    network_bridge_open(host, config->network.bridge,
				group_network_gateway(&config->network),
				config->network.prefix_length, &network->bridge_created,
				&network->address_added, &network->bridge_ifindex, &failure) < 0)
		return describe(group, &failure, error, error_size);
	if (!group_has_network_mode(config, NETWORK_GROUP))
		return 0;
	if (network_namespace_create(host, &network->netns_fd, &failure) < 0)
		return describe(group, &failure, error, error_size);
	uint32_t address = group_network_shared_address(config);
	struct network_interface eth0 = {
	    .address = address,
	    .prefix_length = config->network.prefix_length,
	    .gateway = group_network_gateway(&config->network),
	};
	network_veth_name(network->veth_name, config->name); /* used only with an address */
	if (network_namespace_connect(host, network->netns_fd, network->veth_name,
				      network->bridge_ifindex, address ? &eth0 : NULL,
				      &network->veth_exists, &failure) < 0)
		return describe(group, &failure, error, error_size);
	return 0;
}

/* Teardown goes on past a failure: it is logged, not returned. */
static void warn(const struct group *group, const struct network_failure *failure)
{
	log_message("group %s: warning: network: %s: %s", group->config->name, failure->step,
		    strerror(failure->error));
}

void group_network_close(struct group *group)
{
	const struct group_network_config *config = &group->config->network;
	struct group_network *network = &group->network;
	struct network_failure failure;

	if (network->veth_exists &&
	    network_link_delete(group->services->network, network->veth_name, &failure) < 0)
		warn(group, &failure);
	network->veth_exists = false;
	if (network->netns_fd >= 0)
		close(network->netns_fd);
	network->netns_fd = -1;
	if (network->bridge_ifindex &&
	    network_bridge_close(group->services->network, config->bridge,
				 group_network_gateway(config), config->prefix_length,
				 network->bridge_created, network->address_added, &failure) < 0)
		warn(group, &failure);
	network->bridge_ifindex = 0;
}
