/* A task's root file system and mounts: `isolation.rootfs`,
 * `readonly_rootfs` and `mounts`, their checks and the merge of group <-
 * task. Unlike the rest of the loader this looks at the file system: a
 * rootfs that is not a directory, or a bind whose source does not exist, is
 * a mistake best shown with its line. Whether the kernel takes a mount is
 * found out when the task starts (isolation/mount_plan.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "base/paths.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const mount_keys[] = {
    "source", "target", "type", "readonly", "propagation", "options", NULL,
};

/* mount(8)'s --make-* names, and what mount_setattr takes for each. */
static const char *const propagation_names[] = {"private", "rprivate", "slave",        "rslave",
						"shared",  "rshared",  "bidirectional"};
/* bidirectional is not a flag of the task's own: see mount_config. */
static const unsigned long propagation_flags[] = {
    MS_PRIVATE, MS_PRIVATE | MS_REC, MS_SLAVE, MS_SLAVE | MS_REC, MS_SHARED, MS_SHARED | MS_REC, 0,
};
#define BIDIRECTIONAL_INDEX 6
#define PROPAGATION_COUNT   (sizeof(propagation_names) / sizeof(propagation_names[0]))

static void mount_config_clear(struct mount_config *mount)
{
	free(mount->type);
	free(mount->source);
	free(mount->target);
	string_vector_free(mount->options);
	memset(mount, 0, sizeof(*mount));
}

void mount_configs_free(struct mount_config *mounts, size_t count)
{
	for (size_t i = 0; i < count; i++)
		mount_config_clear(&mounts[i]);
	free(mounts);
}

void mount_config_copy(struct mount_config *to, const struct mount_config *from)
{
	*to = *from;
	to->type = from->type ? xstrdup(from->type) : NULL;
	to->source = from->source ? xstrdup(from->source) : NULL;
	to->target = xstrdup(from->target);
	to->options = string_vector_copy(from->options);
}

/* A place inside the task's root: absolute, below /, never going up. The
 * runtime resolves it inside the root anyway; refusing ".." here says
 * what the writer meant is not what they get. */
