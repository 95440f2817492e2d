/* Networks in the config: a task's `isolation.network` mode, a group's
 * bridge and subnet, the checks between them (a bridge task needs its
 * group's bridge; mode host contradicts `net` in namespaces; the subnet
 * holds every bridge task), and the address each bridge task gets. */
#include "config/load/config_network.h"
#include "config/load/config_network_parse.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "config/yaml/diagnostics.h"

/* In the order of enum network_mode. */
static const char *const mode_names[] = {"host", "none", "bridge", "group"};
#define MODE_COUNT (sizeof(mode_names) / sizeof(mode_names[0]))

static const char *const network_keys[] = {"mode", NULL};
static const char *const group_network_keys[] = {"bridge", "subnet", NULL};

/* An interface name holds at most IFNAMSIZ - 1 (15) bytes. */
#define BRIDGE_NAME_MAX_LENGTH 15
/* A /31 or /32 leaves no room for a bridge and a task; below /8 nobody
 * means it. */
#define PREFIX_MIN 8
#define PREFIX_MAX 30

#define EXAMPLE_NETWORK "network: {bridge: corral0, subnet: 10.88.0.0/24}"

static uint32_t prefix_mask(unsigned prefix_length)
{
	return prefix_length ? ~UINT32_C(0) << (32 - prefix_length) : 0;
}

uint32_t group_network_gateway(const struct group_network_config *network)
{
	return network->subnet + 1;
}

uint32_t group_network_task_address(const struct group_config *group, size_t task_index)
{
	uint32_t next = group_network_gateway(&group->network) + 1;

	if (group->tasks[task_index].isolation.network != NETWORK_BRIDGE)
		return 0;
	for (size_t i = 0; i < task_index; i++)
		if (group->tasks[i].isolation.network == NETWORK_BRIDGE)
			next++;
	return next;
}

uint32_t group_network_shared_address(const struct group_config *group)
{
	const struct group_network_config *network = &group->network;

	if (!network->bridge || !network->prefix_length ||
	    !group_has_network_mode(group, NETWORK_GROUP))
		return 0;
	/* The broadcast address, less one. */
	return (network->subnet | ~prefix_mask(network->prefix_length)) - 1;
}

bool group_has_network_mode(const struct group_config *group, enum network_mode mode)
{
	for (size_t i = 0; i < group->task_count; i++)
		if (group->tasks[i].isolation.enabled && group->tasks[i].isolation.network == mode)
			return true;
	return false;
}

void network_address_format(uint32_t address, char buffer[16])
{
	snprintf(buffer, 16, "%u.%u.%u.%u", address >> 24, (address >> 16) & 0xff,
		 (address >> 8) & 0xff, address & 0xff);
}

/* ---- a task's mode ---- */

bool isolation_network_parse(struct load_context *context, const yaml_node_t *node,
			     const struct where *where, enum network_mode *out,
			     const yaml_node_t **mode_node)
{
	struct map_entries fields;
	const yaml_node_t *mode;
	char buffer[64];
	bool valid = false;

	*mode_node = NULL;
	if (!expect_map(context, node, where, "a map such as {mode: bridge}"))
		return false;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, network_keys);
	if ((mode = map_lookup(&fields, "mode"))) {
		struct where mode_where = where_field(where, "mode", buffer, sizeof(buffer));
		int index = expect_keyword(context, mode, &mode_where, "network mode", mode_names,
					   MODE_COUNT);

		*mode_node = mode;
		if (index >= 0) {
			*out = (enum network_mode)index;
			valid = true;
		}
	} else if (!map_has_key_or_typo(&fields, network_keys, "mode")) {
		report(context, node, where, "missing \"mode\" (host, none, bridge or group)");
	}
	map_entries_free(&fields);
	return valid;
}

/* The two mistakes a mode can make, reported at the mode; `set_in` names
 * the group when the value was the group's. */
static void check_host_with_net(struct load_context *context, const char *owner,
				const struct isolation_fields *from, const char *set_in)
{
	struct where where = {.owner = owner, .field = "isolation.network.mode"};

	report(context, from->network_node, &where,
	       "host%s keeps corral's network namespace, but isolation.namespaces has net; "
	       "leave net out, or use mode none",
	       set_in);
}

static void check_bridge_without_bridge(struct load_context *context, const char *owner,
					const struct isolation_fields *from, const char *set_in)
{
	struct where where = {.owner = owner, .field = "isolation.network.mode"};

	report(context, from->network_node, &where,
	       "bridge%s needs a bridge of the group: add `" EXAMPLE_NETWORK "` to the group",
	       set_in);
}

/* A group task joins the group's namespace, which corral made in its own
 * user namespace; the kernel refuses setns into it from the task's new
 * user namespace (joining needs CAP_SYS_ADMIN over the namespace's owner),
 * and one namespace cannot belong to the user namespaces of several tasks.
 * (A bridge task in a user namespace clones its network namespace with it:
 * supervisor/tasks/task_network.c.) */
