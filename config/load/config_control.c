/* Who may use the control socket, and how: the top level's `control:` map
 * (a group of users, their exec right, the connection limits) and a task's
 * own `control:` list (the requests a task may make; none by default, as
 * a task is never an operator). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

/* In the order of enum control_right's bits. */
static const char *const control_right_names[CONTROL_RIGHT_COUNT] = {
    "status", "logs",   "events", "inspect",  "start", "stop",    "restart",
    "signal", "reload", "exec",   "shutdown", "scale", "upgrade",
};

const char *control_right_name(unsigned index)
{
	return index < CONTROL_RIGHT_COUNT ? control_right_names[index] : NULL;
}

void control_rights_describe(unsigned rights, char *buffer, size_t size)
{
	size_t used = 0;
	snprintf(buffer, size, "none");
	for (unsigned i = 0; i < CONTROL_RIGHT_COUNT; i++) {
		if (!(rights & (1u << i)))
			continue;
		int wrote = snprintf(buffer + used, size - used, "%s%s", used ? ", " : "",
				     control_right_names[i]);
		if (wrote < 0 || (size_t)wrote >= size - used)
			return;
		used += (size_t)wrote;
	}
}

static const char *const control_keys[] = {"group", "exec", "idle_timeout", "connections_per_user",
					   NULL};

static void parse_connections_per_user(struct load_context *context, const yaml_node_t *node,
				       struct config *config)
{
	struct where where = {.owner = "", .field = "control.connections_per_user"};
	const char *text = expect_string(context, node, &where);
	char *end;
	unsigned long value = text ? strtoul(text, &end, 10) : 0;
	if (text && (!*text || *end || text[0] == '-' || value < 1 ||
		     value > CONFIG_CONTROL_CONNECTIONS_PER_USER_MAX))
		report(context, node, &where, "must be a whole number from 1 to %d, not %s",
		       CONFIG_CONTROL_CONNECTIONS_PER_USER_MAX,
		       quote(text, node->data.scalar.length).text);
	else if (text)
		config->control_connections_per_user = (unsigned)value;
}

static void parse_idle_timeout(struct load_context *context, const yaml_node_t *node,
			       struct config *config)
{
	struct where where = {.owner = "", .field = "control.idle_timeout"};
	uint64_t milliseconds;
	if (!expect_duration(context, node, &where, &milliseconds))
		return;
	/* Below a second, a client on a loaded machine could be cut between
	 * its connect and its first request. */
	if (milliseconds < 1000)
		report(context, node, &where, "must be at least 1s, not %s",
		       quote((const char *)node->data.scalar.value, node->data.scalar.length).text);
	else
		config->control_idle_timeout_ms = milliseconds;
}

void control_settings_parse(struct load_context *context, const yaml_node_t *node,
			    struct config *config)
{
	struct where where = {.owner = "", .field = "control"};
	struct map_entries fields;
	const yaml_node_t *group, *field;

	if (!expect_map(context, node, &where, "a map such as {group: NAME}"))
		return;
	map_collect(context, node, &where, "key", &fields);
	map_check_keys(context, &fields, &where, control_keys);
	if ((group = map_lookup(&fields, "group"))) {
		struct where group_where = {.owner = "", .field = "control.group"};
		const char *name = expect_string(context, group, &group_where);

		if (name && !*name)
			report(context, group, &group_where, "must not be empty");
		else if (name)
			config->control_group = xstrdup(name);
	}
	if ((field = map_lookup(&fields, "exec"))) {
		struct where exec_where = {.owner = "", .field = "control.exec"};
		if (expect_bool(context, field, &exec_where, &config->control_group_exec) &&
		    config->control_group_exec && !group)
			report(context, field, &exec_where,
			       "needs control.group: whose members may exec");
	}
	if ((field = map_lookup(&fields, "idle_timeout")))
		parse_idle_timeout(context, field, config);
	if ((field = map_lookup(&fields, "connections_per_user")))
		parse_connections_per_user(context, field, config);
	map_entries_free(&fields);
}

void task_control_rights_parse(struct load_context *context, const yaml_node_t *node,
			       const struct where *where, unsigned *rights)
{
	*rights = 0;
	if (!expect_list(
		context, node, where,
		"a list of the control requests the task may make, such as [status, logs]"))
		return;
	yaml_list_each(walk, context, node, where)
	{
		if (!walk.item)
			continue;
		int index = expect_keyword(context, walk.item, &walk.where, "control request",
					   control_right_names, CONTROL_RIGHT_COUNT);
		if (index < 0)
			continue;
		if (*rights & (1u << index))
			report(context, walk.item, &walk.where, "%s is listed twice",
			       control_right_names[index]);
		*rights |= 1u << index;
	}
}
