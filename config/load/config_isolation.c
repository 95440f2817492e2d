/* A task's isolation: the fields of an `isolation` map, the checks between
 * them, and the merge of group <- task, field by field. Capabilities,
 * seccomp, rlimits and devices have files of their own
 * (config_capabilities.c, config_seccomp.c, config_rlimits.c,
 * config_devices.c). What the fields do is the work of
 * isolation/. */
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "config/load/config_network_parse.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const isolation_keys[] = {
    "namespaces",        "hostname", "init",  "capabilities", "seccomp",
    "no_new_privileges", "rlimits",  "umask", "devices",      "rootfs",
    "readonly_rootfs",   "mounts",   "user",  "network",      NULL,
};

/* In the order of the ISOLATION_NS_* bits. */
static const char *const namespace_names[] = {"pid", "mount",  "uts", "ipc",
					      "net", "cgroup", "user"};
#define NAMESPACE_COUNT (sizeof(namespace_names) / sizeof(namespace_names[0]))

/* What people coming from OCI runtimes and util-linux write instead. */
static const struct {
	const char *written, *meant;
} namespace_aliases[] = {{"network", "net"}, {"mnt", "mount"}};

/* sethostname(2) takes at most HOST_NAME_MAX (64) bytes. */
#define HOSTNAME_MAX_LENGTH 64

/* One namespace name into its bit; 0 after reporting. */
static unsigned namespace_bit(struct load_context *context, const yaml_node_t *node,
			      const struct where *where)
{
	const char *text = expect_string(context, node, where);
	size_t length;

	if (!text)
		return 0;
	length = node->data.scalar.length;
	for (size_t i = 0; i < NAMESPACE_COUNT; i++) {
		if (strcmp(text, namespace_names[i]) == 0)
			return 1u << i;
	}
	for (size_t i = 0; i < sizeof(namespace_aliases) / sizeof(namespace_aliases[0]); i++) {
		if (strcmp(text, namespace_aliases[i].written) == 0) {
			report(context, node, where, "unknown namespace %s; did you mean \"%s\"?",
			       quote(text, length).text, namespace_aliases[i].meant);
			return 0;
		}
	}
	expect_keyword(context, node, where, "namespace", namespace_names, NAMESPACE_COUNT);
	return 0;
}

static bool parse_namespaces(struct load_context *context, const yaml_node_t *node,
			     const struct where *where, unsigned *out,
			     const yaml_node_t **user_item)
{
	bool valid = true;

	*out = 0;
	if (!expect_list(context, node, where, "a list of namespaces such as [pid, mount]"))
		return false;
	yaml_list_each(walk, context, node, where)
	{
		unsigned bit;

		if (!walk.item)
			continue;
		bit = namespace_bit(context, walk.item, &walk.where);
		if (bit && (*out & bit)) {
			report(context, walk.item, &walk.where, "duplicate namespace %s",
			       quote((const char *)walk.item->data.scalar.value,
				     walk.item->data.scalar.length)
				   .text);
			bit = 0;
		}
		if (!bit)
			valid = false;
		if (bit == ISOLATION_NS_USER)
			*user_item = walk.item;
		*out |= bit;
	}
	return valid;
}