static void check_group_with_user(struct load_context *context, const char *owner,
				  const struct isolation_fields *from, const char *set_in)
{
	struct where where = {.owner = owner, .field = "isolation.network.mode"};

	report(context, from->network_node, &where,
	       "group%s shares a network namespace that corral makes in its own user namespace, "
	       "which a task with user in isolation.namespaces may not join; leave user out, "
	       "or use mode bridge, none or host",
	       set_in);
}

void isolation_network_check_group(struct load_context *context,
				   const struct isolation_fields *group, const struct where *where,
				   const struct group_network_config *network)
{
	if (!group->has_network)
		return;
	if (group->values.network == NETWORK_HOST && group->has_namespaces &&
	    (group->values.namespaces & ISOLATION_NS_NET))
		check_host_with_net(context, where->owner, group, "");
	if (group->values.network == NETWORK_BRIDGE && !network)
		check_bridge_without_bridge(context, where->owner, group, "");
	if (group->values.network == NETWORK_GROUP && group->has_namespaces &&
	    (group->values.namespaces & ISOLATION_NS_USER))
		check_group_with_user(context, where->owner, group, "");
}

void isolation_network_merge(struct load_context *context, const struct isolation_fields *group,
			     const char *group_owner, const struct isolation_fields *task,
			     const struct where *task_where,
			     const struct group_network_config *network,
			     struct isolation_config *merged)
{
	/* Which of task and group set each field: the task when it did. */
	const struct isolation_fields *network_from = task->has_network ? task : group;
	const struct isolation_fields *namespaces_from = task->has_namespaces ? task : group;
	bool has_net = merged->namespaces & ISOLATION_NS_NET;
	enum network_mode mode = has_net ? NETWORK_NONE : NETWORK_HOST;
	char set_in[sizeof(struct quoted) + 16];

	if (!merged->enabled)
		return;
	snprintf(set_in, sizeof(set_in), " (set in %s)", group_owner);
	if (network_from->has_network) {
		const char *shown_set_in = network_from == group ? set_in : "";

		mode = network_from->values.network;
		/* Both from the group: isolation_network_check_group said it. */
		if (mode == NETWORK_HOST && has_net &&
		    (network_from != group || namespaces_from != group))
			check_host_with_net(context, task_where->owner, network_from, shown_set_in);
		if (mode == NETWORK_BRIDGE && !network && network_from != group)
			check_bridge_without_bridge(context, task_where->owner, network_from,
						    shown_set_in);
		if (mode == NETWORK_GROUP && (merged->namespaces & ISOLATION_NS_USER) &&
		    (network_from != group || namespaces_from != group))
			check_group_with_user(context, task_where->owner, network_from,
					      shown_set_in);
	}
	/* One model for `net` and mode none; bridge and group tasks join a
	 * namespace corral prepares instead of cloning a new one, except a
	 * bridge task in a user namespace: its network namespace must belong
	 * to that user namespace, so it is cloned with it and corral sets it
	 * up between clone and exec. */
	if (mode == NETWORK_NONE ||
	    (mode == NETWORK_BRIDGE && (merged->namespaces & ISOLATION_NS_USER)))
		merged->namespaces |= ISOLATION_NS_NET;
	else
		merged->namespaces &= ~(unsigned)ISOLATION_NS_NET;
	merged->network = mode;
}

/* ---- a group's bridge ---- */

