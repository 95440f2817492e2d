/* A task's `watch:` list: paths (files, directories, globs in the last
 * part), what a change does (restart, a signal, a reload of corral's
 * config) and how long to wait for the changes to settle. Compose's
 * develop.watch, pm2's watch and watch_delay, Nomad's template
 * change_mode, systemd's path units. The run-time side is
 * supervisor/watch/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/paths.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/text/watch_path.h"
#include "config/yaml/diagnostics.h"

static const char *const watch_keys[] = {"paths", "action", "debounce", NULL};
static const char *const action_keys[] = {"signal", NULL};
static const char *const action_names[] = {"restart", "reload"};

/* A `[` closed by a `]` (fnmatch's rules: a `]` first in the set, after
 * an optional `!` or `^`, is part of it). */
static bool brackets_closed(const char *name, size_t length)
{
	for (size_t i = 0; i < length; i++) {
		if (name[i] == '\\' && i + 1 < length) {
			i++;
			continue;
		}
		if (name[i] != '[')
			continue;
		size_t j = i + 1;
		if (j < length && (name[j] == '!' || name[j] == '^'))
			j++;
		if (j < length && name[j] == ']')
			j++;
		while (j < length && name[j] != ']')
			j++;
		if (j >= length)
			return false;
		i = j;
	}
	return true;
}

/* The directory relative paths start from: the config file's (as
 * compose's paths start from the project's), made absolute with the
 * working directory when it is relative. Allocated. */
static char *relative_base(struct load_context *context, const yaml_node_t *node)
{
	const char *file = node_file(context, node);
	const char *slash = file ? strrchr(file, '/') : NULL;
	char *directory = !slash          ? xstrdup(".")
			  : slash == file ? xstrdup("/")
					  : xasprintf("%.*s", (int)(slash - file), file);
	if (directory[0] == '/')
		return directory;
	char *working = getcwd(NULL, 0);
	char *absolute = xasprintf("%s/%s", working ? working : "", directory);
	free(working);
	free(directory);
	return absolute;
}

/* One path: absolute (or from the config file's directory), cleaned,
 * with a glob in its last part only. NULL after reporting. */
static char *parse_path(struct load_context *context, const yaml_node_t *node,
			const struct where *where)
{
	const char *text = expect_string(context, node, where);
	if (!text)
		return NULL;
	size_t length = node->data.scalar.length;
	if (!*text) {
		report(context, node, where, "must not be empty (a file, a directory or a glob)");
		return NULL;
	}
	char *joined;
	if (text[0] == '/') {
		joined = xstrdup(text);
	} else {
		char *base = relative_base(context, node);
		joined = xasprintf("%s/%s", base, text);
		free(base);
	}
	char *path = path_clean(joined);
	free(joined);
	if (strcmp(path, "/") == 0) {
		report(context, node, where,
		       "%s is the root directory: name the files or directories to watch",
		       quote(text, length).text);
		free(path);
		return NULL;
	}
	size_t name = watch_path_name_offset(path);
	for (const char *part = path + 1; part < path + name; part += strcspn(part, "/") + 1) {
		size_t part_length = strcspn(part, "/");
		if (watch_name_is_pattern(part, part_length)) {
			report(context, node, where,
			       "%s: a glob may only be in the last part of the path (%s is a "
			       "directory on the way): list the directories one by one",
			       quote(text, length).text, quote(part, part_length).text);
			free(path);
			return NULL;
		}
	}
	if (!brackets_closed(path + name, strlen(path + name))) {
		report(context, node, where, "%s: bad glob: a \"[\" is not closed by \"]\"",
		       quote(text, length).text);
		free(path);
		return NULL;
	}
	return path;
}

static void add_path(struct watch_config *watch, char *path)
{
	for (size_t i = 0; i < watch->path_count; i++)
		if (strcmp(watch->paths[i], path) == 0) {
			free(path); /* written twice, or twice the same once cleaned */
			return;
		}
	watch->paths = xreallocarray(watch->paths, watch->path_count + 2, sizeof(*watch->paths));
	watch->paths[watch->path_count++] = path;
	watch->paths[watch->path_count] = NULL;
}