static bool is_alphanumeric(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool parse_hostname(struct load_context *context, const yaml_node_t *node,
			   const struct where *where, char **out)
{
	const char *text = expect_string(context, node, where);
	size_t length;

	if (!text)
		return false;
	length = node->data.scalar.length;
	/* The alphabet of RFC 1123 host names, which every resolver and
	 * shell prompt shows unchanged. */
	if (length == 0 || length > HOSTNAME_MAX_LENGTH ||
	    strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") !=
		length ||
	    !is_alphanumeric(text[0]) || !is_alphanumeric(text[length - 1])) {
		report(context, node, where,
		       "must be 1 to %d letters, digits, '-' and '.', starting and ending with a "
		       "letter or digit, not %s",
		       HOSTNAME_MAX_LENGTH, quote(text, length).text);
		return false;
	}
	*out = xstrdup(text);
	return true;
}

/* The umask is read as octal digits whatever the quoting: libyaml hands
 * over the text as written, so `0027` and `"0027"` are the same. A leading
 * 0 (or 0o) is required, so that nobody writes 27 or 23 and gets a
 * different mask than they meant. */
static bool parse_umask(struct load_context *context, const yaml_node_t *node,
			const struct where *where, int *out)
{
	const char *text, *digits;
	size_t length, digit_count;
	long value = -1;

	if (node->type != YAML_SCALAR_NODE || node_is_null(node)) {
		report(context, node, where, "must be an octal mask such as \"0027\", not %s",
		       node_kind(node));
		return false;
	}
	text = expect_string(context, node, where);
	if (!text)
		return false;
	length = node->data.scalar.length;
	digits = strncmp(text, "0o", 2) == 0 ? text + 2 : text;
	digit_count = length - (size_t)(digits - text);
	if (text[0] == '0' && digit_count >= 1 && digit_count <= 4 &&
	    strspn(digits, "01234567") == digit_count)
		value = strtol(digits, NULL, 8);
	if (value < 0 || value > 0777) {
		report(context, node, where,
		       "must be an octal mask from 0 to 0777 with its leading 0, such as \"0027\", "
		       "not %s",
		       quote(text, length).text);
		return false;
	}
	*out = (int)value;
	return true;
}

void isolation_fields_parse(struct load_context *context, const yaml_node_t *node,
			    const struct where *where, struct isolation_fields *out)
{
	struct isolation_config *values = &out->values;
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[64];
	struct where field_where;

	out->present = true;
	if (!expect_map(context, node, where, "a map of isolation settings"))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, isolation_keys);

	if ((field = map_lookup(&fields, "namespaces"))) {
		field_where = where_field(where, "namespaces", buffer, sizeof(buffer));
		out->namespaces_node = field;
		out->has_namespaces = parse_namespaces(
		    context, field, &field_where, &values->namespaces, &out->user_namespace_node);
	}
	if ((field = map_lookup(&fields, "hostname"))) {
		field_where = where_field(where, "hostname", buffer, sizeof(buffer));
		out->hostname_node = field;
		out->has_hostname = parse_hostname(context, field, &field_where, &values->hostname);
	}
	if ((field = map_lookup(&fields, "init"))) {
		field_where = where_field(where, "init", buffer, sizeof(buffer));
		out->init_node = field;
		out->has_init = expect_bool(context, field, &field_where, &values->init);
	}
	if ((field = map_lookup(&fields, "capabilities"))) {
		field_where = where_field(where, "capabilities", buffer, sizeof(buffer));
		out->has_capabilities =
		    capabilities_parse(context, field, &field_where, &values->capabilities);
	}
	if ((field = map_lookup(&fields, "seccomp"))) {
		field_where = where_field(where, "seccomp", buffer, sizeof(buffer));
		out->has_seccomp = seccomp_parse(context, field, &field_where, &values->seccomp);
	}
	if ((field = map_lookup(&fields, "no_new_privileges"))) {
		field_where = where_field(where, "no_new_privileges", buffer, sizeof(buffer));
		out->no_new_privileges_node = field;
		out->has_no_new_privileges =
		    expect_bool(context, field, &field_where, &values->no_new_privileges);
	}
	if ((field = map_lookup(&fields, "rlimits"))) {
		field_where = where_field(where, "rlimits", buffer, sizeof(buffer));
		rlimits_parse(context, field, &field_where, &values->rlimits,
			      &values->rlimit_count);
	}
	if ((field = map_lookup(&fields, "umask"))) {
		field_where = where_field(where, "umask", buffer, sizeof(buffer));
		out->has_umask = parse_umask(context, field, &field_where, &values->umask);
	}
	root_fields_parse(context, &fields, where, &out->root);
	if ((field = map_lookup(&fields, "user"))) {
		field_where = where_field(where, "user", buffer, sizeof(buffer));
		out->user_node = field;
		out->has_user = user_namespace_parse(context, field, &field_where, values);
	}
	if ((field = map_lookup(&fields, "devices"))) {
		field_where = where_field(where, "devices", buffer, sizeof(buffer));
		devices_parse(context, field, &field_where, &values->devices,
			      &values->device_count);
	}
	if ((field = map_lookup(&fields, "network"))) {
		field_where = where_field(where, "network", buffer, sizeof(buffer));
		out->has_network = isolation_network_parse(context, field, &field_where,
							   &values->network, &out->network_node);
	}
	map_entries_free(&fields);
}

