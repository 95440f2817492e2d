/* A task's `after:` (the tasks it waits for, each with a condition) and a
 * group's `order: sequential`, which writes the same edges from file order.
 *
 * Reading is in two steps: dependencies_parse() keeps the names as written,
 * while the groups are read; dependencies_resolve() runs once every group
 * exists, so a task may name one of a later group. It resolves the names,
 * fills in default conditions, and refuses what could never hold: unknown
 * names, a wait on a later stage of the same group, a cycle. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const condition_names[] = {
    [DEPENDS_STARTED] = "started",     [DEPENDS_READY] = "ready",   [DEPENDS_HEALTHY] = "healthy",
    [DEPENDS_COMPLETED] = "completed", [DEPENDS_EXITED] = "exited",
};
#define CONDITION_COUNT (sizeof(condition_names) / sizeof(condition_names[0]))

/* What task and group names are made of (names.h), and the slash between. */
#define NAME_CHARACTERS "abcdefghijklmnopqrstuvwxyz0123456789-_./"

static const char *const dependency_keys[] = {"condition", "restart", "timeout", "required", NULL};

static struct task_dependency *add_dependency(struct task_config *task, const char *name,
					      struct source_location location)
{
	task->after = xreallocarray(task->after, task->after_count + 1, sizeof(*task->after));
	struct task_dependency *dependency = &task->after[task->after_count++];
	*dependency = (struct task_dependency){
	    .name = xstrdup(name),
	    .condition_default = true,
	    .location = location,
	    .condition_location = location,
	};
	return dependency;
}

static void parse_condition(struct load_context *context, const yaml_node_t *node,
			    const struct where *where, struct task_dependency *dependency)
{
	int condition =
	    expect_keyword(context, node, where, "condition", condition_names, CONDITION_COUNT);
	if (condition < 0)
		return;
	dependency->condition = (enum dependency_condition)condition;
	dependency->condition_default = false;
	dependency->condition_location = node_location(node);
}

/* The value of one entry of the map form: nothing (the default), a
 * condition, or {condition, restart}. */
static void parse_entry_value(struct load_context *context, const yaml_node_t *node,
			      const struct where *where, struct task_dependency *dependency)
{
	if (node_is_null(node))
		return;
	if (node->type == YAML_SCALAR_NODE) {
		parse_condition(context, node, where, dependency);
		return;
	}
	if (!expect_map(context, node, where,
			"a condition (started, ready, healthy, completed, exited) or a map of "
			"\"condition\", \"restart\", \"timeout\" and \"required\""))
		return;
	struct map_entries fields;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, dependency_keys);
	const yaml_node_t *field;
	char buffer[192];
	if ((field = map_lookup(&fields, "condition"))) {
		struct where field_where = where_field(where, "condition", buffer, sizeof(buffer));
		parse_condition(context, field, &field_where, dependency);
	}
	if ((field = map_lookup(&fields, "restart"))) {
		struct where field_where = where_field(where, "restart", buffer, sizeof(buffer));
		expect_bool(context, field, &field_where, &dependency->restart);
	}
	if ((field = map_lookup(&fields, "timeout"))) {
		struct where field_where = where_field(where, "timeout", buffer, sizeof(buffer));
		uint64_t timeout_ms;
		/* A wait of no time would fail every start that must wait. */
		if (expect_duration(context, field, &field_where, &timeout_ms) && timeout_ms == 0)
			report(context, field, &field_where,
			       "must be longer than 0 (leave it out to wait for as long as it "
			       "takes)");
		else
			dependency->timeout_ms = timeout_ms;
	}
	if ((field = map_lookup(&fields, "required"))) {
		struct where field_where = where_field(where, "required", buffer, sizeof(buffer));
		bool required = true;
		if (expect_bool(context, field, &field_where, &required))
			dependency->optional = !required;
	}
	map_entries_free(&fields);
}

static bool is_written_twice(const struct task_config *task, const char *name)
{
	for (size_t i = 0; i < task->after_count; i++)
		if (strcmp(task->after[i].name, name) == 0)
			return true;
	return false;
}

