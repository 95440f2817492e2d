/* The top level's `notify` map: when corral tells its own parent it is
 * ready (READY=1 on the NOTIFY_SOCKET systemd, podman or quadlet gave it;
 * supervisor/parent/ sends it). */
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const notify_keys[] = {"ready", NULL};
static const char *const ready_names[] = {
    [NOTIFY_READY_ALL] = "all", [NOTIFY_READY_STARTED] = "started"};

static bool is_group(const struct config *config, const char *name)
{
	for (size_t i = 0; i < config->group_count; i++)
		if (strcmp(config->groups[i].name, name) == 0)
			return true;
	return false;
}

static bool listed_already(const struct config *config, const char *name)
{
	for (size_t i = 0; i < config->notify_ready_group_count; i++)
		if (strcmp(config->notify_ready_groups[i], name) == 0)
			return true;
	return false;
}

/* A group the active profiles left out is written, not unknown: say so, as
 * a dependency on it does. */
static bool report_left_out_group(struct load_context *context, const yaml_node_t *node,
				  const struct where *where, const char *name, size_t length)
{
	const char *profiles = profiles_excluded(context, name, length);
	if (profiles) {
		bool several = strchr(profiles, ',') != NULL;
		report(context, node, where,
		       "group %s is left out: it is only in profile%s [%s], %s active (activate "
		       "one with --profile or CORRAL_PROFILES, or leave it out of the list)",
		       quote(name, length).text, several ? "s" : "", profiles,
		       several ? "none of them" : "which is not");
		return true;
	}
	if (profiles_excluded_in_group(context, name, length)) {
		report(context, node, where,
		       "group %s is left out: each of its tasks is in a profile that is not active "
		       "(activate one with --profile or CORRAL_PROFILES, or leave it out of the "
		       "list)",
		       quote(name, length).text);
		return true;
	}
	return false;
}

static void report_unknown_group(struct load_context *context, const yaml_node_t *node,
				 const struct where *where, const struct config *config,
				 const char *name, size_t length)
{
	if (report_left_out_group(context, node, where, name, length))
		return;
	const char **names = xcalloc(config->group_count + 1, sizeof(*names));
	for (size_t i = 0; i < config->group_count; i++)
		names[i] = config->groups[i].name;
	const char *nearest = suggest_nearest(name, length, names, config->group_count);
	if (nearest)
		report(context, node, where, "unknown group %s; did you mean \"%s\"?",
		       quote(name, length).text, nearest);
	else
		report(context, node, where, "unknown group %s", quote(name, length).text);
	free(names);
}

/* `ready: [GROUP, ...]`: the groups whose tasks must be ready. */
static void parse_ready_groups(struct load_context *context, const yaml_node_t *node,
			       const struct where *where, struct config *config)
{
	size_t count = list_length(node);
	if (count == 0) {
		report(context, node, where,
		       "must name at least one group (or be \"all\" or \"started\")");
		return;
	}
	config->notify_ready_groups = xcalloc(count, sizeof(*config->notify_ready_groups));
	yaml_list_each(walk, context, node, where)
	{
		const char *name =
		    walk.item ? expect_string(context, walk.item, &walk.where) : NULL;
		if (!name)
			continue;
		size_t length = walk.item->data.scalar.length;
		if (!is_group(config, name))
			report_unknown_group(context, walk.item, &walk.where, config, name, length);
		else if (listed_already(config, name))
			report(context, walk.item, &walk.where, "group %s is listed twice",
			       quote(name, length).text);
		else
			config->notify_ready_groups[config->notify_ready_group_count++] =
			    xstrdup(name);
	}
	config->notify_ready = NOTIFY_READY_GROUPS;
}

/* `ready: all` or `ready: started`; a group's name alone is told to be
 * written as a list. */
static void parse_ready_keyword(struct load_context *context, const yaml_node_t *node,
				const struct where *where, struct config *config)
{
	const char *text = expect_string(context, node, where);
	if (!text)
		return;
	size_t length = node->data.scalar.length;
	for (size_t i = 0; i < sizeof(ready_names) / sizeof(ready_names[0]); i++)
		if (strcmp(text, ready_names[i]) == 0) {
			config->notify_ready = (enum notify_ready)i;
			return;
		}
	const char *nearest = suggest_nearest(text, length, ready_names, 2);
	if (is_group(config, text))
		report(context, node, where, "%s is a group: list the groups, as [%s]",
		       quote(text, length).text, text);
	else if (nearest)
		report(context, node, where, "unknown value %s; did you mean \"%s\"?",
		       quote(text, length).text, nearest);
	else
		report(context, node, where, "must be all, started or a list of groups, not %s",
		       quote(text, length).text);
}

void notify_settings_parse(struct load_context *context, const yaml_node_t *node,
			   struct config *config)
{
	struct where where = {.owner = "", .field = "notify"};
	struct map_entries fields;
	const yaml_node_t *ready;

	if (!expect_map(context, node, &where, "a map such as {ready: all}"))
		return;
	map_collect(context, node, &where, "key", &fields);
	map_check_keys(context, &fields, &where, notify_keys);
	if ((ready = map_lookup(&fields, "ready"))) {
		struct where ready_where = {.owner = "", .field = "notify.ready"};
		if (ready->type == YAML_SEQUENCE_NODE) {
			parse_ready_groups(context, ready, &ready_where, config);
		} else {
			parse_ready_keyword(context, ready, &ready_where, config);
		}
	}
	map_entries_free(&fields);
}
