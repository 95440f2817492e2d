/* A task's network around each start: see task_network.h. */
#include "supervisor/tasks/task_network.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "config/load/config_network.h"
#include "isolation/network.h"
#include "isolation/task_isolation.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task.h"

void task_network_init(struct task *task, size_t index_in_group)
{
	struct task_network *network = &task->network;
	const struct group_config *group = task->group->config;

	*network = (struct task_network){.netns_fd = -1};
	if (!task->config->isolation.enabled || task->config->isolation.network != NETWORK_BRIDGE)
		return;
	network->eth0 = (struct network_interface){
	    .address = group_network_task_address(group, index_in_group),
	    .prefix_length = group->network.prefix_length,
	    .gateway = group_network_gateway(&group->network),
	};
	network_veth_name(network->veth_name, task->config->full_name);
}

static int describe(const struct network_failure *failure, char *error, size_t error_size)
{
	snprintf(error, error_size, "network: %s: %s", failure->step, strerror(failure->error));
	return failure->error > 0 ? -failure->error : -EIO;
}

/* The veth into `netns_fd` and eth0, lo and the route configured in it.
 * On failure the veth is deleted again; `netns_fd` stays the caller's. */
static int connect_to_bridge(struct task *task, int netns_fd, char *error, size_t error_size)
{
	struct task_network *network = &task->network;
	struct network_failure failure;

	if (network_namespace_connect(task->services->network, netns_fd, network->veth_name,
				      task->group->network.bridge_ifindex, &network->eth0,
				      &network->veth_exists, &failure) < 0) {
		task_network_run_ended(task);
		return describe(&failure, error, error_size);
	}
	return 0;
}

static int prepare_bridge(struct task *task, char *error, size_t error_size)
{
	struct network_failure failure;
	int netns_fd;

	/* In a user namespace the child clones its own network namespace:
	 * task_network_between connects it. */
	if (task->config->isolation.namespaces & ISOLATION_NS_USER)
		return 0;
	if (network_namespace_create(task->services->network, &netns_fd, &failure) < 0)
		return describe(&failure, error, error_size);
	int connected = connect_to_bridge(task, netns_fd, error, error_size);
	if (connected < 0) {
		close(netns_fd);
		return connected;
	}
	task->network.netns_fd = netns_fd;
	task->network.owns_netns_fd = true;
	return 0;
}

bool task_network_needs_between(const struct task *task)
{
	const struct isolation_config *isolation = &task->config->isolation;

	return isolation->enabled && isolation->network == NETWORK_BRIDGE &&
	       (isolation->namespaces & ISOLATION_NS_USER);
}

int task_network_between(struct task *task, pid_t pid, char *error, size_t error_size)
{
	char path[64];
	int netns_fd, result;

	/* The child is alive (blocked on the sync socket) and ours to reap:
	 * its pid names it. corral, root in the user namespace's parent, may
	 * enter and change a network namespace the child's user namespace
	 * owns. */
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	netns_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (netns_fd < 0) {
		int failure = -errno;
		snprintf(error, error_size, "network: open %s: %s", path, strerror(-failure));
		return failure;
	}
	result = connect_to_bridge(task, netns_fd, error, error_size);
	close(netns_fd);
	return result < 0 ? -EINVAL : 0;
}

/* Mode none: a fresh namespace with lo up, this start's alone (usually a
 * spare made ahead, network_spares.h). */
static int prepare_none(struct task *task, char *error, size_t error_size)
{
	struct network_failure failure;
	int netns_fd;

	if (!task_isolation_takes_spare_network(&task->config->isolation))
		return 0; /* cloned with the child (a user namespace) */
	if (network_spares_take(task->services->network_spares, &netns_fd, &failure) < 0)
		return describe(&failure, error, error_size);
	task->network.netns_fd = netns_fd;
	task->network.owns_netns_fd = true;
	return 0;
}

int task_network_prepare_start(struct task *task, char *error, size_t error_size)
{
	if (!task->config->isolation.enabled)
		return 0;
	switch (task->config->isolation.network) {
	case NETWORK_BRIDGE:
		return prepare_bridge(task, error, error_size);
	case NETWORK_GROUP:
		task->network.netns_fd = task->group->network.netns_fd;
		task->network.owns_netns_fd = false;
		return 0;
	case NETWORK_NONE:
		return prepare_none(task, error, error_size);
	case NETWORK_HOST:
		break;
	}
	return 0;
}

void task_network_spawned(struct task *task)
{
	struct task_network *network = &task->network;
	if (network->owns_netns_fd && network->netns_fd >= 0)
		close(network->netns_fd);
	network->netns_fd = -1;
	network->owns_netns_fd = false;
}

void task_network_run_ended(struct task *task)
{
	struct task_network *network = &task->network;
	struct network_failure failure;

	task_network_spawned(task); /* a start that failed before the spawn */
	if (!network->veth_exists)
		return;
	network->veth_exists = false;
	if (network_link_delete(task->services->network, network->veth_name, &failure) < 0)
		log_message("%s: warning: network: %s: %s", task->config->full_name, failure.step,
			    strerror(failure.error));
}