/* One `NAME: VALUE` of the map form (or of a one-entry map in the list
 * form). */
static void parse_entry(struct load_context *context, const struct map_entry *entry,
			const struct where *where, struct task_config *task)
{
	char buffer[160];
	struct where entry_where = where_field(where, entry->key, buffer, sizeof(buffer));
	if (entry->key_length != strlen(entry->key) || !*entry->key) {
		report(context, entry->key_node, where, "%s is not a task name",
		       quote(entry->key, entry->key_length).text);
		return;
	}
	if (is_written_twice(task, entry->key)) {
		report(context, entry->key_node, where, "%s is named twice",
		       quote(entry->key, entry->key_length).text);
		return;
	}
	struct task_dependency *dependency =
	    add_dependency(task, entry->key, node_location(entry->key_node));
	parse_entry_value(context, entry->value, &entry_where, dependency);
}

static void parse_map(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct task_config *task)
{
	struct map_entries entries;
	map_collect(context, node, where, "task", &entries);
	for (size_t i = 0; i < entries.count; i++)
		parse_entry(context, &entries.items[i], where, task);
	map_entries_free(&entries);
}

/* [a, b] names with their default conditions; an item may also be a map
 * ({redis: ready}). */
static void parse_list(struct load_context *context, const yaml_node_t *node,
		       const struct where *where, struct task_config *task)
{
	yaml_list_each(walk, context, node, where)
	{
		if (!walk.item)
			continue;
		if (walk.item->type == YAML_MAPPING_NODE) {
			parse_map(context, walk.item, where, task);
			continue;
		}
		const char *name = expect_string(context, walk.item, &walk.where);
		if (!name)
			continue;
		if (!*name) {
			report(context, walk.item, &walk.where,
			       "must not be empty (write a task name)");
			continue;
		}
		if (is_written_twice(task, name)) {
			report(context, walk.item, where, "%s is named twice",
			       quote(name, walk.item->data.scalar.length).text);
			continue;
		}
		add_dependency(task, name, node_location(walk.item));
	}
}

void dependencies_parse(struct load_context *context, const yaml_node_t *node,
			const struct where *where, struct task_config *task)
{
	if (node->type == YAML_SEQUENCE_NODE)
		parse_list(context, node, where, task);
	else if (expect_map(context, node, where,
			    "a list of task names, or a map of task names to conditions"))
		parse_map(context, node, where, task);
}

/* ---- resolving, once every group is read ---- */

static void complain(struct load_context *context, struct source_location location,
		     const struct task_config *task, const struct task_dependency *dependency,
		     const char *format, ...) __attribute__((format(printf, 5, 6)));

static void complain(struct load_context *context, struct source_location location,
		     const struct task_config *task, const struct task_dependency *dependency,
		     const char *format, ...)
{
	/* The instances of one task share its `after:`: said once. */
	if (task->instance_of && task->instance > 0)
		return;
	char message[512];
	va_list args;
	va_start(args, format);
	vsnprintf(message, sizeof(message), format, args);
	va_end(args);
	if (dependency->implicit)
		diagnostics_add(context->diagnostics, location, "%s: order: sequential: %s",
				task->full_name, message);
	else if (strspn(dependency->name, NAME_CHARACTERS) == strlen(dependency->name))
		diagnostics_add(context->diagnostics, location, "%s: after.%s: %s", task->full_name,
				dependency->name, message);
	else
		diagnostics_add(context->diagnostics, location, "%s: after: %s: %s",
				task->full_name,
				quote(dependency->name, strlen(dependency->name)).text, message);
}

static long find_group(const struct config *config, const char *name, size_t length)
{
	for (size_t i = 0; i < config->group_count; i++)
		if (strlen(config->groups[i].name) == length &&
		    strncmp(config->groups[i].name, name, length) == 0)
			return (long)i;
	return -1;
}

