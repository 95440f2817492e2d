/* A task's or group's `log` map: what happens to its output when corral's
 * stdout cannot take it. */
#include "config/config_parse.h"
#include "config/diagnostics.h"

static const char *const log_keys[] = {"mode", "history", NULL};
/* Enough for a few lines; more than a task's recent output needs. */
#define HISTORY_MIN 1024
#define HISTORY_MAX (64ull * 1024 * 1024)
/* In enum order. */
static const char *const mode_names[] = {"blocking", "non-blocking"};

void log_fields_parse(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, enum log_mode *mode, uint64_t *history)
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
	if ((field = map_lookup(&fields, "history"))) {
		char buffer[32];
		struct where history_where = where_field(where, "history", buffer, sizeof(buffer));
		uint64_t bytes;
		if (expect_size(context, field, &history_where, &bytes)) {
			if (bytes >= HISTORY_MIN && bytes <= HISTORY_MAX)
				*history = bytes;
			else
				report(context, field, &history_where, "must be from 1K to 64M, not %s",
				       quote((const char *)field->data.scalar.value,
					     field->data.scalar.length)
					   .text);
		}
	}
	map_entries_free(&fields);
}
