/* A task's or group's `log` map: what happens to its output when corral's
 * stdout cannot take it. */
#include "config/config_parse.h"

static const char *const log_keys[] = {"mode", NULL};
/* In enum order. */
static const char *const mode_names[] = {"blocking", "non-blocking"};

void log_fields_parse(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, enum log_mode *mode)
{
	struct map_entries fields;
	const yaml_node_t *field;

	if (!expect_map(context, node, where, "a map of log fields"))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, log_keys);
	if ((field = map_lookup(&fields, "mode"))) {
		char buffer[32];
		struct where mode_where = where_field(where, "mode", buffer, sizeof(buffer));
		int index = expect_keyword(context, field, &mode_where, "log mode", mode_names, 2);
		if (index >= 0)
			*mode = (enum log_mode)index;
	}
	map_entries_free(&fields);
}