static long find_task(const struct group_config *group, const char *name)
{
	for (size_t i = 0; i < group->task_count; i++)
		if (strcmp(group->tasks[i].name, name) == 0)
			return (long)i;
	return -1;
}

static void report_unknown_group(struct load_context *context, const struct config *config,
				 const struct task_config *task,
				 const struct task_dependency *dependency, const char *group,
				 size_t length)
{
	const char **names = xcalloc(config->group_count, sizeof(*names));
	for (size_t i = 0; i < config->group_count; i++)
		names[i] = config->groups[i].name;
	const char *nearest = suggest_nearest(group, length, names, config->group_count);
	if (nearest)
		complain(context, dependency->location, task, dependency,
			 "unknown group %s; did you mean \"%s\"?", quote(group, length).text,
			 nearest);
	else
		complain(context, dependency->location, task, dependency, "unknown group %s",
			 quote(group, length).text);
	free(names);
}

/* In the task's own group, the nearest task name; a name that is a group
 * gets told to name one of its tasks. */
static void report_unknown_task(struct load_context *context, const struct config *config,
				const struct task_config *task,
				const struct task_dependency *dependency,
				const struct group_config *group, const char *name, bool qualified)
{
	const char **names = xcalloc(group->task_count, sizeof(*names));
	for (size_t i = 0; i < group->task_count; i++)
		names[i] = group->tasks[i].name;
	const char *nearest = suggest_nearest(name, strlen(name), names, group->task_count);
	long as_group = qualified ? -1 : find_group(config, name, strlen(name));
	if (nearest)
		complain(context, dependency->location, task, dependency,
			 "group %s has no task %s; did you mean \"%s%s%s\"?", group->name,
			 quote(name, strlen(name)).text, qualified ? group->name : "",
			 qualified ? "/" : "", nearest);
	else if (as_group >= 0 && config->groups[as_group].task_count > 0)
		complain(context, dependency->location, task, dependency,
			 "%s is a group: name one of its tasks (%s/%s)",
			 quote(name, strlen(name)).text, name,
			 config->groups[as_group].tasks[0].name);
	else if (as_group >= 0) /* its tasks were wrong: reported there */
		complain(context, dependency->location, task, dependency,
			 "%s is a group: name one of its tasks", quote(name, strlen(name)).text);
	else
		complain(context, dependency->location, task, dependency, "group %s has no task %s",
			 group->name, quote(name, strlen(name)).text);
	free(names);
}

/* A dependency on what the active profiles left out (compose refuses it
 * too: "service X is required by Y but is disabled"): true after saying
 * so. `group_name` is the group the name is looked up in. */
static bool report_left_out(struct load_context *context, const struct task_config *task,
			    const struct task_dependency *dependency, const char *group_name,
			    size_t group_length, const char *task_name)
{
	char full[256];
	snprintf(full, sizeof(full), "%.*s/%s", (int)group_length, group_name, task_name);
	/* An instance, "worker@1": its task, "worker", is what was left out. */
	size_t task_length = strlen(full) - strlen(task_name) + strcspn(task_name, "@");
	const char *profiles = profiles_excluded(context, group_name, group_length);
	char whose[96] = "it is";
	if (profiles)
		snprintf(whose, sizeof(whose), "its group %.*s is", (int)group_length, group_name);
	else
		profiles = profiles_excluded(context, full, task_length);
	if (!profiles)
		return false;
	bool several = strchr(profiles, ',') != NULL;
	complain(context, dependency->location, task, dependency,
		 "%s is left out: %s only in profile%s [%s], %s active (activate one with "
		 "--profile or CORRAL_PROFILES, or write required: false)",
		 full, whose, several ? "s" : "", profiles,
		 several ? "none of them" : "which is not");
	return true;
}

