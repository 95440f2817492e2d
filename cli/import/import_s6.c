/* `corral import` of an s6-overlay tree (s6-overlay's README): v3's
 * s6-rc.d service definitions (type longrun, oneshot or bundle; run,
 * finish, up, down, dependencies.d, notification-fd, timeout-up,
 * timeout-down, down-signal; the user bundle says what starts) and v2's
 * services.d (longruns) and cont-init.d / cont-finish.d (scripts run in
 * order before the services and after them). All go into one group, as
 * s6-overlay runs them in one container. */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/regular_file.h"
#include "base/xmalloc.h"
#include "cli/import/import_names.h"
#include "cli/import/import_s6.h"
#include "cli/import/import_sources.h"

/* --- v3: s6-rc.d --------------------------------------------------- */

/* s6-overlay's own services (base, its legacy bundles): nothing to wait
 * for under corral. */
static bool is_overlay_service(const char *name)
{
	static const char *const names[] = {"base",
					    "legacy-cont-init",
					    "legacy-services",
					    "fix-attrs",
					    "s6rc-oneshot-runner",
					    "s6rc-fdholder",
					    "user",
					    "user2",
					    NULL};
	for (size_t i = 0; names[i]; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static char *service_type(struct s6 *import, const char *name)
{
	char *dir = xasprintf("%s/%s", import->rc_dir, name);
	char *type = s6_read_small(dir, "type");
	free(dir);
	return type;
}

/* The members of a bundle (contents.d/ or a contents file). */
static char **bundle_contents(const char *dir)
{
	char *contents_dir = xasprintf("%s/contents.d", dir);
	char **names = s6_entries(contents_dir);
	free(contents_dir);
	char *contents = s6_read_small(dir, "contents");
	if (contents) {
		size_t count = string_vector_length(names);
		char *save = NULL;
		for (char *word = strtok_r(contents, " \t\n", &save); word;
		     word = strtok_r(NULL, " \t\n", &save)) {
			names = xreallocarray(names, count + 2, sizeof(*names));
			names[count++] = xstrdup(word);
			names[count] = NULL;
		}
		free(contents);
	}
	return names;
}

/* after: SERVICE, until it completed (a oneshot) or is ready (a longrun:
 * started, or its notification fd said so). */
static void add_after(struct s6 *import, struct ytree_node *task, const char *service)
{
	char *type = service_type(import, service);
	struct ytree_node *after = ytree_child_map(task, "after");
	after->flow = true;
	char *name = import_config_name(service);
	ytree_set(after, name,
		  ytree_plain(type && strcmp(type, "oneshot") == 0 ? "completed" : "ready"));
	free(name);
	free(type);
}

/* NAME's dependencies, bundles replaced by their members. */
static void add_dependencies(struct s6 *import, struct ytree_node *task, const char *dir,
			     const char *service)
{
	char *deps_dir = xasprintf("%s/dependencies.d", dir);
	char **names = s6_entries(deps_dir);
	free(deps_dir);
	char *file = s6_read_small(dir, "dependencies");
	size_t count = string_vector_length(names);
	if (file) {
		char *save = NULL;
		for (char *word = strtok_r(file, " \t\n", &save); word;
		     word = strtok_r(NULL, " \t\n", &save)) {
			names = xreallocarray(names, count + 2, sizeof(*names));
			names[count++] = xstrdup(word);
			names[count] = NULL;
		}
		free(file);
	}
	for (size_t i = 0; names[i]; i++) {
		if (is_overlay_service(names[i]))
			continue;
		char *type = service_type(import, names[i]);
		if (!type) {
			char *path = xasprintf("%s/dependencies.d/%s", dir, names[i]);
			s6_drop(import, path, names[i], "%s depends on %s, which is not in %s",
				service, names[i], import->rc_dir);
			free(path);
			continue;
		}
		if (strcmp(type, "bundle") == 0) {
			char *bundle_dir = xasprintf("%s/%s", import->rc_dir, names[i]);
			char **members = bundle_contents(bundle_dir);
			for (size_t m = 0; members[m]; m++)
				add_after(import, task, members[m]);
			s6_free_entries(members);
			free(bundle_dir);
		} else {
			add_after(import, task, names[i]);
		}
		free(type);
	}
	if (ytree_get(task, "after"))
		ytree_comment(
		    task, "after",
		    "dependencies.d: a longrun is waited for until ready (started, without "
		    "notification-fd), a oneshot until it completed");
	s6_free_entries(names);
}

/* An up or down file is one execline command line; a plain one is
 * read as its words, anything else handed to execlineb. */
static struct ytree_node *execline_command(const char *text, struct ytree_node *task,
					   const char *key)
{
	bool plain = true;
	for (const char *p = text; *p; p++)
		if (strchr("{}\"'\\$;\n", *p))
			plain = false;
	struct ytree_node *command = ytree_list();
	if (plain) {
		char *copy = xstrdup(text), *save = NULL;
		for (char *word = strtok_r(copy, " \t", &save); word;
		     word = strtok_r(NULL, " \t", &save))
			ytree_append(command, ytree_string(word));
		free(copy);
		return command;
	}
	ytree_append(command, ytree_string("execlineb"));
	ytree_append(command, ytree_string("-Pc"));
	ytree_append(command, ytree_string(text));
	ytree_comment(task, key,
		      "an execline script: the image needs execlineb (s6-overlay has it)");
	return command;
}

/* Files of a service directory that are read, and those that are known
 * but have no equivalent. */
static void report_other_files(struct s6 *import, const char *dir)
{
	static const char *const read_files[] = {"type",
						 "run",
						 "finish",
						 "up",
						 "down",
						 "dependencies.d",
						 "dependencies",
						 "notification-fd",
						 "timeout-up",
						 "timeout-down",
						 "down-signal",
						 "contents.d",
						 "contents",
						 "timeout-kill",
						 "data",
						 "env",
						 NULL};
	static const struct {
		const char *file, *why;
	} unsupported[] = {
	    {"producer-for", "corral collects every task's output itself (log.dir for files)"},
	    {"consumer-for", "corral collects every task's output itself (log.dir for files)"},
	    {"pipeline-name", "corral collects every task's output itself (log.dir for files)"},
	    {"max-death-tally", "corral keeps no death tally; restart.attempts bounds restarts"},
	    {"flag-essential", "corral stops any task at shutdown"},
	    {"lock-fd", "corral holds no lock for a task"},
	    {"instance", "s6 instances: write instances: N"},
	    {"instances", "s6 instances: write instances: N"},
	    {"template", "s6 instances: write instances: N"},
	};
	char **names = s6_entries(dir);
	for (size_t i = 0; names[i]; i++) {
		bool known = false;
		for (size_t r = 0; read_files[r] && !known; r++)
			known = strcmp(names[i], read_files[r]) == 0;
		if (known)
			continue;
		const char *why = "corral has no equivalent";
		for (size_t u = 0; u < sizeof(unsupported) / sizeof(unsupported[0]); u++)
			if (strcmp(names[i], unsupported[u].file) == 0)
				why = unsupported[u].why;
		char *path = xasprintf("%s/%s", dir, names[i]);
		s6_drop(import, path, names[i], "%s", why);
		free(path);
	}
	s6_free_entries(names);
}

static void import_v3_service(struct s6 *import, const char *name, bool started)
{
	char *dir = xasprintf("%s/%s", import->rc_dir, name);
	char *type = s6_read_small(dir, "type");
	char *origin = xasprintf("%s (%s)", dir, type ? type : "no type");
	if (!type) {
		import_error(import->report, dir, 0, "no type file: not an s6-rc service");
	} else if (strcmp(type, "longrun") == 0) {
		struct ytree_node *task = s6_new_task(import, name, origin);
		char *run = xasprintf("%s/run", dir);
		if (!s6_is_file(run))
			import_error(import->report, dir, 0, "a longrun without run");
		ytree_set(task, "command", s6_script_command(run, task));
		free(run);
		char *fd = s6_read_small(dir, "notification-fd");
		struct ytree_node *kill = ytree_map();
		kill->flow = true;
		if (fd) {
			struct ytree_node *readiness = ytree_set(task, "readiness", ytree_map());
			readiness->flow = true;
			ytree_set(readiness, "notify", ytree_plain("fd"));
			ytree_set(readiness, "fd", ytree_plain(fd));
			s6_milliseconds(import, dir, "timeout-up", readiness, "timeout", task,
					"readiness");
			free(fd);
		} else {
			char *timeout = s6_read_small(dir, "timeout-up");
			if (timeout)
				ytree_comment(
				    task, "command",
				    "timeout-up without notification-fd: up once started");
			free(timeout);
		}
		s6_longrun_restart(task);
		char *signal = s6_read_small(dir, "down-signal");
		if (signal) {
			char *name_text = strncmp(signal, "SIG", 3) == 0
					      ? xstrdup(signal)
					      : xasprintf("SIG%s", signal);
			ytree_set(kill, "signal", ytree_string(name_text));
			free(name_text);
			free(signal);
		}
		s6_milliseconds(import, dir, "timeout-down", kill, "timeout", task, "kill");
		if (kill->count)
			ytree_set(task, "kill", kill);
		else
			ytree_free(kill);
		char *finish = xasprintf("%s/finish", dir);
		if (s6_is_file(finish))
			s6_add_finish_hook(task, finish);
		free(finish);
		add_dependencies(import, task, dir, name);
		if (!started)
			ytree_set(task, "autostart", ytree_plain("false"));
		report_other_files(import, dir);
	} else if (strcmp(type, "oneshot") == 0) {
		struct ytree_node *task = s6_new_task(import, name, origin);
		char *up = s6_read_small(dir, "up");
		if (!up)
			import_error(import->report, dir, 0, "a oneshot without up");
		ytree_set(task, "command",
			  up ? execline_command(up, task, "command") : ytree_list());
		free(up);
		struct ytree_node *restart = ytree_set(task, "restart", ytree_map());
		restart->flow = true;
		ytree_set(restart, "policy", ytree_plain("never"));
		char *timeout = s6_read_small(dir, "timeout-up");
		if (timeout && strcmp(timeout, "0") != 0) {
			char *path = xasprintf("%s/timeout-up", dir);
			s6_drop(import, path, "timeout-up",
				"corral does not bound how long a one-shot "
				"runs");
			free(path);
		}
		free(timeout);
		char *down = s6_read_small(dir, "down");
		if (down) {
			char *path = xasprintf("%s/down", dir);
			s6_drop(import, path, "down",
				"corral runs nothing when a completed one-shot is brought down; a "
				"poststop task runs at the group's end");
			free(path);
			free(down);
		}
		add_dependencies(import, task, dir, name);
		if (!started)
			ytree_set(task, "autostart", ytree_plain("false"));
		report_other_files(import, dir);
	} else if (strcmp(type, "bundle") != 0) {
		import_error(import->report, dir, 0, "type %s: not longrun, oneshot or bundle",
			     type);
	}
	free(origin);
	free(type);
	free(dir);
}

/* Whether the user bundle (or what it holds, through bundles and
 * dependencies) starts NAME. */
static bool started_by_user(struct s6 *import, const char *name, unsigned depth)
{
	if (depth > 32)
		return false;
	static const char *const bundles[] = {"user", "user2", NULL};
	for (size_t b = 0; bundles[b]; b++) {
		char *dir = xasprintf("%s/%s", import->rc_dir, bundles[b]);
		char **members = bundle_contents(dir);
		free(dir);
		bool found = false;
		for (size_t m = 0; members[m] && !found; m++)
			found = strcmp(members[m], name) == 0;
		s6_free_entries(members);
		if (found)
			return true;
	}
	/* A dependency of a started service starts too. */
	char **services = s6_entries(import->rc_dir);
	bool found = false;
	for (size_t s = 0; services[s] && !found; s++) {
		if (strcmp(services[s], name) == 0 || is_overlay_service(services[s]))
			continue;
		char *deps =
		    xasprintf("%s/%s/dependencies.d/%s", import->rc_dir, services[s], name);
		char *bundle = xasprintf("%s/%s/contents.d/%s", import->rc_dir, services[s], name);
		if ((s6_is_file(deps) || s6_is_file(bundle)) &&
		    started_by_user(import, services[s], depth + 1))
			found = true;
		free(deps);
		free(bundle);
	}
	s6_free_entries(services);
	return found;
}

static void import_v3(struct s6 *import)
{
	char **services = s6_entries(import->rc_dir);
	for (size_t i = 0; services[i]; i++) {
		if (is_overlay_service(services[i]))
			continue;
		bool started = started_by_user(import, services[i], 0);
		import_v3_service(import, services[i], started);
	}
	s6_free_entries(services);
}

/* The first of the places DIR may hold NAME in: itself, DIR/NAME,
 * DIR/etc/NAME, DIR/s6-overlay/NAME, DIR/etc/s6-overlay/NAME. */
static char *find_dir(const char *dir, const char *name)
{
	const char *base = strrchr(dir, '/');
	base = base ? base + 1 : dir;
	if (strcmp(base, name) == 0 && s6_is_dir(dir))
		return xstrdup(dir);
	static const char *const places[] = {"%s/%s", "%s/etc/%s", "%s/s6-overlay/%s",
					     "%s/etc/s6-overlay/%s", NULL};
	for (size_t i = 0; places[i]; i++) {
		char *path = NULL;
		if (strcmp(places[i], "%s/%s") == 0)
			path = xasprintf("%s/%s", dir, name);
		else if (strcmp(places[i], "%s/etc/%s") == 0)
			path = xasprintf("%s/etc/%s", dir, name);
		else if (strcmp(places[i], "%s/s6-overlay/%s") == 0)
			path = xasprintf("%s/s6-overlay/%s", dir, name);
		else
			path = xasprintf("%s/etc/s6-overlay/%s", dir, name);
		if (s6_is_dir(path))
			return path;
		free(path);
	}
	return NULL;
}

int s6_import(const char *path, struct ytree_node *config, struct import_report *report)
{
	char *absolute = realpath(path, NULL);
	if (!absolute) {
		import_error(report, path, 0, "cannot read: no such directory");
		return -1;
	}
	struct s6 import = {.report = report};
	struct ytree_node *groups = ytree_child_map(config, "groups");
	char *group_name = import_unique_group(groups, "s6");
	import.group = ytree_set(groups, group_name, ytree_map());
	ytree_comment(groups, group_name,
		      "%s: s6-overlay's services in one group; a oneshot or a cont-init.d script "
		      "that fails does not stop the others (S6_BEHAVIOUR_IF_STAGE2_FAILS=0)",
		      absolute);
	ytree_set(import.group, "on_failure", ytree_plain("ignore"));
	import.tasks = ytree_set(import.group, "tasks", ytree_map());
	size_t errors = report->errors;
	char *cont_init = find_dir(absolute, "cont-init.d");
	char *services = find_dir(absolute, "services.d");
	char *cont_finish = find_dir(absolute, "cont-finish.d");
	import.rc_dir = find_dir(absolute, "s6-rc.d");
	if (cont_init)
		s6_import_scripts(&import, cont_init, "prestart", "cont-init.d");
	if (import.rc_dir)
		import_v3(&import);
	if (services)
		s6_import_services_d(&import, services);
	if (cont_finish)
		s6_import_scripts(&import, cont_finish, "poststop", "cont-finish.d");
	if (!import.tasks->count && report->errors == errors)
		import_error(report, path, 0,
			     "no s6-rc.d service, services.d service or cont-init.d script found");
	free(cont_init);
	free(services);
	free(cont_finish);
	free(import.rc_dir);
	free(absolute);
	free(group_name);
	return report->errors > errors ? -1 : 0;
}
