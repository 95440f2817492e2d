/* Restart policies: the fields of a `restart` map, and the merge of stage
 * default <- group <- task, field by field. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const restart_keys[] = {"policy",       "attempts",        "interval",
					   "delay",        "max_delay",       "mode",
					   "success_exit", "no_restart_exit", NULL};
/* In enum order. */
static const char *const policy_names[] = {"always", "on-failure", "never"};
static const char *const mode_names[] = {"fail", "delay"};

static bool parse_attempts(struct load_context *context, const yaml_node_t *node,
			   const struct where *where, unsigned *out)
{
	const char *text = expect_string(context, node, where);
	const char *cursor = text;
	uint64_t value;

	if (!text)
		return false;
	/* supervisord's autorestart=true and Kubernetes' sidecars restart for
	 * as long as they run: no count to spend. */
	if (strcmp(text, "unlimited") == 0) {
		*out = RESTART_ATTEMPTS_UNLIMITED;
		return true;
	}
	if (!read_capped_number(&cursor, UINT_MAX, &value) || *cursor) {
		report(context, node, where,
		       "must be a whole number, 0 or more, or \"unlimited\", not %s",
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	/* UINT_MAX itself is the sentinel of "unlimited". */
	if (value >= RESTART_ATTEMPTS_UNLIMITED) {
		report(context, node, where, "%s is too large",
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	*out = (unsigned)value;
	return true;
}

void restart_fields_parse(struct load_context *context, const yaml_node_t *node,
			  const struct where *where, struct restart_fields *out)
{
	struct restart_policy *values = &out->values;
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[64];
	struct where field_where;
	int index;

	if (!expect_map(context, node, where, "a map of restart fields"))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, restart_keys);

	if ((field = map_lookup(&fields, "policy"))) {
		field_where = where_field(where, "policy", buffer, sizeof(buffer));
		index =
		    expect_keyword(context, field, &field_where, "restart policy", policy_names, 3);
		if (index >= 0) {
			values->policy = (enum restart_policy_kind)index;
			out->has_policy = true;
		}
	}
	if ((field = map_lookup(&fields, "attempts"))) {
		field_where = where_field(where, "attempts", buffer, sizeof(buffer));
		out->has_attempts = parse_attempts(context, field, &field_where, &values->attempts);
	}
	if ((field = map_lookup(&fields, "interval"))) {
		field_where = where_field(where, "interval", buffer, sizeof(buffer));
		out->has_interval =
		    expect_duration(context, field, &field_where, &values->interval_ms);
		/* attempts are counted per interval: an empty window would
		 * never hold a restart. */
		if (out->has_interval && values->interval_ms == 0) {
			report(context, field, &field_where, "must be longer than 0");
			out->has_interval = false;
		}
	}
	if ((field = map_lookup(&fields, "delay"))) {
		field_where = where_field(where, "delay", buffer, sizeof(buffer));
		out->has_delay = expect_duration(context, field, &field_where, &values->delay_ms);
	}
	if ((field = map_lookup(&fields, "max_delay"))) {
		field_where = where_field(where, "max_delay", buffer, sizeof(buffer));
		out->has_max_delay =
		    expect_duration(context, field, &field_where, &values->max_delay_ms);
		out->max_delay_node = field;
	}
	if ((field = map_lookup(&fields, "mode"))) {
		field_where = where_field(where, "mode", buffer, sizeof(buffer));
		index = expect_keyword(context, field, &field_where, "restart mode", mode_names, 2);
		if (index >= 0) {
			values->mode = (enum restart_mode)index;
			out->has_mode = true;
		}
	}
	if ((field = map_lookup(&fields, "success_exit"))) {
		field_where = where_field(where, "success_exit", buffer, sizeof(buffer));
		out->has_success_exit =
		    exit_status_list_parse(context, field, &field_where, &values->success_exit);
	}
	if ((field = map_lookup(&fields, "no_restart_exit"))) {
		field_where = where_field(where, "no_restart_exit", buffer, sizeof(buffer));
		out->has_no_restart_exit =
		    exit_status_list_parse(context, field, &field_where, &values->no_restart_exit);
	}
	map_entries_free(&fields);
}

static void apply_fields(struct restart_policy *policy, const struct restart_fields *fields)
{
	if (fields->has_policy)
		policy->policy = fields->values.policy;
	if (fields->has_attempts)
		policy->attempts = fields->values.attempts;
	if (fields->has_interval)
		policy->interval_ms = fields->values.interval_ms;
	if (fields->has_delay)
		policy->delay_ms = fields->values.delay_ms;
	if (fields->has_max_delay)
		policy->max_delay_ms = fields->values.max_delay_ms;
	if (fields->has_mode)
		policy->mode = fields->values.mode;
	/* A task's list replaces its group's: one place says it all. */
	if (fields->has_success_exit)
		policy->success_exit = fields->values.success_exit;
	if (fields->has_no_restart_exit)
		policy->no_restart_exit = fields->values.no_restart_exit;
}

static void report_max_delay_too_short(struct load_context *context, const yaml_node_t *node,
				       const char *owner, const char *set_in,
				       const struct restart_policy *policy)
{
	struct where where = {.owner = owner, .field = "restart.max_delay"};
	char max_delay[32], delay[32];

	format_duration_ms(policy->max_delay_ms, max_delay, sizeof(max_delay));
	format_duration_ms(policy->delay_ms, delay, sizeof(delay));
	report(context, node, &where, "%s%s is shorter than restart.delay (%s)", max_delay, set_in,
	       delay);
}

void restart_fields_check_group(struct load_context *context, const struct restart_fields *group,
				const struct where *where)
{
	/* delay and max_delay defaults are the same for every stage. */
	struct restart_policy policy = restart_policy_default(STAGE_MAIN);

	apply_fields(&policy, group);
	if (group->has_max_delay && policy.max_delay_ms < policy.delay_ms)
		report_max_delay_too_short(context, group->max_delay_node, where->owner, "",
					   &policy);
}

struct restart_policy restart_policy_merge(struct load_context *context, enum lifecycle_stage stage,
					   const struct restart_fields *group,
					   const char *group_owner,
					   const struct restart_fields *task,
					   const struct where *task_where)
{
	struct restart_policy policy = restart_policy_default(stage);

	apply_fields(&policy, group);
	apply_fields(&policy, task);
	if (policy.max_delay_ms >= policy.delay_ms)
		return policy;

	if (task->has_max_delay) {
		report_max_delay_too_short(context, task->max_delay_node, task_where->owner, "",
					   &policy);
	} else if (group->has_max_delay) {
		/* The group's own values were checked once already: only a
		 * task's delay can make them conflict here. */
		if (task->has_delay) {
			char *set_in = xasprintf(" (set in %s)", group_owner);

			report_max_delay_too_short(context, group->max_delay_node,
						   task_where->owner, set_in, &policy);
			free(set_in);
		}
	} else {
		/* The default cap would undercut the delay asked for: the
		 * backoff simply stays at the delay. */
		policy.max_delay_ms = policy.delay_ms;
	}
	return policy;
}