static bool resolve_name(struct load_context *context, const struct config *config,
			 size_t own_group, const struct task_config *task,
			 struct task_dependency *dependency)
{
	const char *slash = strchr(dependency->name, '/');
	long group_index = (long)own_group;
	const char *task_name = dependency->name;
	if (slash) {
		group_index =
		    find_group(config, dependency->name, (size_t)(slash - dependency->name));
		if (group_index < 0 &&
		    report_left_out(context, task, dependency, dependency->name,
				    (size_t)(slash - dependency->name), slash + 1))
			return false;
		if (group_index < 0) {
			report_unknown_group(context, config, task, dependency, dependency->name,
					     (size_t)(slash - dependency->name));
			return false;
		}
		task_name = slash + 1;
	}
	const struct group_config *group = &config->groups[group_index];
	long task_index = find_task(group, task_name);
	if (task_index < 0 &&
	    report_left_out(context, task, dependency, group->name, strlen(group->name), task_name))
		return false;
	if (task_index < 0) {
		report_unknown_task(context, config, task, dependency, group, task_name,
				    slash != NULL);
		return false;
	}
	if (&group->tasks[task_index] == task) {
		complain(context, dependency->location, task, dependency,
			 "a task cannot wait for itself");
		return false;
	}
	dependency->group_index = (size_t)group_index;
	dependency->task_index = (size_t)task_index;
	return true;
}

static const char *stage_kind(enum lifecycle_stage stage)
{
	switch (stage) {
	case STAGE_PRESTART_EPHEMERAL:
	case STAGE_PRESTART_SIDECAR:
		return "prestart";
	case STAGE_MAIN:
		return "main";
	case STAGE_POSTSTART_EPHEMERAL:
	case STAGE_POSTSTART_SIDECAR:
		return "poststart";
	case STAGE_POSTSTOP:
		return "poststop";
	}
	return "";
}

/* Default conditions by the target's kind: a one-shot is waited for until
 * it completed, anything else until it is ready. */
static enum dependency_condition default_condition(const struct task_config *target)
{
	switch (target->stage) {
	case STAGE_PRESTART_EPHEMERAL:
	case STAGE_POSTSTART_EPHEMERAL:
		return DEPENDS_COMPLETED;
	case STAGE_MAIN:
	case STAGE_PRESTART_SIDECAR:
	case STAGE_POSTSTART_SIDECAR:
	case STAGE_POSTSTOP:
		break;
	}
	return DEPENDS_READY;
}

/* What the stage gates and the target's probes make impossible. */
static void check_edge(struct load_context *context, const struct task_config *task,
		       bool same_group, const struct task_dependency *dependency,
		       const struct task_config *target)
{
	struct source_location at = dependency->condition_location;
	const char *condition = dependency_condition_name(dependency->condition);
	if (same_group && target->stage == STAGE_POSTSTOP && task->stage != STAGE_POSTSTOP) {
		complain(context, dependency->location, task, dependency,
			 "a %s task cannot wait for a poststop task of its group: poststop tasks "
			 "start once every other task of the group is dead, so it would wait "
			 "forever",
			 stage_kind(task->stage));
		return;
	}
	if (same_group && lifecycle_stage_step(target->stage) > lifecycle_stage_step(task->stage)) {
		complain(context, dependency->location, task, dependency,
			 "a %s task cannot wait for a %s task of its group: %s tasks start only "
			 "after the %s stage, so it would wait forever",
			 stage_kind(task->stage), stage_kind(target->stage),
			 stage_kind(target->stage), stage_kind(task->stage));
		return;
	}
	if (same_group && task->stage == STAGE_POSTSTOP && target->stage != STAGE_POSTSTOP &&
	    dependency->condition != DEPENDS_COMPLETED && dependency->condition != DEPENDS_EXITED) {
		complain(context, at, task, dependency,
			 "%s%s cannot hold: poststop tasks run once every other task of the group "
			 "is dead; write {%s: exited} or {%s: completed}",
			 condition, dependency->condition_default ? " (the default)" : "",
			 dependency->name, dependency->name);
		return;
	}
	if (dependency->condition == DEPENDS_COMPLETED &&
	    lifecycle_stage_is_sidecar(target->stage)) {
		complain(
		    context, at, task, dependency,
		    "completed cannot hold: %s is a sidecar, which runs until its group stops; "
		    "write ready or started",
		    target->full_name);
		return;
	}
	if (dependency->condition == DEPENDS_HEALTHY && health_of(target)->probe.kind == PROBE_NONE)
		complain(context, at, task, dependency,
			 "healthy cannot hold: %s has no health probe; add `health:` to it, or "
			 "write ready",
			 target->full_name);
}

