/* The file as a whole: reading it, YAML errors, the top-level keys and the
 * groups. Tasks are read by config_task.c. */
#include "config/load/config_load.h"
#include "config/model/config_files.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/names.h"
#include "base/regular_file.h"
#include "base/xmalloc.h"
#include "config/load/config_network_parse.h"
#include "config/load/config_parse.h"
#include "config/load/profiles.h"
#include "config/yaml/diagnostics.h"
#include "config/yaml/yaml_limits.h"

static const char *const top_level_keys[] = {
    "shutdown_timeout", "groups",     "socket",      "control",
    "task_dirs_root",   "log_format", "interpolate", "termination_log",
    "hook_concurrency", "notify",     "http",        NULL};
static const char *const log_format_names[] = {"plain", "timestamped", "json"};

int log_format_parse(const char *text)
{
	for (size_t i = 0; i < sizeof(log_format_names) / sizeof(log_format_names[0]); i++)
		if (strcmp(text, log_format_names[i]) == 0)
			return (int)i;
	return -1;
}
static const char *const group_keys[] = {
    "restart", "resources", "isolation",  "network", "cdi",      "task_dirs", "hooks",
    "tasks",   "order",     "on_failure", "log",     "env_file", "profiles",  NULL};
static const char *const order_names[] = {"parallel", "sequential"};

/* How messages name a group or task: as written when valid, quoted (and
 * escaped) when not, since then it may hold anything. */
static struct quoted display_name(const struct map_entry *entry)
{
	struct quoted shown;

	if (name_problem(entry->key, entry->key_length))
		return quote(entry->key, entry->key_length);
	snprintf(shown.text, sizeof(shown.text), "%s", entry->key);
	return shown;
}

static void check_name(struct load_context *context, const struct map_entry *entry,
		       const struct where *where, const char *noun)
{
	const char *problem = name_problem(entry->key, entry->key_length);

	if (problem)
		report(context, entry->key_node, where, "invalid %s name %s: %s", noun,
		       quote(entry->key, entry->key_length).text, problem);
}

/* `instances: N` (even 1, so that a count changed by a reload keeps the
 * names): the task just read becomes NAME@0, and NAME@1 ... are read
 * again from the same node (its errors, if any, were said once). */
static void add_instances(struct load_context *context, const struct map_entry *entry,
			  const char *owner, const struct group_defaults *defaults,
			  struct group_config *group, size_t *capacity, size_t still_to_read)
{
	unsigned count = group->tasks[group->task_count - 1].instances;
	size_t needed = group->task_count + count - 1 + still_to_read;
	if (needed > *capacity) {
		*capacity = needed;
		group->tasks = xreallocarray(group->tasks, *capacity, sizeof(*group->tasks));
	}
	struct config_diagnostics again = {0};
	struct load_context quiet = *context;
	quiet.diagnostics = &again;
	size_t first = group->task_count - 1;
	bool targets_refused = false;
	for (unsigned i = 0; i < count; i++) {
		struct task_config *task = &group->tasks[first + i];
		if (i > 0) {
			memset(task, 0, sizeof(*task));
			task->location = node_location(entry->key_node);
			task_parse(&quiet, entry->value, owner, defaults, task);
			group->task_count++;
		}
		free(task->name);
		free(task->full_name);
		task->instance_of = xstrdup(entry->key);
		task->instance = i;
		task->name = xasprintf("%s@%u", entry->key, i);
		task->full_name = xasprintf("%s/%s", group->name, task->name);
		/* Its probe targets, when they name the instance (read above for
		 * instance 0): said once, for the first instance refused. */
		char error[512];
		struct source_location location;
		if (i > 0 &&
		    task_config_probes_for_instance(task, i, error, sizeof(error), &location) < 0 &&
		    !targets_refused) {
			targets_refused = true;
			diagnostics_add(context->diagnostics, location, "%s", error);
		}
	}
	config_diagnostics_free(&again);
}

/* A task in no active profile: read all the same (its mistakes are the
 * file's), then left out, and remembered for what names it. */
static void leave_task_out(struct load_context *context, const struct map_entry *entry,
			   const char *owner, const struct group_defaults *defaults,
			   const struct group_config *group, const char *profiles)
{
	struct task_config task = {0};
	check_name(context, entry, &(struct where){defaults->owner, ""}, "task");
	task.name = xstrdup(entry->key);
	task.full_name = xasprintf("%s/%s", group->name, task.name);
	task.location = node_location(entry->key_node);
	task_parse(context, entry->value, owner, defaults, &task);
	profiles_exclude(context, task.full_name, profiles);
	config_task_free(&task);
}