static bool bridge_name_valid(const char *name, size_t length)
{
	/* Stricter than the kernel, which also takes '%' (a template for a
	 * name it picks) and most punctuation. */
	return length >= 1 && length <= BRIDGE_NAME_MAX_LENGTH &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") ==
		   length &&
	       strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

static void parse_bridge(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, const struct group_config *earlier,
			 size_t earlier_count, struct group_network_config *out)
{
	const char *name = expect_string(context, node, where);
	size_t length;

	if (!name)
		return;
	length = node->data.scalar.length;
	if (!bridge_name_valid(name, length)) {
		report(context, node, where,
		       "must be an interface name of 1 to %d letters, digits, '-', '_' and '.', "
		       "not %s",
		       BRIDGE_NAME_MAX_LENGTH, quote(name, length).text);
		return;
	}
	for (size_t i = 0; i < earlier_count; i++) {
		if (earlier[i].network.bridge && strcmp(earlier[i].network.bridge, name) == 0) {
			report(context, node, where,
			       "%s is group %s's bridge already; each group needs a bridge of its "
			       "own",
			       quote(name, length).text, earlier[i].name);
			return;
		}
	}
	out->bridge = xstrdup(name);
}

/* "A.B.C.D/N" into a host-order address and a prefix length; false when
 * the text is not of that form. */
static bool split_subnet(const char *text, uint32_t *address, unsigned *prefix_length)
{
	const char *slash = strchr(text, '/');
	char dotted[16];
	struct in_addr parsed;
	size_t digits;

	if (!slash || (size_t)(slash - text) >= sizeof(dotted))
		return false;
	memcpy(dotted, text, (size_t)(slash - text));
	dotted[slash - text] = '\0';
	if (inet_pton(AF_INET, dotted, &parsed) != 1)
		return false;
	digits = strlen(slash + 1);
	if (digits < 1 || digits > 2 || strspn(slash + 1, "0123456789") != digits)
		return false;
	*address = ntohl(parsed.s_addr);
	*prefix_length = (unsigned)atoi(slash + 1);
	return true;
}

static void parse_subnet(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, const struct group_config *earlier,
			 size_t earlier_count, struct group_network_config *out)
{
	const char *text = expect_string(context, node, where);
	uint32_t address, mask;
	unsigned prefix_length;
	char shown[16];

	if (!text)
		return;
	if (!split_subnet(text, &address, &prefix_length)) {
		report(context, node, where, "must be an IPv4 network such as 10.88.0.0/24, not %s",
		       quote(text, node->data.scalar.length).text);
		return;
	}
	if (prefix_length < PREFIX_MIN || prefix_length > PREFIX_MAX) {
		report(
		    context, node, where,
		    "prefix /%u is out of range: %d to %d (a /30 has room for the bridge and one "
		    "task)",
		    prefix_length, PREFIX_MIN, PREFIX_MAX);
		return;
	}
	mask = prefix_mask(prefix_length);
	if (address & ~mask) {
		network_address_format(address & mask, shown);
		report(context, node, where, "%s has host bits set; did you mean %s/%u?",
		       quote(text, node->data.scalar.length).text, shown, prefix_length);
		return;
	}
	for (size_t i = 0; i < earlier_count; i++) {
		const struct group_network_config *other = &earlier[i].network;
		uint32_t common;

		if (!other->prefix_length)
			continue;
		common = prefix_mask(prefix_length < other->prefix_length ? prefix_length
									  : other->prefix_length);
		if ((address & common) == (other->subnet & common)) {
			network_address_format(other->subnet, shown);
			report(context, node, where, "%s overlaps group %s's subnet %s/%u",
			       quote(text, node->data.scalar.length).text, earlier[i].name, shown,
			       other->prefix_length);
			return;
		}
	}
	out->subnet = address;
	out->prefix_length = prefix_length;
}

void group_network_parse(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, const struct group_config *earlier,
			 size_t earlier_count, struct group_network_config *out)
{
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[64];
	struct where field_where;

	if (!expect_map(context, node, where,
			"a map such as {bridge: corral0, subnet: 10.88.0.0/24}"))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, group_network_keys);
	if ((field = map_lookup(&fields, "bridge"))) {
		field_where = where_field(where, "bridge", buffer, sizeof(buffer));
		parse_bridge(context, field, &field_where, earlier, earlier_count, out);
	} else if (!map_has_key_or_typo(&fields, group_network_keys, "bridge")) {
		report(context, node, where,
		       "missing \"bridge\" (the name of the bridge corral makes, such as corral0)");
	}
	if ((field = map_lookup(&fields, "subnet"))) {
		field_where = where_field(where, "subnet", buffer, sizeof(buffer));
		parse_subnet(context, field, &field_where, earlier, earlier_count, out);
	} else if (!map_has_key_or_typo(&fields, group_network_keys, "subnet")) {
		report(context, node, where,
		       "missing \"subnet\" (the bridge's IPv4 network, such as 10.88.0.0/24)");
	}
	map_entries_free(&fields);
}

/* The value of `key` in a mapping node, or NULL. */
static const yaml_node_t *map_value(struct load_context *context, const yaml_node_t *map,
				    const char *key)
{
	if (map->type != YAML_MAPPING_NODE)
		return NULL;
	for (const yaml_node_pair_t *pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		const yaml_node_t *key_node = yaml_document_get_node(context->document, pair->key);

		if (key_node && key_node->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)key_node->data.scalar.value, key) == 0)
			return yaml_document_get_node(context->document, pair->value);
	}
	return NULL;
}

void group_network_check_capacity(struct load_context *context, const yaml_node_t *network_node,
				  const struct where *where, const struct group_config *group)
{
	const struct group_network_config *network = &group->network;
	struct where subnet_where = {.owner = where->owner, .field = "network.subnet"};
	uint64_t room, tasks = 0;
	bool shared = group_network_shared_address(group) != 0;
	char shown[16];

	if (!network->prefix_length)
		return;
	for (size_t i = 0; i < group->task_count; i++)
		if (group->tasks[i].isolation.network == NETWORK_BRIDGE)
			tasks++;
	/* Less the network and broadcast addresses, and the bridge's. */
	room = (UINT64_C(1) << (32 - network->prefix_length)) - 3;
	if (tasks + shared <= room)
		return;
	network_address_format(network->subnet, shown);
	report(context, map_value(context, network_node, "subnet"), &subnet_where,
	       "%s/%u has room for %u address%s besides the bridge's, but the group needs %u: "
	       "%u for tasks with network mode bridge%s",
	       shown, network->prefix_length, (unsigned)room, room == 1 ? "" : "es",
	       (unsigned)(tasks + shared), (unsigned)tasks,
	       shared ? " and 1 for its shared namespace (mode group)" : "");
}
