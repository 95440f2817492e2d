/* `corral import` of a supervisord.conf (supervisord's "Configuration File"
 * documentation): [program:x] sections become tasks, each in a group of
 * its own or of its [group:], numprocs copies become `instances:` (or
 * tasks of their own when %(process_num) changes what they run), and the
 * %(name)s expansions are replaced as supervisord replaces them. */
#include <ctype.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "cli/import/import_names.h"
#include "cli/import/import_sources.h"
#include "cli/import/import_supervisord.h"
#include "cli/import/systemd_values.h"

extern char **environ;

void supervisord_drop(struct supervisord *import, const struct ini_value *value, const char *why,
		      ...)
{
	va_list arguments;
	va_start(arguments, why);
	char *reason = xvasprintf(why, arguments);
	va_end(arguments);
	char *setting = xasprintf("%s=%s", value->key, value->value);
	import_drop(import->report, value->file, value->line, setting, "%s", reason);
	free(setting);
	free(reason);
}

void supervisord_name_add(struct python_name **names, size_t *count, const char *name,
			  const char *value, bool number)
{
	for (size_t i = 0; i < *count; i++)
		if (strcmp((*names)[i].name, name) == 0) {
			free((char *)(*names)[i].value);
			(*names)[i].value = xstrdup(value);
			return;
		}
	*names = xreallocarray(*names, *count + 1, sizeof(**names));
	(*names)[(*count)++] = (struct python_name){xstrdup(name), xstrdup(value), number};
}

void supervisord_names_free(struct python_name *names, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free((char *)names[i].name);
		free((char *)names[i].value);
	}
	free(names);
}

/* VALUE expanded with `names`; on a name supervisord would not know, the
 * setting is reported and NULL returned. */
char *supervisord_expand(struct supervisord *import, const struct ini_value *value,
			 const struct python_name *names, size_t count)
{
	char missing[128];
	char *text = python_expand(value->value, names, count, missing, sizeof(missing));
	if (!text)
		import_error(import->report, value->file, value->line,
			     "%s: %s cannot be expanded (supervisord would not start either)",
			     value->key, missing);
	return text;
}

/* --- reading ----------------------------------------------------------- */

static int read_includes(struct supervisord *import, const char *main_path)
{
	struct ini_section *include = ini_section(&import->ini, "include");
	if (!include)
		return 0;
	struct ini_value *files = ini_get(include, "files");
	if (!files) {
		import_error(import->report, include->file, include->line,
			     "[include] without files =");
		return -1;
	}
	struct python_name *names = NULL;
	size_t count = 0;
	for (size_t i = 0; i < import->name_count; i++)
		supervisord_name_add(&names, &count, import->names[i].name, import->names[i].value,
				     false);
	supervisord_name_add(&names, &count, "here", include->here, false);
	char *patterns = supervisord_expand(import, files, names, count);
	supervisord_names_free(names, count);
	if (!patterns)
		return -1;
	const char *slash = strrchr(main_path, '/');
	char *base = slash ? xstrndup(main_path, (size_t)(slash - main_path)) : xstrdup(".");
	int result = 0;
	char *save = NULL;
	for (char *pattern = strtok_r(patterns, " \t\n", &save); pattern && result == 0;
	     pattern = strtok_r(NULL, " \t\n", &save)) {
		char *full =
		    pattern[0] == '/' ? xstrdup(pattern) : xasprintf("%s/%s", base, pattern);
		glob_t found;
		if (glob(full, 0, NULL, &found) == 0) {
			for (size_t i = 0; i < found.gl_pathc && result == 0; i++)
				result =
				    ini_file_read(&import->ini, found.gl_pathv[i], import->report);
			globfree(&found);
		}
		free(full);
	}
	free(patterns);
	free(base);
	return result;
}

static void add_global_env(void *context, const char *key, const char *value)
{
	struct supervisord *import = context;
	ytree_set(import->global_env, key, ytree_string(value));
	char *name = xasprintf("ENV_%s", key);
	supervisord_name_add(&import->names, &import->name_count, name, value, false);
	free(name);
}