/* `group_name` is the group as messages show it. */
static void parse_tasks(struct load_context *context, const yaml_node_t *node,
			const char *group_name, const struct group_defaults *defaults,
			struct group_config *group)
{
	struct where group_where = {.owner = defaults->owner, .field = ""};
	struct where tasks_where = {.owner = defaults->owner, .field = "tasks"};
	struct map_entries tasks;

	if (node_is_null(node) ||
	    (node->type == YAML_MAPPING_NODE &&
	     node->data.mapping.pairs.top == node->data.mapping.pairs.start)) {
		report(context, node, &tasks_where, "must define at least one task");
		return;
	}
	if (!expect_map(context, node, &tasks_where, "a map of task names to tasks"))
		return;

	map_collect(context, node, &group_where, "task", &tasks);
	size_t capacity = tasks.count;
	group->tasks = xcalloc(capacity, sizeof(*group->tasks));
	for (size_t i = 0; i < tasks.count; i++) {
		const struct map_entry *entry = &tasks.items[i];
		char owner[2 * sizeof(struct quoted)], profiles[256];
		snprintf(owner, sizeof(owner), "%s/%s", group_name, display_name(entry).text);
		if (!profiles_active(context, entry->value, owner, profiles, sizeof(profiles))) {
			leave_task_out(context, entry, owner, defaults, group, profiles);
			continue;
		}
		struct task_config *task = &group->tasks[group->task_count++];

		memset(task, 0, sizeof(*task)); /* past a realloc for instances */
		check_name(context, entry, &group_where, "task");
		task->name = xstrdup(entry->key);
		task->full_name = xasprintf("%s/%s", group->name, task->name);
		task->location = node_location(entry->key_node);
		task_parse(context, entry->value, owner, defaults, task);
		if (task->instances)
			add_instances(context, entry, owner, defaults, group, &capacity,
				      tasks.count - i - 1);
	}
	map_entries_free(&tasks);
}

/* `earlier` are the groups read before this one. */
static void parse_group(struct load_context *context, const struct map_entry *entry,
			const struct group_config *earlier, size_t earlier_count,
			struct group_config *group)
{
	struct quoted name = display_name(entry);
	char owner[sizeof(name.text) + 8];
	struct group_defaults defaults = {.owner = owner,
					  .log = {.history = CONFIG_DEFAULT_LOG_HISTORY,
						  .max_size = CONFIG_DEFAULT_LOG_MAX_SIZE,
						  .keep = CONFIG_DEFAULT_LOG_KEEP}};
	struct where where = {.owner = owner, .field = ""};
	struct map_entries fields;
	const yaml_node_t *restart, *resources, *isolation, *network, *tasks, *field;

	snprintf(owner, sizeof(owner), "group %s", name.text);
	group->name = xstrdup(entry->key);
	group->location = node_location(entry->key_node);
	if (!expect_map(context, entry->value, &where, "a map with \"tasks\""))
		return;