/* Prestart tasks one after another in file order: each waits for the one
 * before it (completed for a one-shot, ready for a sidecar). Main tasks
 * need no edge: the coordinator starts them after the prestart stage. */
static void add_sequential_edges(struct config *config, size_t group_index)
{
	struct group_config *group = &config->groups[group_index];
	long previous = -1;
	for (size_t i = 0; i < group->task_count; i++) {
		struct task_config *task = &group->tasks[i];
		if (lifecycle_stage_step(task->stage) != 0)
			continue;
		if (previous >= 0) {
			const struct task_config *before = &group->tasks[previous];
			if (!is_written_twice(task, before->name)) {
				struct task_dependency *dependency =
				    add_dependency(task, before->name, task->location);
				dependency->implicit = true;
			}
		}
		previous = (long)i;
	}
}

/* ---- cycles ---- */

struct graph_walk {
	struct load_context *context;
	const struct config *config;
	size_t *group_offset; /* a task's number: offset of its group + index */
	unsigned char *color; /* 0 unseen, 1 on the path, 2 done */
	size_t *path;         /* task numbers on the current path */
	size_t path_length;
};

static const struct task_config *task_of(const struct graph_walk *walk, size_t number)
{
	size_t group = 0;
	while (group + 1 < walk->config->group_count && walk->group_offset[group + 1] <= number)
		group++;
	return &walk->config->groups[group].tasks[number - walk->group_offset[group]];
}

/* Reports the cycle that `dependency` of `task` closes: the path from its
 * target back to the task, as "a -> b -> c -> a". */
static void report_cycle(struct graph_walk *walk, const struct task_config *task,
			 const struct task_dependency *dependency, size_t target)
{
	size_t start = 0;
	while (walk->path[start] != target)
		start++;
	char text[1024];
	size_t used = 0;
	for (size_t i = start; i < walk->path_length && used < sizeof(text); i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s -> ",
					 task_of(walk, walk->path[i])->full_name);
	if (used < sizeof(text))
		snprintf(text + used, sizeof(text) - used, "%s", task_of(walk, target)->full_name);
	complain(walk->context, dependency->location, task, dependency, "dependency cycle: %s",
		 text);
}

static void visit(struct graph_walk *walk, size_t number)
{
	const struct task_config *task = task_of(walk, number);
	walk->color[number] = 1;
	walk->path[walk->path_length++] = number;
	for (size_t i = 0; i < task->after_count; i++) {
		const struct task_dependency *dependency = &task->after[i];
		size_t target =
		    walk->group_offset[dependency->group_index] + dependency->task_index;
		if (walk->color[target] == 1)
			report_cycle(walk, task, dependency, target);
		else if (walk->color[target] == 0)
			visit(walk, target);
	}
	walk->path_length--;
	walk->color[number] = 2;
}

static void check_cycles(struct load_context *context, const struct config *config)
{
	struct graph_walk walk = {.context = context, .config = config};
	size_t total = 0;
	walk.group_offset = xcalloc(config->group_count + 1, sizeof(*walk.group_offset));
	for (size_t i = 0; i < config->group_count; i++) {
		walk.group_offset[i] = total;
		total += config->groups[i].task_count;
	}
	walk.color = xcalloc(total + 1, 1);
	walk.path = xcalloc(total + 1, sizeof(*walk.path));
	for (size_t number = 0; number < total; number++)
		if (walk.color[number] == 0)
			visit(&walk, number);
	free(walk.color);
	free(walk.path);
	free(walk.group_offset);
}

