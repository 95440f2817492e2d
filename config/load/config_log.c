/* A task's or group's `log` map: what happens to its output when corral's
 * stdout cannot take it, how much corral keeps, the file it writes, and
 * whether stdout and stderr are kept apart. */
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

#include <stdlib.h>

static const char *const log_keys[] = {"mode", "history",    "dir",     "shared_dir", "max_size",
				       "keep", "rate_limit", "streams", NULL};
/* Enough for a few lines; more than a task's recent output needs. */
#define HISTORY_MIN 1024
#define HISTORY_MAX (64ull * 1024 * 1024)
/* A rotation per few lines would be all the file does. */
#define MAX_SIZE_MIN 4096
/* One of corral's reads a second at least. */
#define RATE_LIMIT_MIN (64 * 1024)
/* In enum order. */
static const char *const mode_names[] = {"blocking", "non-blocking"};
static const char *const streams_names[] = {"merged", "separate"};

void log_fields_parse(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct log_fields *out)
{
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[32];
	struct where field_where;

	if (!expect_map(context, node, where, "a map of log fields"))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, log_keys);
	if ((field = map_lookup(&fields, "mode"))) {
		field_where = where_field(where, "mode", buffer, sizeof(buffer));
		int index = expect_keyword(context, field, &field_where, "log mode", mode_names, 2);
		if (index >= 0)
			out->mode = (enum log_mode)index;
	}
	if ((field = map_lookup(&fields, "streams"))) {
		field_where = where_field(where, "streams", buffer, sizeof(buffer));
		int index =
		    expect_keyword(context, field, &field_where, "log streams", streams_names, 2);
		if (index >= 0)
			out->separate_streams = index == 1;
	}
	if ((field = map_lookup(&fields, "history"))) {
		field_where = where_field(where, "history", buffer, sizeof(buffer));
		uint64_t bytes;
		if (expect_size(context, field, &field_where, &bytes)) {
			if (bytes >= HISTORY_MIN && bytes <= HISTORY_MAX)
				out->history = bytes;
			else
				report(context, field, &field_where,
				       "must be from 1K to 64M, not %s",
				       quote((const char *)field->data.scalar.value,
					     field->data.scalar.length)
					   .text);
		}
	}
	if ((field = map_lookup(&fields, "dir"))) {
		field_where = where_field(where, "dir", buffer, sizeof(buffer));
		const char *dir = expect_absolute(context, field, &field_where);
		if (dir)
			out->dir = dir;
	}
	if ((field = map_lookup(&fields, "shared_dir"))) {
		field_where = where_field(where, "shared_dir", buffer, sizeof(buffer));
		expect_bool(context, field, &field_where, &out->shared_dir);
	}
	if ((field = map_lookup(&fields, "max_size"))) {
		field_where = where_field(where, "max_size", buffer, sizeof(buffer));
		uint64_t bytes;
		if (expect_size(context, field, &field_where, &bytes)) {
			if (bytes >= MAX_SIZE_MIN)
				out->max_size = bytes;
			else
				report(context, field, &field_where, "must be 4K or more, not %s",
				       quote((const char *)field->data.scalar.value,
					     field->data.scalar.length)
					   .text);
		}
	}
	if ((field = map_lookup(&fields, "rate_limit"))) {
		field_where = where_field(where, "rate_limit", buffer, sizeof(buffer));
		uint64_t bytes;
		if (expect_size(context, field, &field_where, &bytes)) {
			if (bytes >= RATE_LIMIT_MIN)
				out->rate_limit = bytes;
			else
				report(context, field, &field_where,
				       "must be 64K (a second's worth) or more, not %s",
				       quote((const char *)field->data.scalar.value,
					     field->data.scalar.length)
					   .text);
		}
	}
	if ((field = map_lookup(&fields, "keep"))) {
		field_where = where_field(where, "keep", buffer, sizeof(buffer));
		const char *text = expect_string(context, field, &field_where);
		char *end;
		unsigned long keep = text ? strtoul(text, &end, 10) : 0;
		if (text && (!*text || *end || text[0] == '-' || keep > 1000))
			report(context, field, &field_where,
			       "must be a whole number from 0 to 1000, not %s",
			       quote(text, field->data.scalar.length).text);
		else if (text)
			out->keep = (unsigned)keep;
	}
	map_entries_free(&fields);
}
