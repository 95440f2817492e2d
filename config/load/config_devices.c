/* `isolation.devices`: the host's device nodes an isolated task may use,
 * on top of the default set every isolated task gets (docs/config.md).
 *
 *     devices:
 *       - {path: /dev/fuse, permissions: rw}
 *       - /dev/net/tun                          # {path: ..., permissions: rw}
 *       - {path: /dev/kvm, target: /dev/vm0}    # seen there in the task
 *
 * Unlike the rest of the loader, each path is looked at with stat(2): a
 * misspelt node (/dev/fuze) or a regular file would otherwise only show
 * when the task starts, in every restart of it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/file_kind.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const device_keys[] = {"path", "target", "permissions", NULL};

/* What a device entry allows when its permissions are not written: read
 * and write. mknod is not needed to use a node bound into the task, and an
 * isolated task may make any node anyway (only opening is checked). */
#define DEVICE_PERMISSIONS_DEFAULT (DEVICE_READ | DEVICE_WRITE)

void device_configs_free(struct device_config *devices, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(devices[i].source);
		free(devices[i].target);
	}
	free(devices);
}

void device_config_copy(struct device_config *to, const struct device_config *from)
{
	*to = *from;
	to->source = xstrdup(from->source);
	to->target = from->target ? xstrdup(from->target) : NULL;
}

/* An absolute path to a character or block device of this machine. */
static bool parse_device_path(struct load_context *context, const yaml_node_t *node,
			      const struct where *where, const char **out)
{
	struct stat status;

	if (!(*out = expect_absolute(context, node, where)))
		return false;
	if (stat(*out, &status) < 0) {
		report(context, node, where, "%s: %s", quote(*out, node->data.scalar.length).text,
		       strerror(errno));
		return false;
	}
	if (!S_ISCHR(status.st_mode) && !S_ISBLK(status.st_mode)) {
		report(context, node, where,
		       "%s is %s; expected a character or block device such as /dev/fuse",
		       quote(*out, node->data.scalar.length).text, file_kind(status.st_mode));
		return false;
	}
	return true;
}

/* Letters from r, w and m, each once: "rw", "r", "rwm". */
static bool parse_permissions(struct load_context *context, const yaml_node_t *node,
			      const struct where *where, unsigned *out)
{
	const char *text = expect_string(context, node, where);
	unsigned permissions = 0;

	if (!text)
		return false;
	for (const char *letter = text; *letter; letter++) {
		unsigned bit = *letter == 'r'   ? DEVICE_READ
			       : *letter == 'w' ? DEVICE_WRITE
			       : *letter == 'm' ? DEVICE_MKNOD
						: 0;
		if (!bit || (permissions & bit)) {
			permissions = 0;
			break;
		}
		permissions |= bit;
	}
	if (!permissions) {
		report(context, node, where,
		       "must be letters from r (read), w (write) and m (mknod), each once, such as "
		       "\"rw\", not %s",
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	*out = permissions;
	return true;
}

/* One entry: a map, or a path alone. False after reporting. */
static bool parse_device(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, struct device_config *out)
{
	struct map_entries fields;
	const yaml_node_t *field;
	const char *path = NULL, *target = NULL;
	unsigned permissions = DEVICE_PERMISSIONS_DEFAULT;
	bool valid = true;
	char buffer[96];
	struct where field_where;

	if (node->type == YAML_SCALAR_NODE && !node_is_null(node)) {
		if (!parse_device_path(context, node, where, &path))
			return false;
		*out = (struct device_config){.source = xstrdup(path), .permissions = permissions};
		return true;
	}
	if (!expect_map(context, node, where, "a map such as {path: /dev/fuse, permissions: rw}"))
		return false;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, device_keys);
	if ((field = map_lookup(&fields, "path"))) {
		field_where = where_field(where, "path", buffer, sizeof(buffer));
		valid &= parse_device_path(context, field, &field_where, &path);
	} else {
		if (!map_has_key_or_typo(&fields, device_keys, "path"))
			report(context, node, where, "missing \"path\" (the host's device node)");
		valid = false;
	}
	if ((field = map_lookup(&fields, "target"))) {
		field_where = where_field(where, "target", buffer, sizeof(buffer));
		valid &= (target = expect_absolute(context, field, &field_where)) != NULL;
	}
	if ((field = map_lookup(&fields, "permissions"))) {
		field_where = where_field(where, "permissions", buffer, sizeof(buffer));
		valid &= parse_permissions(context, field, &field_where, &permissions);
	}
	if (valid) {
		/* A target written as the path itself is no target. */
		*out = (struct device_config){
		    .source = xstrdup(path),
		    .target = target && strcmp(target, path) != 0 ? xstrdup(target) : NULL,
		    .permissions = permissions,
		};
	}
	map_entries_free(&fields);
	return valid;
}

const char *device_config_target(const struct device_config *device)
{
	return device->target ? device->target : device->source;
}

void devices_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		   struct device_config **out, size_t *count)
{
	size_t length;
	const yaml_node_t **nodes;

	*out = NULL;
	*count = 0;
	if (!expect_list(context, node, where,
			 "a list of devices such as [{path: /dev/fuse, permissions: rw}]"))
		return;
	length = list_length(node);
	*out = xcalloc(length ? length : 1, sizeof(**out));
	nodes = xcalloc(length ? length : 1, sizeof(*nodes));
	yaml_list_each(walk, context, node, where)
	{
		struct device_config *device = &(*out)[*count];
		size_t earlier = 0;

		if (!walk.item || !parse_device(context, walk.item, &walk.where, device))
			continue;
		/* Two nodes at one place in the task cannot both be there. */
		while (earlier < *count &&
		       strcmp(device_config_target(&(*out)[earlier]), device_config_target(device)))
			earlier++;
		if (earlier < *count) {
			report(context, walk.item, &walk.where,
			       "%s is listed twice (first at line %u); list each device once",
			       quote(device_config_target(device),
				     strlen(device_config_target(device)))
				   .text,
			       node_location(nodes[earlier]).line);
			free(device->source);
			free(device->target);
			*device = (struct device_config){0};
			continue;
		}
		nodes[(*count)++] = walk.item;
	}
	free(nodes);
	if (!*count) {
		free(*out);
		*out = NULL;
	}
}

void devices_merge(struct isolation_config *merged, const struct isolation_config *group,
		   const struct isolation_config *task)
{
	size_t count = 0;
	struct device_config *devices =
	    xcalloc(group->device_count + task->device_count + 1, sizeof(*devices));

	/* The group's, but those the task lists again at the same place: the
	 * task's entry says what it gets there. */
	for (size_t i = 0; i < group->device_count; i++) {
		const char *target = device_config_target(&group->devices[i]);
		bool replaced = false;

		for (size_t j = 0; j < task->device_count && !replaced; j++)
			replaced = strcmp(target, device_config_target(&task->devices[j])) == 0;
		if (!replaced)
			devices[count++] = group->devices[i];
	}
	for (size_t i = 0; i < task->device_count; i++)
		devices[count++] = task->devices[i];
	for (size_t i = 0; i < count; i++)
		device_config_copy(&devices[i], &devices[i]);
	if (!count) {
		free(devices);
		devices = NULL;
	}
	merged->devices = devices;
	merged->device_count = count;
}
