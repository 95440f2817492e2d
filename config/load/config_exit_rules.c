/* Exit-code rules: the lists of exit statuses in `restart:`
 * (success_exit, no_restart_exit) and a group's `on_failure:`. */
#include <stdint.h>
#include <string.h>

#include "base/units.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const failure_action_names[] = {"stop", "restart", "ignore", "exit", NULL};
static const char *const on_failure_keys[] = {"action", "attempts", "interval", NULL};

static void add_code(struct exit_status_set *set, unsigned code)
{
	set->codes[code / 64] |= UINT64_C(1) << (code % 64);
}

static void add_signal(struct exit_status_set *set, int signal_number)
{
	set->signals |= UINT64_C(1) << (signal_number - 1);
}

/* One item: 0..255, or a signal name ("SIGTERM", "TERM"). */
static bool parse_exit_status(struct load_context *context, const yaml_node_t *node,
			      const struct where *where, struct exit_status_set *set)
{
	const char *text = expect_string(context, node, where);
	const char *cursor = text;
	uint64_t code;

	if (!text)
		return false;
	if (read_capped_number(&cursor, 1000, &code) && !*cursor) {
		if (code > 255) {
			report(context, node, where,
			       "exit code %s is out of range: exit codes are 0 to 255",
			       quote(text, node->data.scalar.length).text);
			return false;
		}
		add_code(set, (unsigned)code);
		return true;
	}
	int signal_number = parse_signal_name(text);
	if (signal_number < 1 || signal_number > 64) {
		if ((*text >= '0' && *text <= '9') || *text == '-')
			report(context, node, where,
			       "must be an exit code (0 to 255) or a signal name, not %s",
			       quote(text, node->data.scalar.length).text);
		else
			report_unknown_signal(context, node, where, text);
		return false;
	}
	add_signal(set, signal_number);
	return true;
}

bool exit_status_list_parse(struct load_context *context, const yaml_node_t *node,
			    const struct where *where, struct exit_status_set *out)
{
	bool ok = true;

	memset(out, 0, sizeof(*out));
	if (!expect_list(context, node, where, "a list of exit codes and signal names"))
		return false;
	yaml_list_each(walk, context, node, where)
	{

		if (walk.item && !parse_exit_status(context, walk.item, &walk.where, out))
			ok = false;
	}
	return ok;
}

static void parse_attempts_field(struct load_context *context, const yaml_node_t *node,
				 const struct where *where, unsigned *out)
{
	const char *text = expect_string(context, node, where);
	const char *cursor = text;
	uint64_t value;

	if (!text)
		return;
	if (!read_capped_number(&cursor, 1000000, &value) || *cursor || value == 0 ||
	    value > 1000000) {
		report(context, node, where, "must be a whole number from 1 to 1000000, not %s",
		       quote(text, node->data.scalar.length).text);
		return;
	}
	*out = (unsigned)value;
}

static void parse_action(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, struct group_failure_policy *out)
{
	int index = expect_keyword(context, node, where, "action", failure_action_names, 4);
	if (index >= 0)
		out->action = (enum group_failure_action)index;
}

void on_failure_parse(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct group_failure_policy *out)
{
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[64];
	struct where field_where;

	/* The short form names the action alone. */
	if (node->type == YAML_SCALAR_NODE) {
		parse_action(context, node, where, out);
		return;
	}
	if (!expect_map(context, node, where,
			"\"stop\", \"restart\", \"ignore\", \"exit\" or a map with \"action\""))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, on_failure_keys);
	if ((field = map_lookup(&fields, "action"))) {
		field_where = where_field(where, "action", buffer, sizeof(buffer));
		parse_action(context, field, &field_where, out);
	} else if (!map_has_key_or_typo(&fields, on_failure_keys, "action")) {
		report(context, node, where, "missing \"action\" (stop, restart, ignore or exit)");
	}
	bool bounds = false;
	if ((field = map_lookup(&fields, "attempts"))) {
		field_where = where_field(where, "attempts", buffer, sizeof(buffer));
		parse_attempts_field(context, field, &field_where, &out->attempts);
		bounds = true;
	}
	if ((field = map_lookup(&fields, "interval"))) {
		field_where = where_field(where, "interval", buffer, sizeof(buffer));
		if (expect_duration(context, field, &field_where, &out->interval_ms) &&
		    out->interval_ms == 0)
			report(context, field, &field_where, "must be longer than 0");
		bounds = true;
	}
	/* Bounds of something that never restarts are a mistake, not a
	 * default to keep quiet about. */
	if (bounds && out->action != GROUP_ON_FAILURE_RESTART && map_lookup(&fields, "action"))
		report(context, node, where,
		       "attempts and interval apply only to action \"restart\", not \"%s\"",
		       group_failure_action_name(out->action));
	map_entries_free(&fields);
}
