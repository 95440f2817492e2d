/* One task: its command, environment, identity, lifecycle stage, restart
 * policy, resource limits, readiness and health probes, isolation, CDI
 * devices and task directories, and how it is stopped. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/blank.h"
#include "base/regular_file.h"
#include "base/suggest.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "config/load/config_network_parse.h"
#include "config/load/config_parse.h"
#include "config/model/config_files.h"
#include "config/text/env_file.h"
#include "config/text/ids.h"
#include "config/yaml/diagnostics.h"

static const char *const task_keys[] = {
    "command",   "env",           "env_file",  "cwd",       "user",     "groups",    "lifecycle",
    "restart",   "kill",          "resources", "readiness", "health",   "isolation", "cdi",
    "task_dirs", "hooks",         "after",     "log",       "wait_for", "autostart", "instances",
    "schedule",  "oom_score_adj", "control",   "watch",     "profiles", "update",    NULL};
static const char *const lifecycle_keys[] = {"hook", "sidecar", NULL};
static const char *const kill_keys[] = {"signal", "timeout", "mode", NULL};

enum hook { HOOK_PRESTART, HOOK_POSTSTART, HOOK_POSTSTOP };
static const char *const hook_names[] = {"prestart", "poststart", "poststop"};

/* A string is a shell command line, for the common one-liner. */
static void parse_command_string(struct load_context *context, const yaml_node_t *node,
				 const struct where *where, struct task_config *task)
{
	const char *line = expect_string(context, node, where);

	if (!line)
		return;
	if (text_is_blank(line, strlen(line))) {
		report(context, node, where, "must not be empty");
		return;
	}
	task->argv = xcalloc(4, sizeof(*task->argv));
	task->argv[0] = xstrdup("/bin/sh");
	task->argv[1] = xstrdup("-c");
	task->argv[2] = xstrdup(line);
	task->argc = 3;
}

void command_list_parse(struct load_context *context, const yaml_node_t *node,
			const struct where *where, char ***argv, size_t *argc)
{
	size_t count = list_length(node);

	if (count == 0) {
		report(context, node, where, "must not be empty");
		return;
	}
	/* Only valid words are stored, so the vector stays NULL-terminated
	 * without gaps even when some are wrong. */
	*argv = xcalloc(count + 1, sizeof(**argv));
	yaml_list_each(walk, context, node, where)
	{
		const char *word;

		if (!walk.item)
			continue;
		word = expect_string(context, walk.item, &walk.where);
		if (!word)
			continue;
		if (walk.index == 0 && !*word) {
			report(context, walk.item, &walk.where, "the program must not be empty");
			continue;
		}
		(*argv)[(*argc)++] = xstrdup(word);
	}
}

static void parse_command(struct load_context *context, const yaml_node_t *node,
			  const struct where *where, struct task_config *task)
{
	if (node_is_null(node))
		report(context, node, where, "must not be empty");
	else if (node->type == YAML_SCALAR_NODE)
		parse_command_string(context, node, where, task);
	else if (node->type == YAML_SEQUENCE_NODE)
		command_list_parse(context, node, where, &task->argv, &task->argc);
	else
		report(context, node, where, "must be a list of strings or a string, not %s",
		       node_kind(node));
}