/* The checks between fields. `from` is the fields that gave the value,
 * `set_in` names the group when it was the group's, `namespaces` is the
 * set the task gets. A value from the group is shown where it was written,
 * named for the task it does not fit. */
static void check_hostname(struct load_context *context, const char *owner,
			   const struct isolation_fields *from, const char *set_in,
			   unsigned namespaces)
{
	struct where where = {.owner = owner, .field = "isolation.hostname"};

	if (!from || (namespaces & ISOLATION_NS_UTS))
		return;
	report(context, from->hostname_node, &where,
	       "\"%s\"%s needs the uts namespace; add uts to isolation.namespaces",
	       from->values.hostname, set_in);
}

static void check_init(struct load_context *context, const char *owner,
		       const struct isolation_fields *from, const char *set_in, unsigned namespaces)
{
	struct where where = {.owner = owner, .field = "isolation.init"};

	if (!from || from->values.init || (namespaces & ISOLATION_NS_PID))
		return;
	report(context, from->init_node, &where,
	       "%s%s%sinit only matters with the pid namespace; add pid to isolation.namespaces "
	       "or leave init out",
	       set_in[0] ? "false" : "", set_in, set_in[0] ? ": " : "");
}

/* The user namespace and its maps go together: corral does not pick host
 * ids for a task (which range is free is the host's business), and maps
 * without the namespace would do nothing. `user_from` wrote `user` (valid
 * or not), `namespaces_from` the namespaces. */
static void check_user(struct load_context *context, const char *owner,
		       const struct isolation_fields *user_from,
		       const struct isolation_fields *namespaces_from, const char *set_in,
		       unsigned namespaces)
{
	if (user_from && !(namespaces & ISOLATION_NS_USER)) {
		struct where where = {.owner = owner, .field = "isolation.user"};

		report(context, user_from->user_node, &where,
		       "the maps%s need the user namespace; add user to isolation.namespaces",
		       set_in);
	} else if (!user_from && (namespaces & ISOLATION_NS_USER) && namespaces_from) {
		struct where where = {.owner = owner, .field = "isolation.namespaces"};

		report(context, namespaces_from->user_namespace_node, &where,
		       "\"user\"%s needs isolation.user, the uid and gid maps, such as user: "
		       "{uid_map: \"0 100000 65536\", gid_map: \"0 100000 65536\"}",
		       set_in);
	}
}

void isolation_fields_check_group(struct load_context *context,
				  const struct isolation_fields *group, const struct where *where)
{
	/* Without namespaces of the group's own, each task may still add
	 * them: only the merge can tell. */
	if (!group->has_namespaces)
		return;
	check_hostname(context, where->owner, group->has_hostname ? group : NULL, "",
		       group->values.namespaces);
	check_init(context, where->owner, group->has_init ? group : NULL, "",
		   group->values.namespaces);
	root_fields_check(context, where->owner, &group->root, "", group->values.namespaces);
	/* Only maps without the namespace: a group that gives the namespace
	 * may leave each task its own maps. */
	check_user(context, where->owner, group->user_node ? group : NULL, NULL, "",
		   group->values.namespaces);
}

/* Which of task and group set a field: the task when it did. */
#define SOURCE(task, group, has) ((task)->has ? (task) : (group)->has ? (group) : NULL)