	map_collect(context, entry->value, &where, "key", &fields);
	map_check_keys(context, &fields, &where, group_keys);
	restart = map_lookup(&fields, "restart");
	if (restart) {
		struct where restart_where = {.owner = owner, .field = "restart"};

		restart_fields_parse(context, restart, &restart_where, &defaults.restart);
		restart_fields_check_group(context, &defaults.restart, &where);
	}
	resources = map_lookup(&fields, "resources");
	if (resources) {
		struct where resources_where = {.owner = owner, .field = "resources"};

		resources_fields_parse(context, resources, &resources_where, &defaults.resources);
		resources_fields_check_group(context, &defaults.resources, &where);
	}
	/* Before the tasks, whose network modes need to know its bridge. */
	network = map_lookup(&fields, "network");
	if (network) {
		struct where network_where = {.owner = owner, .field = "network"};

		group_network_parse(context, network, &network_where, earlier, earlier_count,
				    &group->network);
		defaults.network = &group->network;
	}
	isolation = map_lookup(&fields, "isolation");
	if (isolation) {
		struct where isolation_where = {.owner = owner, .field = "isolation"};

		isolation_fields_parse(context, isolation, &isolation_where, &defaults.isolation);
		isolation_fields_check_group(context, &defaults.isolation, &where);
		isolation_network_check_group(context, &defaults.isolation, &where,
					      defaults.network);
	}
	if ((field = map_lookup(&fields, "cdi")))
		cdi_fields_parse(context, field, &(struct where){owner, "cdi"}, &defaults.cdi);
	if ((field = map_lookup(&fields, "log")))
		log_fields_parse(context, field, &(struct where){owner, "log"}, &defaults.log);
	if ((field = map_lookup(&fields, "task_dirs")))
		expect_bool(context, field, &(struct where){owner, "task_dirs"},
			    &defaults.task_dirs);
	if ((field = map_lookup(&fields, "env_file")))
		env_files_parse(context, field, &(struct where){owner, "env_file"},
				&defaults.env_file_entries, &defaults.env_file_count);
	const yaml_node_t *hooks = map_lookup(&fields, "hooks");
	if (hooks) {
		struct where hooks_where = {.owner = owner, .field = "hooks"};

		hooks_parse(context, hooks, &hooks_where, &defaults.hooks);
	}
	group->on_failure = (struct group_failure_policy){
	    .action = GROUP_ON_FAILURE_STOP,
	    .attempts = CONFIG_DEFAULT_GROUP_RESTART_ATTEMPTS,
	    .interval_ms = CONFIG_DEFAULT_GROUP_RESTART_INTERVAL_MS,
	};
	if ((field = map_lookup(&fields, "on_failure")))
		on_failure_parse(context, field, &(struct where){owner, "on_failure"},
				 &group->on_failure);
	if ((field = map_lookup(&fields, "order")))
		group->sequential = expect_keyword(context, field, &(struct where){owner, "order"},
						   "order", order_names, 2) == 1;
	tasks = map_lookup(&fields, "tasks");
	if (tasks)
		parse_tasks(context, tasks, name.text, &defaults, group);
	else if (!map_has_key_or_typo(&fields, group_keys, "tasks"))
		report(context, entry->value, &where,
		       "missing \"tasks\" (a group needs at least one task)");
	if (network)
		group_network_check_capacity(context, network, &where, group);
	isolation_fields_free(&defaults.isolation);
	cdi_fields_free(&defaults.cdi);
	hook_list_free(&defaults.hooks);
	for (size_t i = 0; i < defaults.env_file_count; i++)
		free(defaults.env_file_entries[i]);
	free(defaults.env_file_entries);
	map_entries_free(&fields);
}

static size_t excluded_count(const struct load_context *context)
{
	return context->excluded ? context->excluded->count : 0;
}

static void parse_groups(struct load_context *context, const yaml_node_t *node,
			 struct config *config)
{
	struct where where = {.owner = "", .field = "groups"};
	struct map_entries groups;

	if (node_is_null(node) ||
	    (node->type == YAML_MAPPING_NODE &&
	     node->data.mapping.pairs.top == node->data.mapping.pairs.start)) {
		report(context, node, &where, "must define at least one group");
		return;
	}
	if (!expect_map(context, node, &where, "a map of group names to groups"))
		return;

	map_collect(context, node, &where, "group", &groups);
	config->groups = xcalloc(groups.count, sizeof(*config->groups));
	for (size_t i = 0; i < groups.count; i++) {
		const struct map_entry *entry = &groups.items[i];
		struct group_config *group = &config->groups[config->group_count];
		char owner[sizeof(struct quoted) + 8], profiles[256];
		snprintf(owner, sizeof(owner), "group %s", display_name(entry).text);
		bool active =
		    profiles_active(context, entry->value, owner, profiles, sizeof(profiles));
		size_t excluded_before = excluded_count(context);
		check_name(context, entry, &where, "group");
		parse_group(context, entry, config->groups, config->group_count, group);
		/* In no active profile, or every task is: read, then left out. */
		if (!active ||
		    (group->task_count == 0 && excluded_count(context) > excluded_before)) {
			if (!active)
				profiles_exclude(context, group->name, profiles);
			config_group_free(group);
			memset(group, 0, sizeof(*group));
			continue;
		}
		config->group_count++;
	}
	size_t written = groups.count;
	map_entries_free(&groups);
	if (config->group_count == 0 && written > 0 && excluded_count(context) > 0) {
		char active[256];
		profiles_describe(context->profiles, active, sizeof(active));
		report(context, node, &where,
		       "nothing to run: every group and task is in a profile that is not active "
		       "(active: %s); activate one with --profile or CORRAL_PROFILES",
		       active);
	}
}

static void parse_socket(struct load_context *context, const yaml_node_t *node,
			 struct config *config)
{
	struct where where = {.owner = "", .field = "socket"};
	const char *path = expect_absolute(context, node, &where);

