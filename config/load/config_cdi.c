/* A task's or group's `cdi` map: the CDI devices it asks for and, rarely,
 * where their specs are. Only the names' syntax is checked here: the specs
 * are read when the task starts (hooks/cdi.h), since drivers rewrite them
 * while corral runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/text/cdi_name.h"
#include "config/yaml/diagnostics.h"

static const char *const cdi_keys[] = {"devices", "spec_dirs", NULL};

/* Each valid item, checked by `check` (which reports and returns false). */
typedef bool check_item(struct load_context *context, const yaml_node_t *item,
			const struct where *where, const char *text, char **vector, size_t count);

static bool check_device_name(struct load_context *context, const yaml_node_t *item,
			      const struct where *where, const char *name, char **vector,
			      size_t count)
{
	char buffer[192];
	const char *problem = cdi_qualified_name_problem(name, buffer, sizeof(buffer));

	if (problem) {
		report(context, item, where, "invalid CDI device name %s: %s",
		       quote(name, item->data.scalar.length).text, problem);
		return false;
	}
	for (size_t i = 0; i < count; i++) {
		if (strcmp(vector[i], name) == 0) {
			report(context, item, where, "device %s is listed twice",
			       quote(name, item->data.scalar.length).text);
			return false;
		}
	}
	return true;
}

static bool check_spec_dir(struct load_context *context, const yaml_node_t *item,
			   const struct where *where, const char *path, char **vector, size_t count)
{
	if (path[0] != '/') {
		report(context, item, where, "must be an absolute path, not %s",
		       quote(path, item->data.scalar.length).text);
		return false;
	}
	return true;
}

static void parse_string_list(struct load_context *context, const yaml_node_t *node,
			      const struct where *where, const char *expected, check_item *check,
			      char ***out, size_t *out_count)
{
	size_t count;

	if (!expect_list(context, node, where, expected))
		return;
	count = list_length(node);
	*out = xcalloc(count + 1, sizeof(**out));
	yaml_list_each(walk, context, node, where)
	{
		const char *text =
		    walk.item ? expect_string(context, walk.item, &walk.where) : NULL;

		if (text && check(context, walk.item, &walk.where, text, *out, *out_count))
			(*out)[(*out_count)++] = xstrdup(text);
	}
}

void cdi_fields_parse(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct cdi_fields *out)
{
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[32];
	struct where field_where;

	if (!expect_map(context, node, where, "a map such as {devices: [vendor.com/gpu=0]}"))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, cdi_keys);
	if ((field = map_lookup(&fields, "devices"))) {
		field_where = where_field(where, "devices", buffer, sizeof(buffer));
		out->has_devices = true;
		out->devices_node = field;
		parse_string_list(context, field, &field_where,
				  "a list of device names (VENDOR/CLASS=NAME)", check_device_name,
				  &out->devices, &out->device_count);
	}
	if ((field = map_lookup(&fields, "spec_dirs"))) {
		size_t count = 0;

		field_where = where_field(where, "spec_dirs", buffer, sizeof(buffer));
		out->has_spec_dirs = true;
		if (field->type == YAML_SEQUENCE_NODE && list_length(field) == 0)
			report(context, field, &field_where,
			       "must not be empty (leave it out for /etc/cdi and /var/run/cdi)");
		else
			parse_string_list(context, field, &field_where, "a list of directories",
					  check_spec_dir, &out->spec_dirs, &count);
	}
	map_entries_free(&fields);
}

struct cdi_config cdi_merge(struct load_context *context, const struct cdi_fields *group,
			    const char *group_owner, const struct cdi_fields *task,
			    const char *task_owner, unsigned namespaces)
{
	const struct cdi_fields *devices = task->has_devices    ? task
					   : group->has_devices ? group
								: NULL;
	const struct cdi_fields *dirs = task->has_spec_dirs    ? task
					: group->has_spec_dirs ? group
							       : NULL;
	struct cdi_config merged = {0};

	if (devices && devices->device_count) {
		merged.devices = string_vector_copy(devices->devices);
		merged.device_count = devices->device_count;
		if (!(namespaces & ISOLATION_NS_MOUNT)) {
			char set_in[96] = "";

			if (devices == group)
				snprintf(set_in, sizeof(set_in), " (set in %s)", group_owner);
			report(context, devices->devices_node,
			       &(struct where){task_owner, "cdi.devices"},
			       "CDI devices%s need the mount namespace (their device nodes and "
			       "mounts are added inside the task); add mount to "
			       "isolation.namespaces",
			       set_in);
		}
	}
	if (dirs)
		merged.spec_dirs = string_vector_copy(dirs->spec_dirs);
	return merged;
}

void cdi_fields_free(struct cdi_fields *fields)
{
	string_vector_free(fields->devices);
	string_vector_free(fields->spec_dirs);
	*fields = (struct cdi_fields){0};
}