static void check_merged(struct load_context *context, const struct isolation_fields *group,
			 const char *group_owner, const struct isolation_fields *task,
			 const struct where *task_where, unsigned namespaces)
{
	const struct isolation_fields *namespaces_from = SOURCE(task, group, has_namespaces);
	const struct isolation_fields *hostname_from = SOURCE(task, group, has_hostname);
	const struct isolation_fields *init_from = SOURCE(task, group, has_init);
	const struct isolation_fields *user_from = task->user_node    ? task
						   : group->user_node ? group
								      : NULL;
	char set_in[sizeof(struct quoted) + 16];

	/* Namespaces written wrongly were reported; what the task would have
	 * had instead proves nothing about hostname and init. */
	if (task->namespaces_node ? !task->has_namespaces
				  : group->namespaces_node && !group->has_namespaces)
		return;
	snprintf(set_in, sizeof(set_in), " (set in %s)", group_owner);
	/* Both from the group: isolation_fields_check_group said it once. */
	if (namespaces_from != group || hostname_from != group)
		check_hostname(context, task_where->owner, hostname_from,
			       hostname_from == group ? set_in : "", namespaces);
	if (namespaces_from != group || init_from != group)
		check_init(context, task_where->owner, init_from, init_from == group ? set_in : "",
			   namespaces);
	/* The task's own root fields, and the group's unless the group's
	 * namespaces (already checked once) are the ones that apply. */
	root_fields_check(context, task_where->owner, &task->root, "", namespaces);
	if (namespaces_from != group)
		root_fields_check(context, task_where->owner, &group->root, set_in, namespaces);
	if (!user_from || namespaces_from != group || user_from != group)
		check_user(context, task_where->owner, user_from, namespaces_from,
			   (user_from ? user_from : namespaces_from) == group ? set_in : "",
			   namespaces);
}

/* The kernel loads a seccomp filter only with no_new_privs or CAP_SYS_ADMIN:
 * `no_new_privileges: false` needs sys_admin kept, or no filter. Reported
 * where false was written. */
static void check_seccomp_privileges(struct load_context *context,
				     const struct isolation_fields *group, const char *group_owner,
				     const struct isolation_fields *task,
				     const struct where *task_where,
				     const struct isolation_config *merged)
{
	const struct isolation_fields *from = SOURCE(task, group, has_no_new_privileges);
	if (!from || merged->no_new_privileges ||
	    merged->seccomp.kind == SECCOMP_PROFILE_UNCONFINED ||
	    (merged->capabilities & (UINT64_C(1) << CAP_SYS_ADMIN)))
		return;
	char set_in[sizeof(struct quoted) + 16] = "";
	if (from == group)
		snprintf(set_in, sizeof(set_in), " (set in %s)", group_owner);
	report(context, from->no_new_privileges_node,
	       &(struct where){task_where->owner, "isolation.no_new_privileges"},
	       "false%s: the kernel loads the seccomp filter only with no_new_privileges or "
	       "sys_admin among the capabilities; keep it true, add sys_admin, or take "
	       "seccomp: unconfined",
	       set_in);
}

/* A resource the task limits replaces the group's limit of it. The
 * table is merged's own, made at the first limit. */
static void merge_rlimits(struct isolation_config *merged, const struct isolation_config *fields)
{
	if (fields->rlimit_count && !merged->rlimits)
		merged->rlimits = xcalloc(ISOLATION_RLIMITS_MAX, sizeof(*merged->rlimits));
	for (size_t i = 0; i < fields->rlimit_count; i++) {
		size_t slot = 0;

		while (slot < merged->rlimit_count &&
		       merged->rlimits[slot].resource != fields->rlimits[i].resource)
			slot++;
		merged->rlimits[slot] = fields->rlimits[i];
		if (slot == merged->rlimit_count)
			merged->rlimit_count++;
	}
}

/* The fields set in `fields` replace those of `merged`. Strings are only
 * pointed to: the caller copies the ones that win. */
static void apply_fields(struct isolation_config *merged, const struct isolation_fields *fields)
{
	const struct isolation_config *values = &fields->values;

	if (fields->has_namespaces)
		merged->namespaces = values->namespaces;
	if (fields->has_hostname)
		merged->hostname = values->hostname;
	if (fields->has_init)
		merged->init = values->init;
	if (fields->has_capabilities)
		merged->capabilities = values->capabilities;
	if (fields->has_seccomp)
		merged->seccomp = values->seccomp;
	if (fields->has_no_new_privileges)
		merged->no_new_privileges = values->no_new_privileges;
	merge_rlimits(merged, values);
	if (fields->has_umask)
		merged->umask = values->umask;
	/* The maps go together: a task's replace both of the group's. */
	if (fields->has_user) {
		merged->uid_map = values->uid_map;
		merged->uid_map_count = values->uid_map_count;
		merged->gid_map = values->gid_map;
		merged->gid_map_count = values->gid_map_count;
	}
}

