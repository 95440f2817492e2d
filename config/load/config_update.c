/* A task's `update:`: how a reload replaces its running instances, all at
 * once (`recreate`, the default) or a few at a time (`rolling`), as a
 * Kubernetes Deployment's strategy and Nomad's update stanza say it. */
#include <stdlib.h>
#include <string.h>

#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const update_keys[] = {"strategy", "max_unavailable", "min_ready", NULL};
static const char *const strategy_names[] = {"recreate", "rolling"};

static void parse_max_unavailable(struct load_context *context, const yaml_node_t *node,
				  const struct where *where, struct update_config *out)
{
	const char *text = expect_string(context, node, where);
	if (!text)
		return;
	char *end;
	unsigned long count = strtoul(text, &end, 10);
	if (!*text || *end || text[0] == '-' || count < 1 || count > TASK_INSTANCES_MAX) {
		report(context, node, where,
		       "must be a whole number from 1 to %d (instances replaced at once), not %s",
		       TASK_INSTANCES_MAX, quote(text, node->data.scalar.length).text);
		return;
	}
	out->max_unavailable = (unsigned)count;
}

/* Read for any roll, whatever the strategy: `corral restart --rolling`
 * rolls a task whose reloads recreate it. */
static void parse_min_ready(struct load_context *context, const yaml_node_t *node,
			    const struct where *where, struct update_config *out)
{
	const char *text = expect_string(context, node, where);
	if (!text)
		return;
	char *end;
	unsigned long count = strtoul(text, &end, 10);
	if (!*text || *end || text[0] == '-' || text[0] == '+' || count > TASK_INSTANCES_MAX) {
		report(context, node, where,
		       "must be a whole number from 0 to %d (instances ready during a rolling "
		       "restart), not %s",
		       TASK_INSTANCES_MAX, quote(text, node->data.scalar.length).text);
		return;
	}
	out->min_ready = (unsigned)count;
	out->min_ready_set = true;
}

void update_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		  bool has_instances, struct update_config *out)
{
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[64];
	struct where field_where;

	if (!expect_map(context, node, where,
			"a map of \"strategy\", \"max_unavailable\" and \"min_ready\""))
		return;
	if (!has_instances) {
		report(context, node, where,
		       "only for a task with instances: it says how a reload replaces them; give "
		       "the task instances: N (instances: 1 keeps one, named TASK@0)");
		return;
	}
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, update_keys);
	/* Writing the map asks for a roll unless it says otherwise:
	 * RollingUpdate is a Deployment's default too. */
	out->strategy = UPDATE_ROLLING;
	if ((field = map_lookup(&fields, "strategy"))) {
		field_where = where_field(where, "strategy", buffer, sizeof(buffer));
		int strategy = expect_keyword(context, field, &field_where, "update strategy",
					      strategy_names, 2);
		if (strategy >= 0)
			out->strategy = (enum update_strategy)strategy;
	}
	if ((field = map_lookup(&fields, "max_unavailable"))) {
		field_where = where_field(where, "max_unavailable", buffer, sizeof(buffer));
		if (out->strategy == UPDATE_RECREATE)
			report(context, field, &field_where,
			       "goes with strategy: rolling (recreate replaces every instance at "
			       "once)");
		else
			parse_max_unavailable(context, field, &field_where, out);
	}
	if ((field = map_lookup(&fields, "min_ready"))) {
		field_where = where_field(where, "min_ready", buffer, sizeof(buffer));
		parse_min_ready(context, field, &field_where, out);
	}
	if (out->strategy == UPDATE_ROLLING && !out->max_unavailable)
		out->max_unavailable = 1;
	map_entries_free(&fields);
}
