/* A unit's directories (RuntimeDirectory= and its kin, made by a prestart
 * task) and its cgroup limits (MemoryMax=, CPUQuota=, TasksMax=...). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/text_buffer.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "cli/import/import_names.h"
#include "cli/import/import_systemd.h"
#include "cli/import/shell_words.h"
#include "cli/import/systemd_values.h"
#include "cli/import/systemd_words.h"

struct directory_kind {
	const char *key, *mode_key, *root;
	bool owned; /* chowned to User= */
};

static const struct directory_kind directory_kinds[] = {
    {"RuntimeDirectory", "RuntimeDirectoryMode", "/run", true},
    {"StateDirectory", "StateDirectoryMode", "/var/lib", true},
    {"CacheDirectory", "CacheDirectoryMode", "/var/cache", true},
    {"LogsDirectory", "LogsDirectoryMode", "/var/log", true},
    {"ConfigurationDirectory", "ConfigurationDirectoryMode", "/etc", false},
};

/* A one-shot task `name` of the unit's group that runs `script` with
 * /bin/sh at the lifecycle `hook` (prestart, poststop). */
static void shell_task(struct systemd_unit *unit, const char *name, const char *comment,
		       const char *script, const char *hook)
{
	struct ytree_node *task = ytree_set(systemd_tasks(unit), name, ytree_map());
	ytree_comment(systemd_tasks(unit), name, "%s", comment);
	struct ytree_node *command = ytree_set(task, "command", ytree_list());
	ytree_append(command, ytree_string("/bin/sh"));
	ytree_append(command, ytree_string("-c"));
	ytree_append(command, ytree_string(script));
	struct ytree_node *lifecycle = ytree_set(task, "lifecycle", ytree_map());
	lifecycle->flow = true;
	ytree_set(lifecycle, "hook", ytree_plain(hook));
}

/* RuntimeDirectory= and its kin: a prestart task makes them (as root, then
 * hands them to User=), and RuntimeDirectory= is removed by a poststop
 * task unless RuntimeDirectoryPreserve= keeps it. */
void import_directories(struct systemd_unit *unit)
{
	struct text_buffer script;
	text_buffer_init(&script, 128);
	struct text_buffer removal;
	text_buffer_init(&removal, 64);
	for (size_t k = 0; k < sizeof(directory_kinds) / sizeof(directory_kinds[0]); k++) {
		const struct directory_kind *kind = &directory_kinds[k];
		size_t count;
		struct unit_setting **lines = unit_list(&unit->file, "Service", kind->key, &count);
		struct unit_setting *mode = unit_last(&unit->file, "Service", kind->mode_key);
		for (size_t i = 0; i < count; i++) {
			char *value = unit_value(unit, lines[i]), *save = NULL;
			for (char *word = strtok_r(value, " \t", &save); word;
			     word = strtok_r(NULL, " \t", &save)) {
				char *colon = strchr(word, ':');
				if (colon) /* NAME:SYMLINK, systemd 250 */
					*colon = '\0';
				char *path = xasprintf("%s/%s", kind->root, word);
				if (script.length)
					text_buffer_put_literal(&script, "; ");
				text_buffer_put_literal(&script, "install -d -m ");
				const char *mode_text = mode ? mode->value : "0755";
				text_buffer_put(&script, mode_text, strlen(mode_text));
				if (kind->owned && unit->user) {
					text_buffer_put_literal(&script, " -o ");
					text_buffer_put(&script, unit->user, strlen(unit->user));
					if (unit->group_name) {
						text_buffer_put_literal(&script, " -g ");
						text_buffer_put(&script, unit->group_name,
								strlen(unit->group_name));
					}
				}
				char *argv[] = {path, NULL};
				text_buffer_put_char(&script, ' ');
				shell_words_put(&script, argv, false);
				if (k == 0) {
					if (removal.length)
						text_buffer_put_char(&removal, ' ');
					else
						text_buffer_put_literal(&removal, "rm -rf ");
					shell_words_put(&removal, argv, false);
				}
				free(path);
			}
			free(value);
		}
		free(lines);
	}
	struct unit_setting *preserve =
	    unit_last(&unit->file, "Service", "RuntimeDirectoryPreserve");
	if (script.length) {
		text_buffer_put_char(&script, '\0');
		size_t length;
		char *text = text_buffer_take(&script, &length, NULL);
		shell_task(unit, "directories",
			   "RuntimeDirectory= and its kin: made before the unit starts, as "
			   "systemd makes them",
			   text, "prestart");
		free(text);
	} else {
		free(text_buffer_take(&script, &(size_t){0}, NULL));
	}
	bool keep = preserve && strcmp(preserve->value, "no") != 0;
	if (removal.length && !keep) {
		text_buffer_put_char(&removal, '\0');
		size_t length;
		char *text = text_buffer_take(&removal, &length, NULL);
		shell_task(unit, "remove-runtime-directory",
			   "RuntimeDirectory= is removed once the unit has stopped", text,
			   "poststop");
		free(text);
	} else {
		free(text_buffer_take(&removal, &(size_t){0}, NULL));
	}
}