static struct id_map_range *copy_ranges(const struct id_map_range *ranges, size_t count)
{
	struct id_map_range *copy = count ? xcalloc(count, sizeof(*copy)) : NULL;

	if (count)
		memcpy(copy, ranges, count * sizeof(*copy));
	return copy;
}

/* Why a bidirectional bind cannot do its work in a task isolated as
 * `merged` (Kubernetes allows Bidirectional in privileged containers only),
 * or NULL. The user namespace and the mount namespace are checked with the
 * other root fields (root_fields_check). */
static const char *bidirectional_obstacle(const struct isolation_config *merged)
{
	if (!(merged->capabilities & (UINT64_C(1) << CAP_SYS_ADMIN)))
		return "shares the mounts the task makes, but without the sys_admin capability "
		       "it can make none; add sys_admin to isolation.capabilities.add";
	if (merged->seccomp.kind == SECCOMP_PROFILE_DEFAULT)
		return "shares the mounts the task makes, but the default seccomp profile refuses "
		       "mount and the new mount API; take seccomp: unconfined or a profile that "
		       "allows them";
	return NULL;
}

static void check_bidirectional(struct load_context *context, const struct isolation_fields *group,
				const struct isolation_fields *task, const struct where *task_where,
				const struct isolation_config *merged)
{
	const struct root_fields *root = task->root.bidirectional_node ? &task->root : &group->root;
	const char *obstacle = root->bidirectional_node && (merged->namespaces & ISOLATION_NS_MOUNT)
				   ? bidirectional_obstacle(merged)
				   : NULL;
	if (!obstacle)
		return;
	char field[64];
	snprintf(field, sizeof(field), "isolation.mounts[%zu].propagation",
		 root->bidirectional_index);
	report(context, root->bidirectional_node, &(struct where){task_where->owner, field},
	       "bidirectional %s", obstacle);
}

struct isolation_config isolation_merge(struct load_context *context,
					const struct isolation_fields *group,
					const char *group_owner,
					const struct isolation_fields *task,
					const struct where *task_where)
{
	struct isolation_config merged = {.umask = -1};

	if (!group->present && !task->present)
		return merged;
	merged = (struct isolation_config){
	    .enabled = true,
	    .init = true,
	    .capabilities = capabilities_default(),
	    .seccomp = {.kind = SECCOMP_PROFILE_DEFAULT},
	    .no_new_privileges = true,
	    .umask = -1,
	};
	apply_fields(&merged, group);
	apply_fields(&merged, task);
	merged.hostname = merged.hostname ? xstrdup(merged.hostname) : NULL;
	merged.seccomp.allow = string_vector_copy(merged.seccomp.allow);
	merged.seccomp.deny = string_vector_copy(merged.seccomp.deny);
	root_fields_merge(&merged, &group->root, &task->root);
	check_bidirectional(context, group, task, task_where, &merged);
	if (mounts_bidirectional_count(&merged) > MOUNT_BIDIRECTIONAL_MAX)
		report(context,
		       task->root.mounts_node ? task->root.mounts_node : group->root.mounts_node,
		       &(struct where){task_where->owner, "isolation.mounts"},
		       "has more than %d bidirectional mounts", MOUNT_BIDIRECTIONAL_MAX);
	merged.uid_map = copy_ranges(merged.uid_map, merged.uid_map_count);
	merged.gid_map = copy_ranges(merged.gid_map, merged.gid_map_count);
	devices_merge(&merged, &group->values, &task->values);
	check_merged(context, group, group_owner, task, task_where, merged.namespaces);
	check_seccomp_privileges(context, group, group_owner, task, task_where, &merged);
	return merged;
}

void isolation_fields_free(struct isolation_fields *fields)
{
	free(fields->values.hostname);
	free(fields->values.rlimits);
	string_vector_free(fields->values.seccomp.allow);
	string_vector_free(fields->values.seccomp.deny);
	root_fields_free(&fields->root);
	free(fields->values.uid_map);
	free(fields->values.gid_map);
	device_configs_free(fields->values.devices, fields->values.device_count);
	*fields = (struct isolation_fields){0};
}