	if (!path)
		return;
	/* sun_path holds 108 bytes with its NUL. */
	if (strlen(path) > 107) {
		report(context, node, &where,
		       "is longer than the 107 bytes a socket path can have");
		return;
	}
	config->socket_path = xstrdup(path);
}

/* Where task directories live on the host (hooks/task_dirs.h). */
static void parse_task_dirs_root(struct load_context *context, const yaml_node_t *node,
				 struct config *config)
{
	struct where where = {.owner = "", .field = "task_dirs_root"};
	const char *path = expect_string(context, node, &where);

	if (!path)
		return;
	if (path[0] != '/' || strcmp(path, "/") == 0) {
		report(context, node, &where, "must be an absolute path other than /, not %s",
		       quote(path, node->data.scalar.length).text);
		return;
	}
	config->task_dirs_root = xstrdup(path);
}

/* Where corral writes its termination message (Kubernetes'
 * terminationMessagePath); "" writes none, not even the default. */
static void parse_termination_log(struct load_context *context, const yaml_node_t *node,
				  struct config *config)
{
	struct where where = {.owner = "", .field = "termination_log"};
	const char *path = expect_string(context, node, &where);

	if (!path)
		return;
	if (*path && (path[0] != '/' || strcmp(path, "/") == 0 || strlen(path) >= PATH_MAX)) {
		report(context, node, &where,
		       "must be an absolute path to a file, or \"\" for none, not %s",
		       quote(path, node->data.scalar.length).text);
		return;
	}
	config->termination_log = xstrdup(path);
}

static void parse_top_level(struct load_context *context, const yaml_node_t *root,
			    struct config *config)
{
	struct where top = {.owner = "", .field = ""};
	struct map_entries fields;
	const yaml_node_t *groups, *shutdown_timeout;

	if (!expect_map(context, root, &top, "a map with \"groups\" at the top level"))
		return;
	map_collect(context, root, &top, "key", &fields);
	map_check_keys(context, &fields, &top, top_level_keys);

	const yaml_node_t *hook_concurrency = map_lookup(&fields, "hook_concurrency");
	if (hook_concurrency) {
		struct where where = {.owner = "", .field = "hook_concurrency"};
		const char *text = expect_string(context, hook_concurrency, &where);
		char *end;
		unsigned long value = text ? strtoul(text, &end, 10) : 0;
		if (text && (!*text || *end || text[0] == '-' || value < 1 || value > 4096))
			report(context, hook_concurrency, &where,
			       "must be a whole number from 1 to 4096, not %s",
			       quote(text, hook_concurrency->data.scalar.length).text);
		else if (text)
			config->hook_concurrency = (unsigned)value;
	}
	const yaml_node_t *log_format = map_lookup(&fields, "log_format");
	if (log_format) {
		struct where where = {.owner = "", .field = "log_format"};
		int format =
		    expect_keyword(context, log_format, &where, "log format", log_format_names, 3);
		if (format >= 0)
			config->log_format = (enum log_format)format;
	}
	shutdown_timeout = map_lookup(&fields, "shutdown_timeout");
	if (shutdown_timeout) {
		struct where where = {.owner = "", .field = "shutdown_timeout"};

		expect_duration(context, shutdown_timeout, &where, &config->shutdown_timeout_ms);
	}
	const yaml_node_t *socket = map_lookup(&fields, "socket");
	if (socket)
		parse_socket(context, socket, config);
	const yaml_node_t *control = map_lookup(&fields, "control");
	if (control)
		control_settings_parse(context, control, config);
	const yaml_node_t *http = map_lookup(&fields, "http");
	if (http)
		http_settings_parse(context, http, config);
	const yaml_node_t *task_dirs_root = map_lookup(&fields, "task_dirs_root");
	if (task_dirs_root)
		parse_task_dirs_root(context, task_dirs_root, config);
	const yaml_node_t *termination_log = map_lookup(&fields, "termination_log");
	if (termination_log)
		parse_termination_log(context, termination_log, config);
	groups = map_lookup(&fields, "groups");
	if (groups) {
		parse_groups(context, groups, config);
		dependencies_resolve(context, config);
		const yaml_node_t *notify = map_lookup(&fields, "notify");
		if (notify)
			notify_settings_parse(context, notify, config);
	} else if (!map_has_key_or_typo(&fields, top_level_keys, "groups"))
		report(context, root, &top, "missing \"groups\" (a map of group names to groups)");
	map_entries_free(&fields);
}

