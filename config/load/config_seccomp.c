/* `isolation.seccomp`: which profile, and for a custom one its default
 * action and its lists of syscall names. Names are checked against
 * the syscall table the caller hands in (libseccomp's, a lookup, no
 * syscall: config/text/syscall_names.h), so a typo is a config error with its
 * location rather than a task that fails to start. The default profile
 * itself is in isolation/seccomp_profile.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/text/syscall_names.h"
#include "config/yaml/diagnostics.h"

static const char *const custom_keys[] = {"default_action", "allow", "deny", NULL};
/* In the order of enum seccomp_profile_kind, but for the custom map. */
static const char *const profile_names[] = {"default", "unconfined"};
/* In the order of enum seccomp_action_kind. */
static const char *const action_names[] = {"allow", "errno", "kill", "log"};

/* Above the syscall numbers of x86_64 (near 460 today), aarch64 and the
 * other common architectures; only used to list names for suggestions
 * (MIPS numbers start at 4000: there, no suggestion). */
#define SYSCALL_NUMBER_BOUND 1024

/* The table names are checked against (config_use_syscall_names). */
static const struct syscall_table *syscall_table;

void config_use_syscall_names(const struct syscall_table *table)
{
	syscall_table = table;
}

/* The native architecture's syscall names, gathered the first time a list
 * has an unknown name, and only once per list. */
struct syscall_names {
	char **names;
	size_t count;
	bool gathered;
};

static void syscall_names_gather(struct syscall_names *known)
{
	known->gathered = true;
	known->names = xcalloc(SYSCALL_NUMBER_BOUND, sizeof(*known->names));
	for (int number = 0; number < SYSCALL_NUMBER_BOUND; number++) {
		char *name = syscall_table->name_of(number);

		if (name)
			known->names[known->count++] = name;
	}
}

static void syscall_names_free(struct syscall_names *known)
{
	for (size_t i = 0; i < known->count; i++)
		free(known->names[i]);
	free(known->names);
}

static void report_unknown_syscall(struct load_context *context, const yaml_node_t *node,
				   const struct where *where, const char *name,
				   struct syscall_names *known)
{
	size_t length = node->data.scalar.length;
	const char *suggestion;

	if (!known->gathered)
		syscall_names_gather(known);
	suggestion = suggest_nearest(name, length, (const char *const *)known->names, known->count);
	/* The suggestion ignores case, libseccomp does not: "MOUNT" is told
	 * to write "mount". */
	if (suggestion)
		report(context, node, where, "unknown syscall %s; did you mean \"%s\"?",
		       quote(name, length).text, suggestion);
	else
		report(context, node, where, "unknown syscall %s", quote(name, length).text);
}

/* The child execs the task, or exits when that fails, under the filter
 * already: isolation/seccomp_profile.c always allows these. */
static bool is_needed_to_start(const char *name)
{
	static const char *const needed[] = {"execve", "execveat", "exit", "exit_group"};

	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		if (strcmp(name, needed[i]) == 0)
			return true;
	}
	return false;
}

/* A list of syscall names into a NULL-terminated vector of the valid ones.
 * False when any is wrong. */