static bool parse_target(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, char **out)
{
	const char *text = expect_absolute(context, node, where);

	if (!text)
		return false;
	if (path_has_parent_component(text)) {
		report(context, node, where, "must not go up with \"..\", not %s",
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	if (text[strspn(text, "/")] == '\0') {
		report(context, node, where, "must be below /, not / itself");
		return false;
	}
	*out = xstrdup(text);
	return true;
}

/* A host path that must exist now; directory or not, as `directory` says. */
static bool parse_host_path(struct load_context *context, const yaml_node_t *node,
			    const struct where *where, bool directory, char **out)
{
	const char *text = expect_absolute(context, node, where);
	struct stat status;

	if (!text)
		return false;
	if (stat(text, &status) < 0) {
		report(context, node, where, "%s: %s", text, strerror(errno));
		return false;
	}
	if (directory && !S_ISDIR(status.st_mode)) {
		report(context, node, where, "%s is not a directory", text);
		return false;
	}
	*out = xstrdup(text);
	return true;
}

/* A rootfs: a directory, and not the host's / itself (which pivot_root
 * cannot enter, and which a task without rootfs has anyway). */
static bool parse_rootfs(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, char **out)
{
	struct stat status, host_root;

	if (!parse_host_path(context, node, where, true, out))
		return false;
	if (stat(*out, &status) == 0 && stat("/", &host_root) == 0 &&
	    status.st_dev == host_root.st_dev && status.st_ino == host_root.st_ino) {
		report(context, node, where, "%s is the host's / already; leave rootfs out", *out);
		free(*out);
		*out = NULL;
		return false;
	}
	return true;
}

/* A file system type as fsopen(2) names them: "tmpfs", "proc", "mqueue". */
static bool parse_type(struct load_context *context, const yaml_node_t *node,
		       const struct where *where, char **out)
{
	const char *text = expect_string(context, node, where);
	size_t length;

	if (!text)
		return false;
	length = node->data.scalar.length;
	if (length == 0 || strspn(text, "abcdefghijklmnopqrstuvwxyz0123456789_.-") != length) {
		report(context, node, where,
		       "must be a file system type such as tmpfs (or bind), not %s",
		       quote(text, length).text);
		return false;
	}
	*out = strcmp(text, "bind") == 0 ? NULL : xstrdup(text);
	return true;
}

/* fsconfig(2) keys, each "key" or "key=value". */
static bool parse_options(struct load_context *context, const yaml_node_t *node,
			  const struct where *where, char ***out)
{
	size_t count;
	bool valid = true;

	if (!expect_list(context, node, where, "a list of options such as [size=64m, mode=1777]"))
		return false;
	count = list_length(node);
	*out = xcalloc(count + 1, sizeof(**out));
	for (size_t i = 0, kept = 0; i < count; i++) {
		char field[96];
		struct where item_where;
		const yaml_node_t *item =
		    list_item(context, node, i, where, field, sizeof(field), &item_where);
		const char *text = item ? expect_string(context, item, &item_where) : NULL;

		if (!text) {
			valid = false;
			continue;
		}
		if (text[0] == '\0' || text[0] == '=' || strchr(text, ',')) {
			report(context, item, &item_where,
			       "must be one option, KEY or KEY=VALUE, not %s",
			       quote(text, item->data.scalar.length).text);
			valid = false;
			continue;
		}
		(*out)[kept++] = xstrdup(text);
	}
	return valid;
}

/* One item of `mounts`; false (reported) when it cannot be used. */
static bool parse_mount(struct load_context *context, const yaml_node_t *node,
			const struct where *where, struct mount_config *out)
{
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[96];
	struct where field_where;
	bool valid = true;

	memset(out, 0, sizeof(*out));
	if (!expect_map(context, node, where,
			"a map such as {source: /srv/data, target: /data} or {type: tmpfs, "
			"target: /tmp}"))
		return false;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, mount_keys);

	if ((field = map_lookup(&fields, "type"))) {
		field_where = where_field(where, "type", buffer, sizeof(buffer));
		valid &= parse_type(context, field, &field_where, &out->type);
	}
	bool bind = valid && !out->type;
	if ((field = map_lookup(&fields, "target"))) {
		field_where = where_field(where, "target", buffer, sizeof(buffer));
		valid &= parse_target(context, field, &field_where, &out->target);
	} else {
		/* A misspelt key was said already; either way there is no target. */
		if (!map_has_key_or_typo(&fields, mount_keys, "target"))
			report(context, node, where, "needs a target, the path in the task");
		valid = false;
	}
	if ((field = map_lookup(&fields, "source"))) {
		field_where = where_field(where, "source", buffer, sizeof(buffer));
		if (bind)
			valid &= parse_host_path(context, field, &field_where, false, &out->source);
		else if (expect_string(context, field, &field_where))
			out->source = xstrdup((const char *)field->data.scalar.value);
		else
			valid = false;
	} else if (bind) {
		if (!map_has_key_or_typo(&fields, mount_keys, "source"))
			report(context, node, where,
			       "a bind mount needs a source (or a type such as tmpfs)");
		valid = false;
	}
	if ((field = map_lookup(&fields, "readonly"))) {
		field_where = where_field(where, "readonly", buffer, sizeof(buffer));
		valid &= expect_bool(context, field, &field_where, &out->readonly);
	}
	if ((field = map_lookup(&fields, "propagation"))) {
		field_where = where_field(where, "propagation", buffer, sizeof(buffer));
		int index = expect_keyword(context, field, &field_where, "propagation",
					   propagation_names, PROPAGATION_COUNT);
		if (index >= 0)
			out->propagation = propagation_flags[index];
		valid &= index >= 0;
		out->bidirectional = index == BIDIRECTIONAL_INDEX;
		struct stat status;
		if (out->bidirectional && !bind) {
			report(context, field, &field_where,
			       "bidirectional is for a bind mount: a new file system has no host "
			       "side to share mounts with");
			valid = false;
		} else if (out->bidirectional && out->source && stat(out->source, &status) == 0 &&
			   !S_ISDIR(status.st_mode)) {
			report(context, field, &field_where,
			       "bidirectional needs a directory as source, where the task's mounts "
			       "are made; %s is not one",
			       out->source);
			valid = false;
		}
	}
	if ((field = map_lookup(&fields, "options"))) {
		field_where = where_field(where, "options", buffer, sizeof(buffer));
		if (bind) {
			report(context, field, &field_where,
			       "a bind mount takes no options; use readonly and propagation");
			valid = false;
		} else {
			valid &= parse_options(context, field, &field_where, &out->options);
		}
	}
	map_entries_free(&fields);
	return valid;
}

static void parse_mounts(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, struct root_fields *out)
{
	size_t count;

	if (!expect_list(context, node, where, "a list of mounts"))
		return;
	count = list_length(node);
	out->mounts = xcalloc(count ? count : 1, sizeof(*out->mounts));
	yaml_list_each(walk, context, node, where)
	{
		struct mount_config *mount = &out->mounts[out->mount_count];

		if (!walk.item)
			continue;
		if (!parse_mount(context, walk.item, &walk.where, mount)) {
			mount_config_clear(mount);
			continue;
		}
		if (mount->bidirectional && !out->bidirectional_node) {
			out->bidirectional_node = walk.item;
			out->bidirectional_index = walk.index;
		}
		out->mount_count++;
	}
}

void root_fields_parse(struct load_context *context, const struct map_entries *entries,
		       const struct where *where, struct root_fields *out)
{
	const yaml_node_t *field;
	char buffer[64];
	struct where field_where;

	if ((field = map_lookup(entries, "rootfs"))) {
		field_where = where_field(where, "rootfs", buffer, sizeof(buffer));
		out->rootfs_node = field;
		out->has_rootfs = parse_rootfs(context, field, &field_where, &out->rootfs);
	}
	if ((field = map_lookup(entries, "readonly_rootfs"))) {
		field_where = where_field(where, "readonly_rootfs", buffer, sizeof(buffer));
		out->readonly_rootfs_node = field;
		out->has_readonly_rootfs =
		    expect_bool(context, field, &field_where, &out->readonly_rootfs);
	}
	if ((field = map_lookup(entries, "mounts"))) {
		field_where = where_field(where, "mounts", buffer, sizeof(buffer));
		out->mounts_node = field;
		parse_mounts(context, field, &field_where, out);
	}
}

void root_fields_check(struct load_context *context, const char *owner,
		       const struct root_fields *fields, const char *set_in, unsigned namespaces)
{
	const struct {
		const yaml_node_t *node;
		const char *field;
	} written[] = {
	    {fields->rootfs_node, "isolation.rootfs"},
	    {fields->readonly_rootfs_node, "isolation.readonly_rootfs"},
	    {fields->mounts_node, "isolation.mounts"},
	};

	if (fields->bidirectional_node && (namespaces & ISOLATION_NS_USER)) {
		char field[64];
		snprintf(field, sizeof(field), "isolation.mounts[%zu].propagation",
			 fields->bidirectional_index);
		report(context, fields->bidirectional_node, &(struct where){owner, field},
		       "bidirectional cannot work in a user namespace%s: the kernel makes the "
		       "mounts a less privileged namespace receives slaves, so the task's mounts "
		       "would never reach the host; drop user from isolation.namespaces",
		       set_in);
	}
	if (namespaces & ISOLATION_NS_MOUNT)
		return;
	for (size_t i = 0; i < sizeof(written) / sizeof(written[0]); i++) {
		struct where where = {.owner = owner, .field = written[i].field};
		if (written[i].node)
			report(context, written[i].node, &where,
			       "needs the mount namespace%s; add mount to isolation.namespaces",
			       set_in);
	}
}

void root_fields_merge(struct isolation_config *merged, const struct root_fields *group,
		       const struct root_fields *task)
{
	const struct root_fields *rootfs_from = task->has_rootfs    ? task
						: group->has_rootfs ? group
								    : NULL;
	size_t count = group->mount_count + task->mount_count;

	merged->rootfs = rootfs_from ? xstrdup(rootfs_from->rootfs) : NULL;
	merged->readonly_rootfs = task->has_readonly_rootfs    ? task->readonly_rootfs
				  : group->has_readonly_rootfs ? group->readonly_rootfs
							       : false;
	merged->mounts = NULL;
	merged->mount_count = 0;
	if (!count)
		return;
	/* The group's first: a task adds to what its group mounts, and may
	 * mount over it (a later mount covers an earlier one). */
	merged->mounts = xcalloc(count, sizeof(*merged->mounts));
	for (size_t i = 0; i < group->mount_count; i++)
		mount_config_copy(&merged->mounts[merged->mount_count++], &group->mounts[i]);
	for (size_t i = 0; i < task->mount_count; i++)
		mount_config_copy(&merged->mounts[merged->mount_count++], &task->mounts[i]);
}

size_t mounts_bidirectional_count(const struct isolation_config *isolation)
{
	size_t count = 0;
	for (size_t i = 0; i < isolation->mount_count; i++)
		count += isolation->mounts[i].bidirectional;
	return count;
}

void root_fields_free(struct root_fields *fields)
{
	free(fields->rootfs);
	mount_configs_free(fields->mounts, fields->mount_count);
	*fields = (struct root_fields){0};
}
