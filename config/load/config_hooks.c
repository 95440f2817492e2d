/* `hooks:` of a group or a task: external programs corral runs at stages
 * of a task's life (docs/hooks.md). Only the values are read here; the
 * processes are the runtime's (hooks/). */
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const hook_keys[] = {"name", "stage", "exec", "timeout", NULL};
/* In the order of enum hook_stage. */
static const char *const stage_names[HOOK_STAGE_COUNT] = {"prestart", "poststart", "prekill",
							  "exited",   "stop",      "update"};

const char *hook_stage_name(enum hook_stage stage)
{
	return (unsigned)stage < HOOK_STAGE_COUNT ? stage_names[stage] : "unknown";
}

static void hook_config_free(struct hook_config *hook)
{
	free(hook->name);
	string_vector_free(hook->argv);
}

void hook_list_free(struct hook_list *list)
{
	for (size_t i = 0; i < list->count; i++)
		hook_config_free(&list->items[i]);
	free(list->items);
	*list = (struct hook_list){0};
}

/* One item; false (reported) when it is not a usable hook. */
static bool parse_hook(struct load_context *context, const yaml_node_t *node,
		       const struct where *where, struct hook_config *hook)
{
	struct map_entries fields;
	const yaml_node_t *field;
	bool valid = true;

	if (!expect_map(context, node, where, "a map with \"name\", \"stage\" and \"exec\""))
		return false;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, hook_keys);
	hook->location = node_location(node);
	hook->timeout_ms = CONFIG_DEFAULT_HOOK_TIMEOUT_MS;

	static const char *const required[] = {"name", "stage", "exec"};
	for (size_t i = 0; i < 3; i++) {
		if (!map_lookup(&fields, required[i]) &&
		    !map_has_key_or_typo(&fields, hook_keys, required[i])) {
			report(context, node, where, "missing \"%s\"", required[i]);
			valid = false;
		}
	}
	if ((field = map_lookup(&fields, "name"))) {
		char buffer[64];
		struct where name_where = where_field(where, "name", buffer, sizeof(buffer));
		const char *name = expect_string(context, field, &name_where);
		const char *problem = name ? name_problem(name, field->data.scalar.length) : NULL;

		if (problem)
			report(context, field, &name_where, "the name %s %s",
			       quote(name, field->data.scalar.length).text, problem);
		if (name && !problem)
			hook->name = xstrdup(name);
		else
			valid = false;
	}
	if ((field = map_lookup(&fields, "stage"))) {
		char buffer[64];
		struct where stage_where = where_field(where, "stage", buffer, sizeof(buffer));
		int stage = expect_keyword(context, field, &stage_where, "stage", stage_names,
					   HOOK_STAGE_COUNT);

		if (stage >= 0)
			hook->stage = (enum hook_stage)stage;
		else
			valid = false;
	}
	if ((field = map_lookup(&fields, "exec"))) {
		char buffer[64];
		struct where exec_where = where_field(where, "exec", buffer, sizeof(buffer));

		if (expect_list(context, field, &exec_where, "a list such as [/path/to/hook, arg]"))
			command_list_parse(context, field, &exec_where, &hook->argv, &hook->argc);
		if (!hook->argc)
			valid = false;
	}
	if ((field = map_lookup(&fields, "timeout"))) {
		char buffer[64];
		struct where timeout_where = where_field(where, "timeout", buffer, sizeof(buffer));

		if (!expect_duration(context, field, &timeout_where, &hook->timeout_ms))
			valid = false;
		else if (hook->timeout_ms == 0) {
			report(context, field, &timeout_where, "must be longer than 0s");
			valid = false;
		}
	}
	map_entries_free(&fields);
	return valid;
}

void hooks_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		 struct hook_list *out)
{
	if (!expect_list(context, node, where, "a list of hooks"))
		return;
	size_t count = list_length(node);
	out->items = xcalloc(count ? count : 1, sizeof(*out->items));
	yaml_list_each(walk, context, node, where)
	{
		struct hook_config *hook = &out->items[out->count];

		if (!walk.item)
			continue;
		if (!parse_hook(context, walk.item, &walk.where, hook)) {
			hook_config_free(hook);
			memset(hook, 0, sizeof(*hook));
			continue;
		}
		/* State belongs to a name (docs/hooks.md), and one stage runs a
		 * name once. */
		for (size_t j = 0; j < out->count; j++) {
			if (strcmp(out->items[j].name, hook->name) == 0 &&
			    out->items[j].stage == hook->stage) {
				report(context, walk.item, &walk.where,
				       "duplicate hook \"%s\" for stage %s (first defined at line "
				       "%u)",
				       hook->name, hook_stage_name(hook->stage),
				       out->items[j].location.line);
				hook_config_free(hook);
				memset(hook, 0, sizeof(*hook));
				hook = NULL;
				break;
			}
		}
		if (hook)
			out->count++;
	}
}

void hook_config_copy(struct hook_config *to, const struct hook_config *from)
{
	*to = *from;
	to->name = xstrdup(from->name);
	to->argv = string_vector_copy(from->argv);
}

void hooks_merge(const struct hook_list *group, const struct hook_list *task,
		 struct hook_config **out, size_t *count)
{
	size_t total = group->count + task->count;
	*out = NULL;
	*count = 0;
	if (!total)
		return;
	*out = xcalloc(total, sizeof(**out));
	for (size_t i = 0; i < group->count; i++)
		hook_config_copy(&(*out)[(*count)++], &group->items[i]);
	for (size_t i = 0; i < task->count; i++) {
		const struct hook_config *hook = &task->items[i];
		size_t at = *count;
		for (size_t j = 0; j < group->count; j++)
			if (strcmp(group->items[j].name, hook->name) == 0 &&
			    group->items[j].stage == hook->stage)
				at = j;
		if (at < *count)
			hook_config_free(&(*out)[at]);
		else
			(*count)++;
		hook_config_copy(&(*out)[at], hook);
	}
}

void hook_configs_free(struct hook_config *hooks, size_t count)
{
	for (size_t i = 0; i < count; i++)
		hook_config_free(&hooks[i]);
	free(hooks);
}