static void parse_paths(struct load_context *context, const yaml_node_t *node,
			const struct where *where, struct watch_config *watch)
{
	if (node->type == YAML_SCALAR_NODE) {
		char *path = parse_path(context, node, where);
		if (path)
			add_path(watch, path);
		return;
	}
	if (!expect_list(context, node, where, "a path or a list of paths"))
		return;
	if (list_length(node) == 0) {
		report(context, node, where, "must not be empty: name a file, directory or glob");
		return;
	}
	yaml_list_each(walk, context, node, where)
	{
		char *path = walk.item ? parse_path(context, walk.item, &walk.where) : NULL;
		if (path)
			add_path(watch, path);
	}
}

/* `restart`, `reload`, or `{signal: NAME}`. */
static void parse_action(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, struct watch_config *watch)
{
	if (node->type == YAML_MAPPING_NODE) {
		struct map_entries fields;
		map_collect(context, node, where, "key", &fields);
		map_check_keys(context, &fields, where, action_keys);
		const yaml_node_t *signal_node = map_lookup(&fields, "signal");
		char buffer[64];
		struct where signal_where = where_field(where, "signal", buffer, sizeof(buffer));
		const char *text =
		    signal_node ? expect_string(context, signal_node, &signal_where) : NULL;
		int number = text ? parse_signal_name(text) : -1;
		if (!signal_node && !map_has_key_or_typo(&fields, action_keys, "signal"))
			report(context, node, where, "a map must name a signal: {signal: SIGHUP}");
		else if (text && number < 0)
			report_unknown_signal(context, signal_node, &signal_where, text);
		else if (text) {
			watch->action = WATCH_ACTION_SIGNAL;
			watch->signal = number;
		}
		map_entries_free(&fields);
		return;
	}
	const char *text =
	    node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : NULL;
	/* The ways a signal is most often written by mistake: "signal", or a
	 * signal's name ("SIGHUP", "HUP"; "stop" is an unknown action). */
	bool signal_like = text && parse_signal_name(text) > 0 &&
			   (strncasecmp(text, "SIG", 3) == 0 ||
			    strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZ12+-") == strlen(text));
	if (text && (strcmp(text, "signal") == 0 || signal_like)) {
		report(context, node, where, "write a signal as a map: {signal: %s}",
		       parse_signal_name(text) > 0 ? signal_name(parse_signal_name(text))
						   : "SIGHUP");
		return;
	}
	int action = expect_keyword(context, node, where, "action", action_names, 2);
	if (action == 0)
		watch->action = WATCH_ACTION_RESTART;
	else if (action == 1)
		watch->action = WATCH_ACTION_RELOAD;
}

static void parse_entry(struct load_context *context, const yaml_node_t *node,
			const struct where *where, struct watch_config *watch)
{
	watch->action = WATCH_ACTION_RESTART;
	watch->debounce_ms = CONFIG_DEFAULT_WATCH_DEBOUNCE_MS;
	/* A path alone: restarted on its changes. */
	if (node->type == YAML_SCALAR_NODE && !node_is_null(node)) {
		parse_paths(context, node, where, watch);
		return;
	}
	if (!expect_map(context, node, where, "a map with \"paths\", or a path"))
		return;
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[64];
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, watch_keys);
	if ((field = map_lookup(&fields, "paths"))) {
		struct where paths_where = where_field(where, "paths", buffer, sizeof(buffer));
		parse_paths(context, field, &paths_where, watch);
	} else if (!map_has_key_or_typo(&fields, watch_keys, "paths")) {
		report(context, node, where, "missing \"paths\" (files, directories or globs)");
	}
	if ((field = map_lookup(&fields, "action"))) {
		struct where action_where = where_field(where, "action", buffer, sizeof(buffer));
		parse_action(context, field, &action_where, watch);
	}
	if ((field = map_lookup(&fields, "debounce"))) {
		struct where debounce_where =
		    where_field(where, "debounce", buffer, sizeof(buffer));
		expect_duration(context, field, &debounce_where, &watch->debounce_ms);
	}
	map_entries_free(&fields);
}

void watches_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		   struct task_config *task)
{
	if (!expect_list(context, node, where, "a list of {paths, action, debounce}"))
		return;
	size_t count = list_length(node);
	if (count == 0)
		return;
	task->watches = xcalloc(count, sizeof(*task->watches));
	yaml_list_each(walk, context, node, where)
	{
		if (!walk.item)
			continue;
		struct watch_config *watch = &task->watches[task->watch_count];
		parse_entry(context, walk.item, &walk.where, watch);
		if (watch->path_count)
			task->watch_count++;
		else
			string_vector_free(watch->paths);
	}
	if (!task->watch_count) {
		free(task->watches);
		task->watches = NULL;
	}
}
