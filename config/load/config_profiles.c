/* `profiles:` of a group or a task (compose's profiles): whether it is
 * active, and what a config without it should say when something names
 * it (config_dependencies.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/load/profiles.h"
#include "config/yaml/diagnostics.h"

const char *profile_name_problem(const char *name, size_t length)
{
	static const char alphanumeric[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	if (length == 0)
		return "must not be empty";
	if (!strchr(alphanumeric, name[0]) || name[0] == '\0')
		return "must start with a letter or a digit";
	for (size_t i = 1; i < length; i++)
		if (!name[i] || (!strchr(alphanumeric, name[i]) && !strchr("_.-", name[i])))
			return "may only use letters, digits, '_', '.' and '-'";
	return NULL;
}

static void add_name(char ***names, size_t *count, const char *name, size_t length)
{
	for (size_t i = 0; i < *count; i++)
		if (strlen((*names)[i]) == length && strncmp((*names)[i], name, length) == 0)
			return;
	*names = xreallocarray(*names, *count + 2, sizeof(**names));
	(*names)[(*count)++] = xasprintf("%.*s", (int)length, name);
	(*names)[*count] = NULL;
}

int profiles_split(const char *text, char ***names, size_t *count, char *error, size_t error_size)
{
	for (const char *item = text; *item;) {
		size_t length = strcspn(item, ",");
		const char *start = item + strspn(item, " \t");
		size_t trimmed = length - (size_t)(start - item);
		while (trimmed && (start[trimmed - 1] == ' ' || start[trimmed - 1] == '\t'))
			trimmed--;
		if (trimmed) {
			const char *problem = profile_name_problem(start, trimmed);
			if (problem) {
				snprintf(error, error_size, "profile \"%.*s\": %s", (int)trimmed,
					 start, problem);
				return -1;
			}
			add_name(names, count, start, trimmed);
		}
		item += length + (item[length] == ',');
	}
	return 0;
}

void profiles_describe(const char *const *profiles, char *buffer, size_t size)
{
	size_t used = 0;
	snprintf(buffer, size, "none");
	for (size_t i = 0; profiles && profiles[i]; i++) {
		int wrote =
		    snprintf(buffer + used, size - used, "%s%s", i ? ", " : "", profiles[i]);
		if (wrote < 0 || (size_t)wrote >= size - used)
			return;
		used += (size_t)wrote;
	}
}

/* Whether `name` is active; if so, it is noted as listed. */
static bool is_active(const struct load_context *context, const char *name)
{
	for (size_t i = 0; context->profiles && context->profiles[i]; i++)
		if (strcmp(context->profiles[i], name) == 0) {
			if (context->profile_listed)
				context->profile_listed[i] = true;
			return true;
		}
	return false;
}

/* The `profiles` value of a group's or task's map, found without reading
 * the rest (the map itself is read, and checked, by its parser). */
static const yaml_node_t *profiles_node(struct load_context *context, const yaml_node_t *map)
{
	if (map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *key = yaml_document_get_node(context->document, pair->key);
		if (key && key->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)key->data.scalar.value, "profiles") == 0)
			return yaml_document_get_node(context->document, pair->value);
	}
	return NULL;
}

bool profiles_active(struct load_context *context, const yaml_node_t *map, const char *owner,
		     char *written, size_t written_size)
{
	const yaml_node_t *node = profiles_node(context, map);
	struct where where = {owner, "profiles"};
	written[0] = '\0';
	if (!node)
		return true;
	if (!expect_list(context, node, &where, "a list of profile names such as [debug]"))
		return true;
	if (list_length(node) == 0) {
		report(context, node, &where,
		       "must name at least one profile (leave it out to always run)");
		return true;
	}
	bool active = false, valid = true;
	size_t used = 0;
	yaml_list_each(walk, context, node, &where)
	{
		const char *name =
		    walk.item ? expect_string(context, walk.item, &walk.where) : NULL;
		if (!name) {
			valid = false;
			continue;
		}
		const char *problem = profile_name_problem(name, walk.item->data.scalar.length);
		if (problem) {
			report(context, walk.item, &walk.where, "invalid profile name %s: %s",
			       quote(name, walk.item->data.scalar.length).text, problem);
			valid = false;
			continue;
		}
		active = is_active(context, name) || active;
		int wrote =
		    snprintf(written + used, written_size - used, "%s%s", used ? ", " : "", name);
		if (wrote > 0 && (size_t)wrote < written_size - used)
			used += (size_t)wrote;
	}
	/* A mistake there is reported; the rest is read as if active, so that
	 * its own mistakes are found too. */
	return active || !valid;
}

void profiles_exclude(struct load_context *context, const char *name, const char *written)
{
	struct profile_exclusions *excluded = context->excluded;
	if (!excluded)
		return;
	excluded->items =
	    xreallocarray(excluded->items, excluded->count + 1, sizeof(*excluded->items));
	excluded->items[excluded->count++] =
	    (struct profile_exclusion){xstrdup(name), xstrdup(written)};
}

const char *profiles_excluded(const struct load_context *context, const char *name, size_t length)
{
	const struct profile_exclusions *excluded = context->excluded;
	for (size_t i = 0; excluded && i < excluded->count; i++)
		if (strlen(excluded->items[i].name) == length &&
		    strncmp(excluded->items[i].name, name, length) == 0)
			return excluded->items[i].profiles;
	return NULL;
}

bool profiles_excluded_in_group(const struct load_context *context, const char *group,
				size_t length)
{
	const struct profile_exclusions *excluded = context->excluded;
	for (size_t i = 0; excluded && i < excluded->count; i++)
		if (strncmp(excluded->items[i].name, group, length) == 0 &&
		    excluded->items[i].name[length] == '/')
			return true;
	return false;
}

void profile_exclusions_free(struct profile_exclusions *excluded)
{
	for (size_t i = 0; i < excluded->count; i++) {
		free(excluded->items[i].name);
		free(excluded->items[i].profiles);
	}
	free(excluded->items);
	*excluded = (struct profile_exclusions){0};
}