/* --- resources --------------------------------------------------------- */

static void size_resource(struct systemd_unit *unit, const char *key, const char *field)
{
	struct unit_setting *setting = unit_last(&unit->file, "Service", key);
	if (!setting)
		return;
	uint64_t bytes;
	bool infinite;
	if (systemd_size_bytes(setting->value, &bytes, &infinite) < 0) {
		unit_drop(unit, setting,
			  "corral's resources take a size (512M), not a share of the machine");
		return;
	}
	if (infinite)
		return;
	struct ytree_node *resources = ytree_child_map(unit->task, "resources");
	resources->flow = true;
	ytree_set(resources, field, ytree_plainf("%llu", (unsigned long long)bytes));
}

void import_resources(struct systemd_unit *unit)
{
	size_resource(unit, "MemoryMax", "memory");
	size_resource(unit, "MemoryLimit", "memory");
	size_resource(unit, "MemoryHigh", "memory_high");
	size_resource(unit, "MemorySwapMax", "memory_swap");
	struct unit_setting *quota = unit_last(&unit->file, "Service", "CPUQuota");
	if (quota && *quota->value) {
		char *end;
		double percent = strtod(quota->value, &end);
		if (*end != '%' || percent <= 0)
			unit_drop(unit, quota, "not a percentage");
		else {
			struct ytree_node *resources = ytree_child_map(unit->task, "resources");
			resources->flow = true;
			double cores = percent / 100;
			ytree_set(resources, "cpu",
				  ytree_plainf("%.3g", cores < 0.01 ? 0.01 : cores));
		}
	}
	struct unit_setting *weight = unit_last(&unit->file, "Service", "CPUWeight");
	if (weight && isdigit((unsigned char)weight->value[0]))
		ytree_set(ytree_child_map(unit->task, "resources"), "cpu_weight",
			  ytree_plain(weight->value));
	else if (weight)
		unit_drop(unit, weight, "corral's cpu_weight is a number from 1 to 10000");
	struct unit_setting *io = unit_last(&unit->file, "Service", "IOWeight");
	if (io)
		ytree_set(ytree_child_map(unit->task, "resources"), "io_weight",
			  ytree_plain(io->value));
	struct unit_setting *cpus = unit_last(&unit->file, "Service", "AllowedCPUs");
	if (cpus) {
		char *value = xstrdup(cpus->value);
		for (char *p = value; *p; p++)
			if (*p == ' ')
				*p = ',';
		ytree_set(ytree_child_map(unit->task, "resources"), "cpuset", ytree_string(value));
		free(value);
	}
	struct unit_setting *tasks = unit_last(&unit->file, "Service", "TasksMax");
	if (tasks && isdigit((unsigned char)tasks->value[0]) && !strchr(tasks->value, '%'))
		ytree_set(ytree_child_map(unit->task, "resources"), "pids",
			  ytree_plain(tasks->value));
	else if (tasks && strcmp(tasks->value, "infinity") == 0)
		ytree_comment(systemd_tasks(unit), unit->name, "TasksMax=infinity: no pids limit");
	else if (tasks)
		unit_drop(unit, tasks, "corral's pids is a number of processes");
	struct unit_setting *oom = unit_last(&unit->file, "Service", "OOMScoreAdjust");
	if (oom)
		ytree_set(unit->task, "oom_score_adj", ytree_plain(oom->value));
	if (ytree_get(unit->task, "resources"))
		ytree_get(unit->task, "resources")->flow = true;
}