/* How many instances the task `name` (in `group`) has: 0 when it is no
 * task written with `instances:`. */
static unsigned instances_of(const struct group_config *group, const char *name)
{
	unsigned count = 0;
	for (size_t i = 0; i < group->task_count; i++)
		count +=
		    group->tasks[i].instance_of && strcmp(group->tasks[i].instance_of, name) == 0;
	return count;
}

/* `after: [web]`, where web has `instances: 3`: it waits for web@0, web@1
 * and web@2. */
static void expand_instances(struct config *config, size_t own_group, struct task_config *task)
{
	for (size_t d = 0; d < task->after_count; d++) {
		struct task_dependency *dependency = &task->after[d];
		const char *slash = strchr(dependency->name, '/');
		long group_index =
		    slash ? find_group(config, dependency->name, (size_t)(slash - dependency->name))
			  : (long)own_group;
		if (group_index < 0)
			continue;
		const struct group_config *group = &config->groups[group_index];
		const char *name = slash ? slash + 1 : dependency->name;
		unsigned count = find_task(group, name) < 0 ? instances_of(group, name) : 0;
		if (count == 0)
			continue;
		struct task_dependency written = *dependency;
		task->after =
		    xreallocarray(task->after, task->after_count + count - 1, sizeof(*task->after));
		memmove(&task->after[d + count], &task->after[d + 1],
			(task->after_count - d - 1) * sizeof(*task->after));
		for (unsigned i = 0; i < count; i++) {
			task->after[d + i] = written;
			task->after[d + i].name = xasprintf("%s@%u", written.name, i);
		}
		free(written.name);
		task->after_count += count - 1;
		d += count - 1;
	}
}

/* Whether `name` (as written in `after:`) names a task of the config. */
static bool names_a_task(const struct config *config, size_t own_group, const char *name)
{
	const char *slash = strchr(name, '/');
	long group_index =
	    slash ? find_group(config, name, (size_t)(slash - name)) : (long)own_group;
	return group_index >= 0 &&
	       find_task(&config->groups[group_index], slash ? slash + 1 : name) >= 0;
}

/* compose's `required: false`: a service that is not in the project is
 * left out of the wait, not refused. The other mistakes of such an entry
 * (a wait on a later stage, a cycle) are still refused. */
static void drop_missing_optional(struct config *config, size_t own_group, struct task_config *task)
{
	size_t kept = 0;
	for (size_t d = 0; d < task->after_count; d++) {
		struct task_dependency *dependency = &task->after[d];
		if (dependency->optional && !names_a_task(config, own_group, dependency->name)) {
			free(dependency->name);
			continue;
		}
		task->after[kept++] = *dependency;
	}
	task->after_count = kept;
}

void dependencies_resolve(struct load_context *context, struct config *config)
{
	bool any = false, all_resolved = true;
	for (size_t g = 0; g < config->group_count; g++)
		for (size_t t = 0; t < config->groups[g].task_count; t++) {
			expand_instances(config, g, &config->groups[g].tasks[t]);
			drop_missing_optional(config, g, &config->groups[g].tasks[t]);
		}
	for (size_t g = 0; g < config->group_count; g++) {
		if (config->groups[g].sequential)
			add_sequential_edges(config, g);
		for (size_t t = 0; t < config->groups[g].task_count; t++) {
			struct task_config *task = &config->groups[g].tasks[t];
			for (size_t d = 0; d < task->after_count; d++) {
				struct task_dependency *dependency = &task->after[d];
				any = true;
				if (!resolve_name(context, config, g, task, dependency)) {
					all_resolved = false;
					continue;
				}
				const struct task_config *target =
				    &config->groups[dependency->group_index]
					 .tasks[dependency->task_index];
				if (dependency->condition_default)
					dependency->condition = default_condition(target);
				check_edge(context, task, dependency->group_index == g, dependency,
					   target);
			}
		}
	}
	/* A cycle is only meaningful between names that exist. */
	if (any && all_resolved)
		check_cycles(context, config);
}