/* [supervisord] and the sections of supervisord's own servers. */
static void import_daemon_sections(struct supervisord *import)
{
	import->global_env = ytree_map();
	struct ini_section *daemon = ini_section(&import->ini, "supervisord");
	if (daemon) {
		struct ini_value *environment = ini_get(daemon, "environment");
		if (environment) {
			char *text = supervisord_expand(import, environment, import->names,
							import->name_count);
			const char *why = NULL;
			if (text && python_key_value_pairs(text, add_global_env, import, &why) < 0)
				supervisord_drop(import, environment, "%s", why);
			free(text);
		}
		static const char *const own[] = {
		    "nodaemon", "logfile",   "logfile_maxbytes", "logfile_backups",
		    "loglevel", "pidfile",   "childlogdir",      "identifier",
		    "silent",   "nocleanup", "strip_ansi",       "umask",
		    NULL};
		for (size_t i = 0; own[i]; i++)
			ini_get(daemon, own[i]);
		struct ini_value *value;
		if ((value = ini_get(daemon, "user")))
			supervisord_drop(
			    import, value,
			    "corral runs as the user that starts it; give each task a user:");
		/* supervisord's defaults ask for no more than a process has. */
		if ((value = ini_get(daemon, "minfds")) && strtol(value->value, NULL, 10) > 1024)
			supervisord_drop(import, value,
					 "corral does not raise its own file limit; give a task "
					 "isolation.rlimits: {nofile: N}");
		if ((value = ini_get(daemon, "minprocs")) && strtol(value->value, NULL, 10) > 200)
			supervisord_drop(import, value,
					 "corral does not raise its own process limit; give a task "
					 "isolation.rlimits: {nproc: N}");
		if ((value = ini_get(daemon, "directory")))
			supervisord_drop(import, value, "give each task a cwd:");
	}
	for (size_t s = 0; s < import->ini.count; s++) {
		struct ini_section *section = &import->ini.sections[s];
		if (strcmp(section->name, "unix_http_server") == 0 ||
		    strcmp(section->name, "inet_http_server") == 0 ||
		    strcmp(section->name, "supervisorctl") == 0 ||
		    strncmp(section->name, "rpcinterface:", 13) == 0 ||
		    strcmp(section->name, "include") == 0)
			for (size_t v = 0; v < section->count; v++)
				section->values[v].used = true;
	}
}

static long program_priority(struct ini_section *section)
{
	for (size_t i = 0; i < section->count; i++)
		if (strcmp(section->values[i].key, "priority") == 0) {
			section->values[i].used = true;
			return strtol(section->values[i].value, NULL, 10);
		}
	return 999;
}

/* The [group:] that lists PROGRAM, or NULL. */
static struct ini_section *group_of(struct supervisord *import, const char *program)
{
	for (size_t s = 0; s < import->ini.count; s++) {
		struct ini_section *section = &import->ini.sections[s];
		if (strncmp(section->name, "group:", 6) != 0)
			continue;
		struct ini_value *programs = ini_get(section, "programs");
		if (!programs)
			continue;
		char *copy = xstrdup(programs->value), *save = NULL;
		bool found = false;
		for (char *word = strtok_r(copy, " ,\n", &save); word && !found;
		     word = strtok_r(NULL, " ,\n", &save))
			found = strcmp(word, program) == 0;
		free(copy);
		if (found)
			return section;
	}
	return NULL;
}

struct ordered_program {
	struct ini_section *section;
	long priority;
	size_t index;
};