/* libyaml reports reader errors (bad UTF-8, control characters) by byte
 * offset only; turn that into a line and column. */
static struct source_location location_of_offset(const char *buffer, size_t size, size_t offset)
{
	struct source_location location = {.line = 1, .column = 1};

	for (size_t i = 0; i < offset && i < size; i++) {
		if (buffer[i] == '\n') {
			location.line++;
			location.column = 1;
		} else {
			location.column++;
		}
	}
	return location;
}

static void report_yaml_error(const yaml_parser_t *parser, const char *buffer, size_t size,
			      unsigned file, struct config_diagnostics *diagnostics)
{
	const char *problem = parser->problem ? parser->problem : "unknown error";
	struct source_location location = {
	    .line = (unsigned)parser->problem_mark.line + 1,
	    .column = (unsigned)parser->problem_mark.column + 1,
	    .file = file,
	};

	switch (parser->error) {
	case YAML_MEMORY_ERROR:
		diagnostics_add(diagnostics, (struct source_location){.file = file},
				"out of memory while parsing YAML");
		return;
	case YAML_READER_ERROR:
		location = location_of_offset(buffer, size, parser->problem_offset);
		location.file = file;
		if (parser->problem_value != -1)
			diagnostics_add(diagnostics, location,
					"YAML syntax error: %s (byte 0x%02x)", problem,
					(unsigned)parser->problem_value & 0xff);
		else
			diagnostics_add(diagnostics, location, "YAML syntax error: %s", problem);
		return;
	default:
		break;
	}
	/* The classic: a tab where YAML wants spaces. libyaml only says the
	 * character "cannot start any token". */
	if (parser->error == YAML_SCANNER_ERROR && parser->problem_mark.index < size &&
	    buffer[parser->problem_mark.index] == '\t')
		diagnostics_add(diagnostics, location,
				"YAML syntax error: %s (a tab: indent with spaces)", problem);
	else if (parser->context && parser->context_mark.line == parser->problem_mark.line &&
		 parser->context_mark.column == parser->problem_mark.column)
		diagnostics_add(diagnostics, location, "YAML syntax error: %s (%s)", problem,
				parser->context);
	else if (parser->context)
		diagnostics_add(diagnostics, location,
				"YAML syntax error: %s (%s at line %u, column %u)", problem,
				parser->context, (unsigned)parser->context_mark.line + 1,
				(unsigned)parser->context_mark.column + 1);
	else
		diagnostics_add(diagnostics, location, "YAML syntax error: %s", problem);
}

/* A second document would be silently ignored by yaml_parser_load(); say
 * so instead. */
static void refuse_more_documents(yaml_parser_t *parser, const char *buffer, size_t size,
				  unsigned file, struct config_diagnostics *diagnostics)
{
	yaml_document_t next;

	if (!yaml_parser_load(parser, &next)) {
		report_yaml_error(parser, buffer, size, file, diagnostics);
		return;
	}
	if (yaml_document_get_root_node(&next))
		diagnostics_add(diagnostics,
				(struct source_location){
				    .line = (unsigned)next.start_mark.line + 1,
				    .column = (unsigned)next.start_mark.column + 1,
				    .file = file,
				},
				"only one YAML document is allowed; this file has more");
	yaml_document_delete(&next);
}

/* Top-level `interpolate: true`, looked at before anything else is read. */
static bool wants_interpolation(struct load_context *context, const yaml_node_t *root)
{
	if (root->type != YAML_MAPPING_NODE)
		return false;
	for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
	     pair < root->data.mapping.pairs.top; pair++) {
		yaml_node_t *key = yaml_document_get_node(context->document, pair->key);
		if (!key || key->type != YAML_SCALAR_NODE ||
		    strcmp((const char *)key->data.scalar.value, "interpolate") != 0)
			continue;
		bool on = false;
		expect_bool(context, yaml_document_get_node(context->document, pair->value),
			    &(struct where){"", "interpolate"}, &on);
		return on;
	}
	return false;
}

bool config_load_document(const char *buffer, size_t size, unsigned file, yaml_document_t *document,
			  struct config_diagnostics *diagnostics)
{
	yaml_parser_t parser;
	bool loaded = false;

	if (!yaml_parser_initialize(&parser)) {
		fputs("corral: out of memory\n", stderr);
		abort();
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buffer, size);
	if (!yaml_within_limits(buffer, size, file, diagnostics))
		goto done;
	if (!yaml_parser_load(&parser, document)) {
		report_yaml_error(&parser, buffer, size, file, diagnostics);
		goto done;
	}
	loaded = true;
	refuse_more_documents(&parser, buffer, size, file, diagnostics);
done:
	yaml_parser_delete(&parser);
	return loaded;
}