static bool syscall_list_parse(struct load_context *context, const yaml_node_t *node,
			       const struct where *where, bool denying, char ***out)
{
	struct syscall_names known = {0};
	size_t count, stored = 0;
	bool valid = true;

	if (!expect_list(context, node, where, "a list of syscall names such as [mount, reboot]"))
		return false;
	char reason[256];
	if (!syscall_table)
		snprintf(reason, sizeof(reason), "no syscall table was given");
	if (!syscall_table || syscall_table->prepare(reason, sizeof(reason)) < 0) {
		report(context, node, where, "cannot check syscall names: %s", reason);
		return false;
	}
	count = list_length(node);
	*out = xcalloc(count + 1, sizeof(**out));
	yaml_list_each(walk, context, node, where)
	{
		const char *name;

		if (!walk.item)
			continue;
		name = expect_string(context, walk.item, &walk.where);
		if (!name) {
			valid = false;
		} else if (!syscall_table->is_known(name)) {
			report_unknown_syscall(context, walk.item, &walk.where, name, &known);
			valid = false;
		} else if (denying && is_needed_to_start(name)) {
			report(context, walk.item, &walk.where,
			       "%s cannot be denied: execve, execveat, exit and exit_group are how "
			       "a task starts (or reports that it could not)",
			       quote(name, walk.item->data.scalar.length).text);
			valid = false;
		} else {
			(*out)[stored++] = xstrdup(name);
		}
	}
	syscall_names_free(&known);
	return valid;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A syscall both allowed and denied has no meaning to guess: reported at
 * each such item of `deny_node`. Sorting keeps this O(n log n) for a
 * fuzzer's long lists. */
static bool check_no_overlap(struct load_context *context, const yaml_node_t *deny_node,
			     const struct where *where, char **allow)
{
	char deny_field[64], allow_field[64];
	size_t allow_count = 0;
	char **sorted;
	bool valid = true;

	snprintf(deny_field, sizeof(deny_field), "%s.deny", where->field);
	snprintf(allow_field, sizeof(allow_field), "%s.allow", where->field);
	while (allow[allow_count])
		allow_count++;
	sorted = xcalloc(allow_count + 1, sizeof(*sorted));
	memcpy(sorted, allow, allow_count * sizeof(*sorted));
	qsort(sorted, allow_count, sizeof(*sorted), compare_names);
	const struct where deny_where = {.owner = where->owner, .field = deny_field};
	for (size_t i = 0; i < list_length(deny_node); i++) {
		char field[80];
		struct where item_where;
		const yaml_node_t *node = list_item(context, deny_node, i, &deny_where, field,
						    sizeof(field), &item_where);
		const char *name;

		if (!node || node->type != YAML_SCALAR_NODE)
			continue;
		name = (const char *)node->data.scalar.value;
		if (!bsearch(&name, sorted, allow_count, sizeof(*sorted), compare_names))
			continue;
		report(context, node, &item_where, "%s is also in %s; keep one",
		       quote(name, node->data.scalar.length).text, allow_field);
		valid = false;
	}
	free(sorted);
	return valid;
}

static bool parse_custom(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, struct seccomp_config *out)
{
	struct map_entries fields;
	const yaml_node_t *field, *deny_node;
	char buffer[64];
	struct where field_where;
	bool valid = true;
	int action = -1;

	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, custom_keys);
	out->kind = SECCOMP_PROFILE_CUSTOM;
	if ((field = map_lookup(&fields, "default_action"))) {
		field_where = where_field(where, "default_action", buffer, sizeof(buffer));
		action = expect_keyword(context, field, &field_where, "action", action_names, 4);
		if (action >= 0)
			out->default_action = (enum seccomp_action_kind)action;
	} else if (!map_has_key_or_typo(&fields, custom_keys, "default_action")) {
		report(context, node, where,
		       "missing \"default_action\" (allow, errno, kill or log), the action for "
		       "syscalls not listed");
	}
	valid &= action >= 0;
	if ((field = map_lookup(&fields, "allow"))) {
		field_where = where_field(where, "allow", buffer, sizeof(buffer));
		valid &= syscall_list_parse(context, field, &field_where, false, &out->allow);
	}
	if ((deny_node = map_lookup(&fields, "deny"))) {
		field_where = where_field(where, "deny", buffer, sizeof(buffer));
		valid &= syscall_list_parse(context, deny_node, &field_where, true, &out->deny);
	}
	if (out->allow && out->deny)
		valid &= check_no_overlap(context, deny_node, where, out->allow);
	map_entries_free(&fields);
	return valid;
}

bool seccomp_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		   struct seccomp_config *out)
{
	int profile;

	*out = (struct seccomp_config){0};
	if (node->type == YAML_MAPPING_NODE)
		return parse_custom(context, node, where, out);
	if (node->type != YAML_SCALAR_NODE || node_is_null(node)) {
		report(context, node, where,
		       "must be default, unconfined or a map with \"default_action\", not %s",
		       node_kind(node));
		return false;
	}
	profile = expect_keyword(context, node, where, "seccomp profile", profile_names, 2);
	if (profile < 0)
		return false;
	out->kind = profile == 0 ? SECCOMP_PROFILE_DEFAULT : SECCOMP_PROFILE_UNCONFINED;
	return true;
}