static bool is_environment_name(const char *name, size_t length)
{
	if (length == 0 || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (size_t i = 0; i < length; i++) {
		char c = name[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

static void parse_env(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct task_config *task)
{
	struct map_entries variables;

	if (!expect_map(context, node, where, "a map of variable names to values"))
		return;
	map_collect(context, node, where, "variable", &variables);
	task->env = xcalloc(variables.count + 1, sizeof(*task->env));
	for (size_t i = 0; i < variables.count; i++) {
		const struct map_entry *entry = &variables.items[i];
		char buffer[128];
		struct where value_where;
		const char *value;

		if (!is_environment_name(entry->key, entry->key_length)) {
			report(context, entry->key_node, where,
			       "invalid variable name %s: use letters, digits and '_', not "
			       "starting with a digit",
			       quote(entry->key, entry->key_length).text);
			continue;
		}
		value_where = where_field(where, entry->key, buffer, sizeof(buffer));
		value = expect_string(context, entry->value, &value_where);
		if (value)
			task->env[task->env_count++] = xasprintf("%s=%s", entry->key, value);
	}
	map_entries_free(&variables);
}

/* Collects an env file's variables. */
struct env_file_entries {
	char **items;
	size_t count;
};

static void add_entry(void *pointer, const char *name, size_t name_length, const char *value,
		      size_t value_length)
{
	struct env_file_entries *entries = pointer;
	entries->items = xreallocarray(entries->items, entries->count + 2, sizeof(char *));
	entries->items[entries->count++] =
	    xasprintf("%.*s=%.*s", (int)name_length, name, (int)value_length, value);
	entries->items[entries->count] = NULL;
}

/* One env file, relative paths from the config file's directory. */
static void read_env_file(struct load_context *context, const yaml_node_t *node,
			  const struct where *where, const char *path,
			  struct env_file_entries *entries)
{
	char *full;
	const char *config_file = node_file(context, node);
	if (path[0] == '/' || !config_file || !strrchr(config_file, '/'))
		full = xstrdup(path);
	else
		full = xasprintf("%.*s/%s", (int)(strrchr(config_file, '/') - config_file),
				 config_file, path);
	char *text = NULL, reason[REGULAR_FILE_REASON_SIZE];
	size_t length = 0;
	if (config_files_read(full, ENV_FILE_MAX_BYTES, &text, &length, reason) < 0) {
		report(context, node, where, "%s: %s", full, reason);
		free(full);
		return;
	}
	unsigned line;
	char error[160];
	if (env_file_parse(text, length, add_entry, entries, &line, error, sizeof(error)) < 0)
		report(context, node, where, "%s:%u: %s", full, line, error);
	free(text);
	free(full);
}

void env_files_parse(struct load_context *context, const yaml_node_t *node,
		     const struct where *where, char ***entries, size_t *count)
{
	struct env_file_entries read = {0};
	if (node->type == YAML_SCALAR_NODE) {
		const char *path = expect_string(context, node, where);
		if (path)
			read_env_file(context, node, where, path, &read);
	} else if (expect_list(context, node, where, "a path or a list of paths")) {
		yaml_list_each(walk, context, node, where)
		{
			const char *path =
			    walk.item ? expect_string(context, walk.item, &walk.where) : NULL;
			if (path)
				read_env_file(context, walk.item, &walk.where, path, &read);
		}
	}
	*entries = read.items;
	*count = read.count;
}

/* The group's env files, then the task's, then `env:` (put after: it wins). */
static void add_env_files(struct task_config *task, char *const *group_entries, size_t group_count,
			  char **task_entries, size_t task_count)
{
	if (!group_count && !task_count)
		return;
	char **env = xcalloc(group_count + task_count + task->env_count + 1, sizeof(*env));
	size_t used = 0;
	for (size_t i = 0; i < group_count; i++)
		env[used++] = xstrdup(group_entries[i]);
	for (size_t i = 0; i < task_count; i++)
		env[used++] = task_entries[i];
	for (size_t i = 0; i < task->env_count; i++)
		env[used++] = task->env[i];
	free(task->env);
	free(task_entries);
	task->env = env;
	task->env_count = used;
}

static void parse_oom_score_adj(struct load_context *context, const yaml_node_t *node,
				const struct where *where, struct task_config *task)
{
	const char *text = expect_string(context, node, where);
	if (!text)
		return;
	char *end;
	long value = strtol(text, &end, 10);
	if (!*text || *end || value < -1000 || value > 1000) {
		report(context, node, where, "must be a whole number from -1000 to 1000, not %s",
		       quote(text, node->data.scalar.length).text);
		return;
	}
	task->oom_score_adj_set = true;
	task->oom_score_adj = (int)value;
}

static void parse_cwd(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct task_config *task)
{
	const char *path = expect_absolute(context, node, where);

	if (path)
		task->cwd = xstrdup(path);
}

static void parse_user(struct load_context *context, const yaml_node_t *node,
		       const struct where *where, struct task_config *task)
{
	const char *user = expect_string(context, node, where);

	if (!user)
		return;
	if (!*user) {
		report(context, node, where, "must not be empty (write a name, a uid or uid:gid)");
		return;
	}
	/* Names are looked up when the task starts, not here: the loader
	 * stays free of NSS and of the state of /etc/passwd. A number is
	 * checked now, so that one too wide for uid_t fails check, not the
	 * start. */
	char problem[160];
	if (id_spec_check(user, problem, sizeof(problem)) < 0) {
		report(context, node, where, "%s", problem);
		return;
	}
	task->user = xstrdup(user);
}

/* Supplementary groups by name or gid. A gid is checked here; a name is
 * looked up when corral starts, as `user` is. */
static void parse_groups(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, struct task_config *task)
{
	size_t count;

	if (!expect_list(context, node, where, "a list of group names or gids such as [video, 44]"))
		return;
	count = list_length(node);
	task->groups = xcalloc(count + 1, sizeof(*task->groups));
	yaml_list_each(walk, context, node, where)
	{
		const char *group =
		    walk.item ? expect_string(context, walk.item, &walk.where) : NULL;
		const char *cursor = group;
		uint64_t gid;

		if (!group)
			continue;
		if (!*group) {
			report(context, walk.item, &walk.where,
			       "must not be empty (write a name or a gid)");
			continue;
		}
		if (*group >= '0' && *group <= '9' &&
		    (!read_number(&cursor, &gid) || *cursor || gid >= UINT32_MAX)) {
			report(context, walk.item, &walk.where,
			       "%s is not a gid (a whole number below 4294967295) nor a group name",
			       quote(group, walk.item->data.scalar.length).text);
			continue;
		}
		for (size_t j = 0; j < task->group_count; j++)
			if (strcmp(task->groups[j], group) == 0) {
				report(context, walk.item, &walk.where, "duplicate group %s",
				       quote(group, walk.item->data.scalar.length).text);
				group = NULL;
				break;
			}
		if (group)
			task->groups[task->group_count++] = xstrdup(group);
	}
}

static void parse_lifecycle(struct load_context *context, const yaml_node_t *node,
			    const struct where *where, struct task_config *task)
{
	struct map_entries fields;
	const yaml_node_t *hook_node, *sidecar_node;
	bool sidecar = false, sidecar_valid = false;
	int hook = -1;

	if (!expect_map(context, node, where, "a map with \"hook\""))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, lifecycle_keys);
	hook_node = map_lookup(&fields, "hook");
	sidecar_node = map_lookup(&fields, "sidecar");

	if (hook_node) {
		char buffer[32];
		struct where hook_where = where_field(where, "hook", buffer, sizeof(buffer));

		hook = expect_keyword(context, hook_node, &hook_where, "hook", hook_names, 3);
	}
	if (sidecar_node) {
		char buffer[32];
		struct where sidecar_where = where_field(where, "sidecar", buffer, sizeof(buffer));

		sidecar_valid = expect_bool(context, sidecar_node, &sidecar_where, &sidecar);
		if (sidecar_valid && sidecar && hook == HOOK_POSTSTOP)
			report(context, sidecar_node, &sidecar_where,
			       "a poststop task cannot be a sidecar (it runs after the "
			       "group stopped)");
	}
	if (!hook_node && !map_has_key_or_typo(&fields, lifecycle_keys, "hook")) {
		if (sidecar_node)
			report(context, sidecar_node, where,
			       "\"sidecar\" needs a \"hook\" (prestart or poststart)");
		else
			report(context, node, where,
			       "missing \"hook\" (prestart, poststart or poststop)");
	}

	switch (hook) {
	case HOOK_PRESTART:
		task->stage = sidecar ? STAGE_PRESTART_SIDECAR : STAGE_PRESTART_EPHEMERAL;
		break;
	case HOOK_POSTSTART:
		task->stage = sidecar ? STAGE_POSTSTART_SIDECAR : STAGE_POSTSTART_EPHEMERAL;
		break;
	case HOOK_POSTSTOP:
		task->stage = STAGE_POSTSTOP;
		break;
	default:
		break; /* reported; the stage no longer matters */
	}
	map_entries_free(&fields);
}

void report_unknown_signal(struct load_context *context, const yaml_node_t *node,
			   const struct where *where, const char *text)
{
	const char *bare_names[SIGSYS];
	size_t count = 0, length = node->data.scalar.length;
	const char *bare = text, *suggestion;

	/* Compare without the SIG prefix, which every name shares: it would
	 * make "SIGFOO" look close to "SIGFPE". */
	for (int number = 1; number <= SIGSYS; number++)
		bare_names[count++] = signal_name(number) + 3;
	if (length >= 3 && strncasecmp(text, "SIG", 3) == 0)
		bare += 3;
	/* Numbers differ between architectures; names do not. */
	if (length > 0 && length <= 2 && strspn(text, "0123456789") == length &&
	    strcmp(signal_name(atoi(text)), "SIG?") != 0) {
		report(context, node, where, "unknown signal %s; write it by name: \"%s\"",
		       quote(text, length).text, signal_name(atoi(text)));
		return;
	}
	suggestion = suggest_nearest(bare, length - (size_t)(bare - text), bare_names, count);
	if (suggestion)
		report(context, node, where, "unknown signal %s; did you mean \"SIG%s\"?",
		       quote(text, length).text, suggestion);
	else
		report(context, node, where, "unknown signal %s", quote(text, length).text);
}

static void parse_kill_mode(struct load_context *context, const yaml_node_t *node,
			    const struct where *kill_where, struct task_config *task)
{
	static const char *const mode_names[] = {"mixed", "control-group"};
	char buffer[32];
	struct where where = where_field(kill_where, "mode", buffer, sizeof(buffer));
	if (node->type == YAML_SCALAR_NODE && node->data.scalar.length == strlen("process") &&
	    memcmp(node->data.scalar.value, "process", strlen("process")) == 0) {
		/* systemd's KillMode=process leaves the rest of the unit
		 * running; corral never leaves a task's processes behind. */
		report(context, node, &where,
		       "\"process\" is not a corral kill mode: corral never leaves a task's "
		       "processes behind once its main process is gone; \"mixed\" (the "
		       "default) signals the main process alone");
		return;
	}
	int mode = expect_keyword(context, node, &where, "kill mode", mode_names, 2);
	if (mode >= 0)
		task->kill_mode = (enum kill_mode)mode;
}

static void parse_kill(struct load_context *context, const yaml_node_t *node,
		       const struct where *where, struct task_config *task)
{
	struct map_entries fields;
	const yaml_node_t *signal_node, *timeout_node;

	if (!expect_map(context, node, where, "a map of \"signal\" and \"timeout\""))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, kill_keys);

	signal_node = map_lookup(&fields, "signal");
	if (signal_node) {
		char buffer[32];
		struct where signal_where = where_field(where, "signal", buffer, sizeof(buffer));
		const char *text = expect_string(context, signal_node, &signal_where);
		int number = text ? parse_signal_name(text) : -1;

		if (text && number < 0)
			report_unknown_signal(context, signal_node, &signal_where, text);
		else if (text)
			task->kill_signal = number;
	}
	timeout_node = map_lookup(&fields, "timeout");
	if (timeout_node) {
		char buffer[32];
		struct where timeout_where = where_field(where, "timeout", buffer, sizeof(buffer));

		expect_duration(context, timeout_node, &timeout_where, &task->kill_timeout_ms);
	}
	const yaml_node_t *mode_node = map_lookup(&fields, "mode");
	if (mode_node)
		parse_kill_mode(context, mode_node, where, task);
	map_entries_free(&fields);
}

/* A task with a network namespace of its own gets NOTIFY_SOCKET as a path
 * on the host's file system (task_readiness.c): one with a root file
 * system of its own does not see it. */
static void check_notify_reachable(struct load_context *context, const yaml_node_t *readiness,
				   const char *owner, const struct task_config *task)
{
	const struct isolation_config *isolation = &task->isolation;
	if (!readiness || readiness_of(task)->kind != READINESS_NOTIFY_SYSTEMD ||
	    !isolation_has_own_network(isolation) || !isolation->rootfs)
		return;
	report(context, readiness, &(struct where){owner, "readiness.notify"},
	       "systemd: with a network namespace of its own, NOTIFY_SOCKET is a path on the "
	       "host's file system, which a task with its own rootfs does not see; take notify: "
	       "fd, or a probe (tcp, http, unix, exec)");
}

/* An exec probe run inside the task needs namespaces of its own to run in. */
static void check_probe_inside(struct load_context *context, const yaml_node_t *node,
			       const char *owner, const char *field,
			       const struct probe_config *probe,
			       const struct isolation_config *isolation)
{
	if (!node || !probe->inside || (isolation->enabled && isolation->namespaces))
		return;
	report(context, node, &(struct where){owner, field},
	       "inside: the task has no namespaces of its own to run the probe in (add "
	       "isolation.namespaces, or leave inside out)");
}

/* A probe target that names the instance, in a task that has none:
 * CORRAL_INSTANCE is not in its environment either. */
static void refuse_instance_templates(struct load_context *context, const struct task_config *task)
{
	const struct probe_config *probes[] = {task->readiness ? &task->readiness->probe : NULL,
					       task->health ? &task->health->probe : NULL};
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		if (!probes[i])
			continue;
		const struct probe_template *templates[] = {&probes[i]->port_template,
							    &probes[i]->path_template};
		for (size_t t = 0; t < 2; t++)
			if (templates[t]->text)
				diagnostics_add(context->diagnostics, templates[t]->location,
						"%s: names the instance (CORRAL_INSTANCE), but the "
						"task has no instances: give it instances: N",
						templates[t]->where);
	}
}

void task_parse(struct load_context *context, const yaml_node_t *node, const char *owner,
		const struct group_defaults *group, struct task_config *task)
{
	struct where where = {.owner = owner, .field = ""};
	struct restart_fields task_restart = {0};
	struct resources_fields task_resources = {0};
	struct isolation_fields task_isolation = {0};
	struct cdi_fields task_cdi = {0};
	struct hook_list task_hooks = {0};
	struct map_entries fields;
	const yaml_node_t *field;

	task->stage = STAGE_MAIN;
	task->kill_signal = SIGTERM;
	task->kill_timeout_ms = CONFIG_DEFAULT_KILL_TIMEOUT_MS;
	if (!expect_map(context, node, &where, "a map with \"command\""))
		return;
	map_collect(context, node, &where, "key", &fields);
	map_check_keys(context, &fields, &where, task_keys);

	/* The stage first: the restart defaults depend on it. */
	if ((field = map_lookup(&fields, "lifecycle")))
		parse_lifecycle(context, field, &(struct where){owner, "lifecycle"}, task);
	if ((field = map_lookup(&fields, "command")))
		parse_command(context, field, &(struct where){owner, "command"}, task);
	else if (!map_has_key_or_typo(&fields, task_keys, "command"))
		report(context, node, &where, "missing \"command\"");
	if ((field = map_lookup(&fields, "env")))
		parse_env(context, field, &(struct where){owner, "env"}, task);
	char **file_entries = NULL;
	size_t file_count = 0;
	if ((field = map_lookup(&fields, "env_file")))
		env_files_parse(context, field, &(struct where){owner, "env_file"}, &file_entries,
				&file_count);
	add_env_files(task, group->env_file_entries, group->env_file_count, file_entries,
		      file_count);
	if ((field = map_lookup(&fields, "cwd")))
		parse_cwd(context, field, &(struct where){owner, "cwd"}, task);
	if ((field = map_lookup(&fields, "user")))
		parse_user(context, field, &(struct where){owner, "user"}, task);
	if ((field = map_lookup(&fields, "groups")))
		parse_groups(context, field, &(struct where){owner, "groups"}, task);
	if ((field = map_lookup(&fields, "restart")))
		restart_fields_parse(context, field, &(struct where){owner, "restart"},
				     &task_restart);
	if ((field = map_lookup(&fields, "schedule"))) {
		struct where schedule_where = {owner, "schedule"};
		if (task->stage == STAGE_MAIN)
			schedule_parse(context, field, &schedule_where, &task->schedule);
		else
			report(context, field, &schedule_where,
			       "only for a task of the main stage (no lifecycle:): a scheduled "
			       "task runs at its times, not at a stage of its group");
	}
	/* A scheduled run is a one-shot: by default retried on failure, as a
	 * prestart or poststart one-shot is, not restarted forever. */
	task->restart = restart_policy_merge(
	    context, task->schedule.set ? STAGE_POSTSTART_EPHEMERAL : task->stage, &group->restart,
	    group->owner, &task_restart, &where);
	if (task->schedule.set && task->restart.policy == RESTART_ALWAYS)
		report(context, field ? field : node, &(struct where){owner, "restart.policy"},
		       "always does not go with schedule: each run must end for the next to "
		       "come; take on-failure or never");
	if ((field = map_lookup(&fields, "kill")))
		parse_kill(context, field, &(struct where){owner, "kill"}, task);
	if ((field = map_lookup(&fields, "resources")))
		resources_fields_parse(context, field, &(struct where){owner, "resources"},
				       &task_resources);
	task->resources =
	    resources_merge(context, &group->resources, group->owner, &task_resources, &where);
	/* After the stage: both are refused for tasks that do not keep running. */
	if ((field = map_lookup(&fields, "readiness"))) {
		task->readiness = xcalloc(1, sizeof(*task->readiness));
		readiness_parse(context, field, &(struct where){owner, "readiness"}, task->stage,
				task->readiness);
	}
	if ((field = map_lookup(&fields, "health"))) {
		task->health = xcalloc(1, sizeof(*task->health));
		health_parse(context, field, &(struct where){owner, "health"}, task->stage,
			     task->health);
	}
	if ((field = map_lookup(&fields, "isolation")))
		isolation_fields_parse(context, field, &(struct where){owner, "isolation"},
				       &task_isolation);
	task->isolation =
	    isolation_merge(context, &group->isolation, group->owner, &task_isolation, &where);
	isolation_network_merge(context, &group->isolation, group->owner, &task_isolation, &where,
				group->network, &task->isolation);
	isolation_fields_free(&task_isolation);
	check_notify_reachable(context, map_lookup(&fields, "readiness"), owner, task);
	check_probe_inside(context, map_lookup(&fields, "readiness"), owner, "readiness",
			   &readiness_of(task)->probe, &task->isolation);
	check_probe_inside(context, map_lookup(&fields, "health"), owner, "health",
			   &health_of(task)->probe, &task->isolation);
	/* After isolation: CDI devices need the merged mount namespace. */
	if ((field = map_lookup(&fields, "cdi")))
		cdi_fields_parse(context, field, &(struct where){owner, "cdi"}, &task_cdi);
	task->cdi = cdi_merge(context, &group->cdi, group->owner, &task_cdi, owner,
			      task->isolation.namespaces);
	cdi_fields_free(&task_cdi);
	struct log_fields log = group->log;
	if ((field = map_lookup(&fields, "log")))
		log_fields_parse(context, field, &(struct where){owner, "log"}, &log);
	task->log_mode = log.mode;
	task->log_history = log.history;
	task->log_dir = log.dir ? xstrdup(log.dir) : NULL;
	task->log_max_size = log.max_size;
	task->log_keep = log.keep;
	task->log_shared_dir = log.shared_dir;
	task->log_rate_limit = log.rate_limit;
	task->log_separate_streams = log.separate_streams;
	task->task_dirs = group->task_dirs;
	if ((field = map_lookup(&fields, "task_dirs")))
		expect_bool(context, field, &(struct where){owner, "task_dirs"}, &task->task_dirs);
	if ((field = map_lookup(&fields, "instances"))) {
		struct where instances_where = {owner, "instances"};
		const char *text = expect_string(context, field, &instances_where);
		char *end;
		unsigned long count = text ? strtoul(text, &end, 10) : 0;
		if (text &&
		    (!*text || *end || text[0] == '-' || count < 1 || count > TASK_INSTANCES_MAX))
			report(context, field, &instances_where,
			       "must be a whole number from 1 to %d, not %s", TASK_INSTANCES_MAX,
			       quote(text, field->data.scalar.length).text);
		else if (text)
			task->instances = (unsigned)count;
	}
	if (!task->instances)
		refuse_instance_templates(context, task);
	if ((field = map_lookup(&fields, "update")))
		update_parse(context, field, &(struct where){owner, "update"},
			     map_lookup(&fields, "instances") != NULL, &task->update);
	if ((field = map_lookup(&fields, "oom_score_adj")))
		parse_oom_score_adj(context, field, &(struct where){owner, "oom_score_adj"}, task);
	bool autostart = true;
	if ((field = map_lookup(&fields, "autostart")))
		expect_bool(context, field, &(struct where){owner, "autostart"}, &autostart);
	/* A scheduled task waits for its times (or `corral start`). */
	task->manual_start = !autostart || task->schedule.set;
	if ((field = map_lookup(&fields, "hooks")))
		hooks_parse(context, field, &(struct where){owner, "hooks"}, &task_hooks);
	hooks_merge(&group->hooks, &task_hooks, &task->hooks, &task->hook_count);
	hook_list_free(&task_hooks);
	if ((field = map_lookup(&fields, "after")))
		dependencies_parse(context, field, &(struct where){owner, "after"}, task);
	if ((field = map_lookup(&fields, "wait_for")))
		wait_for_parse(context, field, &(struct where){owner, "wait_for"}, task);
	if ((field = map_lookup(&fields, "control")))
		task_control_rights_parse(context, field, &(struct where){owner, "control"},
					  &task->control_rights);
	if ((field = map_lookup(&fields, "watch")))
		watches_parse(context, field, &(struct where){owner, "watch"}, task);
	if (!task->env) /* always a vector, so users can just walk it */
		task->env = xcalloc(1, sizeof(*task->env));
	map_entries_free(&fields);
}