struct config *config_from_document(const char *path, yaml_document_t *document,
				    const char *const *files, size_t file_count,
				    const char *const *profiles,
				    struct config_diagnostics *diagnostics)
{
	struct config *config = xcalloc(1, sizeof(*config));
	struct profile_exclusions excluded = {0};
	size_t profile_count = 0;
	while (profiles && profiles[profile_count])
		profile_count++;
	bool *profile_listed = xcalloc(profile_count + 1, sizeof(*profile_listed));
	struct load_context context = {.document = document,
				       .profile_listed = profile_listed,
				       .diagnostics = diagnostics,
				       .path = path,
				       .files = files,
				       .file_count = file_count,
				       .profiles = profiles,
				       .excluded = &excluded};
	yaml_node_t *root = yaml_document_get_root_node(document);

	config->path = xstrdup(path ? path : "");
	config->shutdown_timeout_ms = CONFIG_DEFAULT_SHUTDOWN_TIMEOUT_MS;
	config->control_idle_timeout_ms = CONFIG_DEFAULT_CONTROL_IDLE_TIMEOUT_MS;
	config->control_connections_per_user = CONFIG_DEFAULT_CONTROL_CONNECTIONS_PER_USER;
	config->http.idle_timeout_ms = CONFIG_DEFAULT_HTTP_IDLE_TIMEOUT_MS;
	if (root && wants_interpolation(&context, root))
		config_interpolate_document(&context, document);
	if (!root || node_is_null(root))
		diagnostics_add(diagnostics, (struct source_location){0},
				"the file is empty; expected a map with \"groups\"");
	else
		parse_top_level(&context, root, config);
	profile_exclusions_free(&excluded);
	size_t unlisted = 0;
	for (size_t i = 0; i < profile_count; i++) {
		config->profiles = xreallocarray(config->profiles, i + 2, sizeof(char *));
		config->profiles[i] = xstrdup(profiles[i]);
		config->profiles[i + 1] = NULL;
		if (profile_listed[i])
			continue;
		config->profiles_unlisted =
		    xreallocarray(config->profiles_unlisted, unlisted + 2, sizeof(char *));
		config->profiles_unlisted[unlisted++] = xstrdup(profiles[i]);
		config->profiles_unlisted[unlisted] = NULL;
	}
	free(profile_listed);
	if (diagnostics->count) {
		diagnostics_sort(diagnostics);
		config_free(config);
		return NULL;
	}
	return config;
}

static struct config *parse_buffer(const char *path, const char *buffer, size_t size,
				   const char *const *profiles,
				   struct config_diagnostics *diagnostics)
{
	yaml_document_t document;

	*diagnostics = (struct config_diagnostics){0};
	if (!config_load_document(buffer ? buffer : "", buffer ? size : 0, 0, &document,
				  diagnostics)) {
		diagnostics_sort(diagnostics);
		return NULL;
	}
	struct config *config =
	    config_from_document(path, &document, NULL, 0, profiles, diagnostics);
	yaml_document_delete(&document);
	return config;
}

struct config *config_parse_buffer(const char *path, const char *buffer, size_t size,
				   struct config_diagnostics *diagnostics)
{
	return parse_buffer(path, buffer, size, NULL, diagnostics);
}

int config_read_file(const char *path, unsigned file, char **out, size_t *out_size,
		     struct config_diagnostics *diagnostics)
{
	char reason[REGULAR_FILE_REASON_SIZE];
	int result = config_files_read(path, CONFIG_FILE_MAX_BYTES, out, out_size, reason);

	if (result < 0)
		diagnostics_add(diagnostics, (struct source_location){.file = file},
				"cannot read: %s", reason);
	return result;
}

struct config *config_load_file(const char *path, struct config_diagnostics *diagnostics)
{
	return config_load_file_with_profiles(path, NULL, diagnostics);
}

struct config *config_load_file_with_profiles(const char *path, const char *const *profiles,
					      struct config_diagnostics *diagnostics)
{
	struct config *config;
	size_t size = 0;
	char *data = NULL;

	*diagnostics = (struct config_diagnostics){0};
	if (config_read_file(path, 0, &data, &size, diagnostics) < 0)
		return NULL;
	config = parse_buffer(path, data, size, profiles, diagnostics);
	free(data);
	return config;
}