static int compare_priority(const void *a, const void *b)
{
	const struct ordered_program *x = a, *y = b;
	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The programs of one corral group, lowest priority first, as supervisord
 * starts them (and stops them in reverse). */
static void import_group(struct supervisord *import, const char *group_name,
			 struct ordered_program *programs, size_t count, const char *comment)
{
	char *wanted = import_config_name(group_name);
	char *name = import_unique_group(import->groups, wanted);
	free(wanted);
	struct ytree_node *group = ytree_set(import->groups, name, ytree_map());
	if (comment)
		ytree_comment(import->groups, name, "%s", comment);
	qsort(programs, count, sizeof(*programs), compare_priority);
	bool ordered = false;
	for (size_t i = 1; i < count; i++)
		ordered |= programs[i].priority != programs[0].priority;
	if (ordered) {
		ytree_set(group, "order", ytree_plain("sequential"));
		ytree_comment(group, "order",
			      "priority: tasks written lowest first; they start together and stop "
			      "in reverse order, as supervisord stops them");
	}
	if (count == 1 && programs[0].priority != 999)
		ytree_comment(import->groups, name,
			      "priority=%ld: corral starts its groups together; write after: where "
			      "one program needs another first",
			      programs[0].priority);
	if (count > 1) {
		ytree_set(group, "on_failure", ytree_plain("ignore"));
		ytree_comment(group, "on_failure",
			      "as supervisord, a program that fails for good leaves the others "
			      "running");
	}
	struct ytree_node *tasks = ytree_set(group, "tasks", ytree_map());
	for (size_t i = 0; i < count; i++)
		supervisord_import_program(import, programs[i].section, group_name, tasks);
	free(name);
}

static void report_unused(struct supervisord *import)
{
	for (size_t s = 0; s < import->ini.count; s++) {
		struct ini_section *section = &import->ini.sections[s];
		for (size_t v = 0; v < section->count; v++)
			if (!section->values[v].used)
				supervisord_drop(import, &section->values[v],
						 "corral has no equivalent");
	}
}

int supervisord_import(const char *path, struct ytree_node *config, struct import_report *report)
{
	struct supervisord import = {.report = report};
	for (char **variable = environ; *variable; variable++) {
		char *equals = strchr(*variable, '=');
		if (!equals)
			continue;
		char *name = xasprintf("ENV_%.*s", (int)(equals - *variable), *variable);
		supervisord_name_add(&import.names, &import.name_count, name, equals + 1, false);
		free(name);
	}
	char host[256] = "";
	gethostname(host, sizeof(host));
	supervisord_name_add(&import.names, &import.name_count, "host_node_name", host, false);
	int result = ini_file_read(&import.ini, path, report);
	if (result == 0)
		result = read_includes(&import, path);
	if (result == 0) {
		import.groups = ytree_child_map(config, "groups");
		ytree_comment(config, "groups",
			      "from %s: corral exits once every group has finished; `corral run "
			      "--keep-running` stays up as supervisord does",
			      path);
		import_daemon_sections(&import);
		size_t errors = report->errors;
		/* [group:x] sections first, in the order written, then each
		 * program of no group, as a group of its own name. */
		for (size_t s = 0; s < import.ini.count; s++) {
			struct ini_section *section = &import.ini.sections[s];
			if (strncmp(section->name, "group:", 6) != 0)
				continue;
			struct ordered_program *members = NULL;
			size_t count = 0;
			for (size_t p = 0; p < import.ini.count; p++) {
				struct ini_section *program = &import.ini.sections[p];
				if (strncmp(program->name, "program:", 8) != 0 ||
				    group_of(&import, program->name + 8) != section)
					continue;
				members = xreallocarray(members, count + 1, sizeof(*members));
				members[count] = (struct ordered_program){
				    program, program_priority(program), count};
				count++;
			}
			struct ini_value *priority = ini_get(section, "priority");
			char *note = priority ? xasprintf("[%s] priority=%s: corral starts its "
							  "groups together; write after: where one "
							  "needs another first",
							  section->name, priority->value)
					      : NULL;
			if (count)
				import_group(&import, section->name + 6, members, count, note);
			else
				import_error(report, section->file, section->line,
					     "[%s] names no [program:] that is here",
					     section->name);
			free(note);
			free(members);
		}
		for (size_t s = 0; s < import.ini.count; s++) {
			struct ini_section *section = &import.ini.sections[s];
			if (strncmp(section->name, "eventlistener:", 14) == 0 ||
			    strncmp(section->name, "fcgi-program:", 13) == 0) {
				char *setting = xasprintf("[%s]", section->name);
				import_drop(report, section->file, section->line, setting,
					    "corral has no event listeners nor FastCGI sockets");
				free(setting);
				for (size_t v = 0; v < section->count; v++)
					section->values[v].used = true;
				continue;
			}
			if (strncmp(section->name, "program:", 8) != 0 ||
			    group_of(&import, section->name + 8))
				continue;
			struct ordered_program single = {section, program_priority(section), 0};
			import_group(&import, section->name + 8, &single, 1, NULL);
		}
		report_unused(&import);
		if (report->errors > errors)
			result = -1;
	}
	ytree_free(import.global_env);
	supervisord_names_free(import.names, import.name_count);
	ini_file_free(&import.ini);
	return result;
}
