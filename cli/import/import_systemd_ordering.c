/* Ordering between the units imported together. systemd's After= orders
 * two units that both start; Requires= (BindsTo=, Requisite=) also fails
 * the dependent when the other fails; Wants= only pulls the other in.
 * corral's `after:` waits for the task to be ready (a oneshot: completed),
 * `required: false` when nothing but After= or Wants= ties them, so that a
 * dependency that failed does not hold the dependent back. */
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "cli/import/import_systemd.h"

/* Units systemd starts on its own: under corral there is nothing to wait
 * for, the container or host being up already. */
static bool is_system_unit(const char *name)
{
	static const char *const names[] = {"network.target",
					    "network-online.target",
					    "local-fs.target",
					    "remote-fs.target",
					    "time-sync.target",
					    "nss-lookup.target",
					    "nss-user-lookup.target",
					    "sysinit.target",
					    "basic.target",
					    "multi-user.target",
					    "syslog.target",
					    "systemd-journald.socket",
					    "systemd-networkd.service",
					    "systemd-resolved.service",
					    "paths.target",
					    "sockets.target",
					    "timers.target",
					    "shutdown.target",
					    "rpcbind.target",
					    "network-pre.target",
					    "systemd-tmpfiles-setup.service",
					    "dbus.service",
					    "dbus.socket",
					    NULL};
	for (size_t i = 0; names[i]; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static struct systemd_unit *unit_named(struct systemd_unit *units, size_t count, const char *name)
{
	for (size_t i = 0; i < count; i++) {
		if (strcmp(units[i].file.name, name) == 0)
			return &units[i];
		/* "redis-server" names redis-server.service too. */
		size_t length = strlen(name);
		if (strncmp(units[i].file.name, name, length) == 0 &&
		    strcmp(units[i].file.name + length, ".service") == 0)
			return &units[i];
	}
	return NULL;
}

/* Whether any of KEYS of UNIT lists NAME (marking them used). */
static bool lists(struct systemd_unit *unit, const char *const *keys, const char *name)
{
	bool found = false;
	for (size_t k = 0; keys[k]; k++) {
		size_t count;
		struct unit_setting **settings = unit_list(&unit->file, "Unit", keys[k], &count);
		for (size_t i = 0; i < count && !found; i++) {
			char *copy = xstrdup(settings[i]->value), *save = NULL;
			for (char *word = strtok_r(copy, " \t", &save); word && !found;
			     word = strtok_r(NULL, " \t", &save))
				found = strcmp(word, name) == 0;
			free(copy);
		}
		free(settings);
	}
	return found;
}

static const char *const requiring_keys[] = {"Requires", "BindsTo", "Requisite", NULL};

static void add_after_to(struct ytree_node *task, struct systemd_unit *other, bool required)
{
	struct ytree_node *after = ytree_child_map(task, "after");
	char *target = xasprintf("%s/%s", other->name, other->name);
	struct ytree_node *entry = ytree_set(after, target, ytree_map());
	entry->flow = true;
	ytree_set(entry, "condition", ytree_plain(other->oneshot ? "completed" : "ready"));
	if (!required)
		ytree_set(entry, "required", ytree_plain("false"));
	free(target);
}

/* The main task waits for OTHER, and so do the prestart one-shots
 * (ExecStartPre=, the directories), which systemd runs after OTHER too:
 * a migration before the app needs the database up. */
static void add_after(struct systemd_unit *unit, struct systemd_unit *other)
{
	bool required = lists(unit, requiring_keys, other->file.name);
	add_after_to(unit->task, other, required);
	struct ytree_node *tasks = systemd_tasks(unit);
	for (size_t i = 0; i < tasks->count; i++) {
		struct ytree_node *lifecycle = ytree_get(tasks->entries[i].value, "lifecycle");
		struct ytree_node *hook = lifecycle ? ytree_get(lifecycle, "hook") : NULL;
		if (hook && strcmp(hook->text, "prestart") == 0)
			add_after_to(tasks->entries[i].value, other, required);
	}
}

/* Each word of KEY in UNIT's [Unit], with its setting. */
typedef void (*word_visitor)(struct systemd_unit *unit, struct unit_setting *setting,
			     const char *word, void *context);

static void each_word(struct systemd_unit *unit, const char *key, word_visitor visit, void *context)
{
	size_t count;
	struct unit_setting **settings = unit_list(&unit->file, "Unit", key, &count);
	for (size_t i = 0; i < count; i++) {
		char *copy = xstrdup(settings[i]->value), *save = NULL;
		for (char *word = strtok_r(copy, " \t", &save); word;
		     word = strtok_r(NULL, " \t", &save))
			visit(unit, settings[i], word, context);
		free(copy);
	}
	free(settings);
}

struct ordering {
	struct systemd_unit *units;
	size_t count;
	const char *key;
};

static void visit_after(struct systemd_unit *unit, struct unit_setting *setting, const char *word,
			void *context)
{
	struct ordering *ordering = context;
	struct systemd_unit *other = unit_named(ordering->units, ordering->count, word);
	if (other && other != unit) {
		add_after(unit, other);
	} else if (is_system_unit(word)) {
		ytree_comment(ytree_get(unit->group, "tasks"), unit->name,
			      "%s=%s: systemd's own; under corral there is nothing to wait for",
			      ordering->key, word);
	} else if (!other) {
		import_drop(unit->report, setting->file, setting->line, setting_text(setting),
			    "%s is not imported with it: import it too (corral import %s %s), or "
			    "wait for it with wait_for:",
			    word, unit->file.name, word);
	}
}

static void visit_before(struct systemd_unit *unit, struct unit_setting *setting, const char *word,
			 void *context)
{
	struct ordering *ordering = context;
	struct systemd_unit *other = unit_named(ordering->units, ordering->count, word);
	if (other && other != unit)
		add_after(other, unit);
	else if (is_system_unit(word))
		ytree_comment(ytree_get(unit->group, "tasks"), unit->name,
			      "Before=%s: systemd's own; nothing waits for it under corral", word);
	else if (!other)
		import_drop(unit->report, setting->file, setting->line, setting_text(setting),
			    "%s is not imported with it", word);
}

/* Requires=/Wants= without After=: systemd starts both at once. */
static void visit_pulled(struct systemd_unit *unit, struct unit_setting *setting, const char *word,
			 void *context)
{
	struct ordering *ordering = context;
	struct systemd_unit *other = unit_named(ordering->units, ordering->count, word);
	static const char *const after_keys[] = {"After", NULL};
	if (other && other != unit) {
		if (!lists(unit, after_keys, word))
			ytree_comment(ytree_get(unit->group, "tasks"), unit->name,
				      "%s=%s without After=: both start together, as in systemd",
				      ordering->key, word);
	} else if (is_system_unit(word)) {
		ytree_comment(ytree_get(unit->group, "tasks"), unit->name,
			      "%s=%s: systemd's own; nothing to start under corral", ordering->key,
			      word);
	} else if (!other) {
		import_drop(unit->report, setting->file, setting->line, setting_text(setting),
			    "%s is not imported with it: import it too (corral import %s %s)", word,
			    unit->file.name, word);
	}
}

void systemd_import_ordering(struct systemd_unit *units, size_t count)
{
	struct ordering ordering = {units, count, NULL};
	for (size_t i = 0; i < count; i++) {
		ordering.key = "After";
		each_word(&units[i], "After", visit_after, &ordering);
		ordering.key = "Before";
		each_word(&units[i], "Before", visit_before, &ordering);
		static const char *const pulling[] = {"Requires", "Wants", "BindsTo", "Requisite"};
		for (size_t k = 0; k < sizeof(pulling) / sizeof(pulling[0]); k++) {
			ordering.key = pulling[k];
			each_word(&units[i], pulling[k], visit_pulled, &ordering);
		}
		struct unit_setting *part_of = unit_last(&units[i].file, "Unit", "PartOf");
		if (part_of)
			import_drop(units[i].report, part_of->file, part_of->line,
				    setting_text(part_of),
				    "corral stops a task with its own group only; `corral stop` "
				    "names what to stop");
	}
}
