/* One supervisord [program:x] into corral tasks: its command, environment,
 * restart, stop and log settings, and numprocs (supervisord's "Configuration
 * File" documentation, "[program:x] Section Settings"). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/xmalloc.h"
#include "cli/import/import_names.h"
#include "cli/import/import_supervisord.h"
#include "cli/import/systemd_values.h"

struct program {
	struct supervisord *import;
	struct ini_section *section;
	const char *program_name, *group_name;
	struct python_name *names;
	size_t name_count;
	long priority;
};

static const char *value_of(struct program *program, const char *key)
{
	struct ini_value *value = ini_get(program->section, key);
	return value ? value->value : NULL;
}

/* A value with the program's expansions; NULL when not written (or bad,
 * reported). */
static char *expanded(struct program *program, const char *key)
{
	struct ini_value *value = ini_get(program->section, key);
	return value
		   ? supervisord_expand(program->import, value, program->names, program->name_count)
		   : NULL;
}

static int boolean_value(struct program *program, const char *key, int fallback)
{
	struct ini_value *value = ini_get(program->section, key);
	if (!value)
		return fallback;
	static const char *const yes[] = {"yes", "true", "on", "1", NULL};
	static const char *const no[] = {"no", "false", "off", "0", NULL};
	for (size_t i = 0; yes[i]; i++)
		if (strcasecmp(value->value, yes[i]) == 0)
			return 1;
	for (size_t i = 0; no[i]; i++)
		if (strcasecmp(value->value, no[i]) == 0)
			return 0;
	supervisord_drop(program->import, value, "not a boolean supervisord reads");
	return fallback;
}

static long number_value(struct program *program, const char *key, long fallback)
{
	struct ini_value *value = ini_get(program->section, key);
	if (!value)
		return fallback;
	char *end;
	long number = strtol(value->value, &end, 10);
	if (*end || end == value->value) {
		supervisord_drop(program->import, value, "not a whole number");
		return fallback;
	}
	return number;
}

static void add_env(void *context, const char *key, const char *value)
{
	struct ytree_node *env = context;
	ytree_set(env, key, ytree_string(value));
}

static void import_restart(struct program *program, struct ytree_node *task)
{
	struct ini_value *autorestart = ini_get(program->section, "autorestart");
	struct ini_value *exitcodes = ini_get(program->section, "exitcodes");
	const char *mode = autorestart ? autorestart->value : "unexpected";
	long retries = number_value(program, "startretries", 3);
	long startsecs = number_value(program, "startsecs", 1);
	struct ytree_node *restart = ytree_set(task, "restart", ytree_map());
	const char *policy = "on-failure";
	if (strcasecmp(mode, "true") == 0 || strcasecmp(mode, "yes") == 0 ||
	    strcmp(mode, "1") == 0 || strcasecmp(mode, "on") == 0)
		policy = "always";
	else if (strcasecmp(mode, "false") == 0 || strcasecmp(mode, "no") == 0 ||
		 strcmp(mode, "0") == 0 || strcasecmp(mode, "off") == 0)
		policy = "never";
	else if (strcasecmp(mode, "unexpected") != 0)
		supervisord_drop(program->import, autorestart, "not true, false or unexpected");
	ytree_set(restart, "policy", ytree_plain(policy));
	if (strcmp(policy, "never") != 0) {
		/* supervisord gives up after `startretries` starts that each
		 * end within `startsecs`, waiting 1s, 2s, 3s... between them;
		 * corral after `attempts` restarts within `interval`: the
		 * window those quick failures take. */
		long window = 0;
		for (long k = 1; k <= retries; k++)
			window += startsecs + k;
		if (retries <= 0) {
			ytree_set(restart, "attempts", ytree_plain("0"));
		} else {
			ytree_set(restart, "attempts", ytree_plainf("%ld", retries));
			ytree_set(restart, "interval",
				  ytree_plainf("%lds", window > 0 ? window : 1));
			ytree_set(restart, "delay", ytree_plain("1s"));
			ytree_set(restart, "max_delay", ytree_plainf("%lds", retries));
		}
		ytree_set(restart, "mode", ytree_plain("fail"));
		ytree_comment(
		    task, "restart",
		    "startretries=%ld, startsecs=%ld: supervisord gives up after %ld starts "
		    "that each end within %lds; corral after %ld restarts within %lds",
		    retries, startsecs, retries, startsecs, retries, window);
	}
	if (strcmp(policy, "on-failure") == 0) {
		ytree_comment(task, "restart",
			      "autorestart=unexpected: exits not in exitcodes (%s) are restarted",
			      exitcodes ? exitcodes->value : "0");
		if (exitcodes) {
			bool zero = false;
			struct ytree_node *success = NULL;
			char *copy = xstrdup(exitcodes->value), *save = NULL;
			for (char *word = strtok_r(copy, " ,", &save); word;
			     word = strtok_r(NULL, " ,", &save)) {
				if (strcmp(word, "0") == 0) {
					zero = true;
					continue;
				}
				if (!success)
					success = ytree_set(restart, "success_exit", ytree_list());
				ytree_append(success, ytree_plain(word));
			}
			free(copy);
			if (!zero)
				supervisord_drop(program->import, exitcodes,
						 "exit code 0 is always a success to corral");
		}
	} else if (exitcodes) {
		ytree_comment(task, "restart", "exitcodes=%s: restarts do not depend on them here",
			      exitcodes->value);
	}
}

static void import_kill(struct program *program, struct ytree_node *task)
{
	struct ytree_node *kill = ytree_set(task, "kill", ytree_map());
	kill->flow = true;
	const char *signal = value_of(program, "stopsignal");
	if (signal) {
		char *name = strncasecmp(signal, "SIG", 3) == 0 ? xstrdup(signal)
								: xasprintf("SIG%s", signal);
		for (char *p = name; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		ytree_set(kill, "signal", ytree_string(name));
		free(name);
	}
	ytree_set(kill, "timeout", ytree_plainf("%lds", number_value(program, "stopwaitsecs", 10)));
	int stop_group = boolean_value(program, "stopasgroup", 0);
	int kill_group = boolean_value(program, "killasgroup", stop_group);
	ytree_set(kill, "mode", ytree_plain(stop_group ? "control-group" : "mixed"));
	if (!kill_group && ini_get(program->section, "killasgroup"))
		ytree_comment(task, "kill",
			      "killasgroup=false: corral's SIGKILL after the timeout still reaches "
			      "every process of the task");
}

static bool is_stdout(const char *path)
{
	return strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/fd/1") == 0 ||
	       strcmp(path, "/proc/self/fd/1") == 0 || strcmp(path, "/dev/stderr") == 0 ||
	       strcmp(path, "/dev/fd/2") == 0 || strcmp(path, "/proc/self/fd/2") == 0;
}

static void import_logs(struct program *program, struct ytree_node *task)
{
	int redirect = boolean_value(program, "redirect_stderr", 0);
	struct ytree_node *log = ytree_map();
	log->flow = true;
	if (!redirect) {
		ytree_set(log, "streams", ytree_plain("separate"));
		ytree_comment(
		    task, "log",
		    "redirect_stderr=false: stderr lines keep their stream (stderr | ...)");
	}
	const char *streams[] = {"stdout", "stderr"};
	for (size_t s = 0; s < 2; s++) {
		char key[64];
		snprintf(key, sizeof(key), "%s_logfile", streams[s]);
		char *path = expanded(program, key);
		struct ini_value *file = ini_get(program->section, key);
		snprintf(key, sizeof(key), "%s_logfile_maxbytes", streams[s]);
		struct ini_value *maxbytes = ini_get(program->section, key);
		snprintf(key, sizeof(key), "%s_logfile_backups", streams[s]);
		struct ini_value *backups = ini_get(program->section, key);
		snprintf(key, sizeof(key), "%s_capture_maxbytes", streams[s]);
		ini_get(program->section, key);
		snprintf(key, sizeof(key), "%s_events_enabled", streams[s]);
		if (boolean_value(program, key, 0))
			supervisord_drop(program->import, ini_get(program->section, key),
					 "corral sends no output events to listeners");
		snprintf(key, sizeof(key), "%s_syslog", streams[s]);
		if (boolean_value(program, key, 0))
			supervisord_drop(program->import, ini_get(program->section, key),
					 "corral writes task lines to its stdout, not to syslog");
		if (!path || strcasecmp(path, "AUTO") == 0 || is_stdout(path)) {
			free(path);
			continue;
		}
		if (strcasecmp(path, "NONE") == 0 || strcasecmp(path, "OFF") == 0) {
			ytree_comment(
			    task, "command",
			    "%s_logfile=NONE: corral still writes the lines to its stdout",
			    streams[s]);
			free(path);
			continue;
		}
		if (s == 1 && redirect) {
			free(path);
			continue;
		}
		const char *slash = strrchr(path, '/');
		if (!slash || path[0] != '/') {
			supervisord_drop(program->import, file, "not an absolute path");
			free(path);
			continue;
		}
		char *dir = xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
		if (!ytree_get(log, "dir")) {
			ytree_set(log, "dir", ytree_string(dir));
			ytree_comment(
			    task, "log",
			    "%s: corral writes DIR/GROUP/TASK.log (both streams), rotated "
			    "at max_size",
			    file->value);
			uint64_t bytes = 50 * 1024 * 1024;
			bool infinite;
			if (maxbytes) {
				char *upper = xstrdup(maxbytes->value);
				size_t length = strlen(upper);
				if (length > 1 && toupper((unsigned char)upper[length - 1]) == 'B')
					upper[length - 1] = '\0';
				if (systemd_size_bytes(upper, &bytes, &infinite) < 0)
					supervisord_drop(program->import, maxbytes, "not a size");
				free(upper);
			}
			if (bytes == 0) {
				supervisord_drop(program->import, maxbytes,
						 "corral always rotates; it keeps the default 10M");
			} else {
				ytree_set(
				    log, "max_size",
				    ytree_plainf(
					"%llu", (unsigned long long)(bytes < 4096 ? 4096 : bytes)));
			}
			if (backups) {
				long keep = strtol(backups->value, NULL, 10);
				ytree_set(log, "keep",
					  ytree_plainf("%ld", keep > 1000 ? 1000 : keep));
			}
		} else {
			ytree_comment(task, "log", "%s: in the same file as stdout's", file->value);
		}
		free(dir);
		free(path);
	}
	if (log->count)
		ytree_set(task, "log", log);
	else
		ytree_free(log);
}

/* One task of a program: `process_num` is its number (-1: one task that
 * stands for all, with instances: N). */
static void import_process(struct program *program, struct ytree_node *tasks, long process_num,
			   long numprocs)
{
	struct supervisord *import = program->import;
	char number[32];
	snprintf(number, sizeof(number), "%ld", process_num < 0 ? 0 : process_num);
	supervisord_name_add(&program->names, &program->name_count, "process_num", number, true);
	snprintf(number, sizeof(number), "%ld", numprocs);
	supervisord_name_add(&program->names, &program->name_count, "numprocs", number, true);

	char *task_name;
	if (process_num >= 0) {
		struct ini_value *raw = ini_get(program->section, "process_name");
		char *name =
		    raw ? supervisord_expand(import, raw, program->names, program->name_count)
			: xstrdup(program->program_name);
		task_name = import_config_name(name ? name : program->program_name);
		free(name);
	} else {
		ini_get(program->section, "process_name");
		task_name = import_config_name(program->program_name);
	}
	struct ytree_node *task = ytree_set(tasks, task_name, ytree_map());
	ytree_comment(tasks, task_name, "[%s] (%s:%u)", program->section->name,
		      program->section->file, program->section->line);

	/* The program's own environment first: supervisord expands it, then
	 * lets %(ENV_X)s of the other values see it. */
	struct ytree_node *env = ytree_map();
	for (size_t i = 0; i < import->global_env->count; i++)
		ytree_set(env, import->global_env->entries[i].key,
			  ytree_string(import->global_env->entries[i].value->text));
	struct ini_value *environment = ini_get(program->section, "environment");
	if (environment) {
		char *text =
		    supervisord_expand(import, environment, program->names, program->name_count);
		struct ytree_node *own = ytree_map();
		const char *why = NULL;
		if (text && python_key_value_pairs(text, add_env, own, &why) < 0)
			supervisord_drop(import, environment, "%s", why);
		for (size_t i = 0; i < own->count; i++) {
			const char *key = own->entries[i].key, *value = own->entries[i].value->text;
			if (import_env_name_problem(key)) {
				supervisord_drop(import, environment, "%s: %s", key,
						 import_env_name_problem(key));
				continue;
			}
			ytree_set(env, key, ytree_string(value));
			char *name = xasprintf("ENV_%s", key);
			supervisord_name_add(&program->names, &program->name_count, name, value,
					     false);
			free(name);
		}
		ytree_free(own);
		free(text);
	}

	struct ini_value *command_value = ini_get(program->section, "command");
	char *command = command_value ? supervisord_expand(import, command_value, program->names,
							   program->name_count)
				      : NULL;
	if (!command_value)
		import_error(import->report, program->section->file, program->section->line,
			     "[%s] has no command", program->section->name);
	const char *why = NULL;
	char **argv = command ? python_shlex_split(command, &why) : NULL;
	if (command && !argv)
		import_error(import->report, command_value->file, command_value->line,
			     "command: %s", why);
	ytree_set(task, "command", ytree_string_list(argv));
	if (process_num < 0 && numprocs > 1) {
		ytree_set(task, "instances", ytree_plainf("%ld", numprocs));
		ytree_comment(task, "instances",
			      "numprocs=%ld: corral names them %s@0 ... %s@%ld (process_name=%s)",
			      numprocs, task_name, task_name, numprocs - 1,
			      value_of(program, "process_name") ? value_of(program, "process_name")
								: "%(program_name)s");
	}
	char **words = argv;
	for (size_t i = 0; words && words[i]; i++)
		free(words[i]);
	free(words);
	free(command);

	char *directory = expanded(program, "directory");
	if (directory)
		ytree_set(task, "cwd", ytree_string(directory));
	free(directory);
	char *user = expanded(program, "user");
	if (user) {
		ytree_set(task, "user", ytree_string(user));
		if (!ytree_get(env, "HOME"))
			ytree_comment(task, "user",
				      "corral sets HOME, USER and LOGNAME from %s's passwd entry "
				      "(supervisord leaves its own)",
				      user);
	}
	if (env->count)
		ytree_set(task, "env", env);
	else
		ytree_free(env);
	if (!boolean_value(program, "autostart", 1))
		ytree_set(task, "autostart", ytree_plain("false"));
	import_restart(program, task);
	import_kill(program, task);
	import_logs(program, task);
	struct ini_value *umask = ini_get(program->section, "umask");
	if (umask) {
		char *end;
		unsigned long mask = strtoul(umask->value, &end, 8);
		if (*end || mask > 0777) {
			supervisord_drop(import, umask, "not an octal umask");
		} else {
			/* umask lives in isolation:, whose defaults are an isolated
			 * task's: kept as the program had them. */
			bool root = !user || strcmp(user, "root") == 0 || strcmp(user, "0") == 0;
			struct ytree_node *isolation = ytree_set(task, "isolation", ytree_map());
			struct ytree_node *capabilities =
			    ytree_set(isolation, "capabilities", ytree_map());
			capabilities->flow = true;
			struct ytree_node *drop = ytree_set(capabilities, "drop", ytree_list());
			ytree_append(drop, ytree_plain("all"));
			struct ytree_node *add = ytree_set(capabilities, "add", ytree_list());
			if (root)
				ytree_append(add, ytree_plain("all"));
			ytree_set(isolation, "seccomp", ytree_plain("unconfined"));
			ytree_set(isolation, "no_new_privileges", ytree_plain("false"));
			ytree_set(isolation, "umask", ytree_plainf("\"%04lo\"", mask));
			ytree_comment(
			    task, "isolation",
			    "for umask=%s; an isolated task opens only the default devices "
			    "(/dev/null, zero, full, random, urandom, tty, pts)",
			    umask->value);
		}
	}
	free(user);
	struct ini_value *serverurl = ini_get(program->section, "serverurl");
	if (serverurl && strcasecmp(serverurl->value, "AUTO") != 0)
		supervisord_drop(
		    import, serverurl,
		    "a task reaches corral's control socket only with control: rights");
	free(task_name);
}

static bool uses_process_num(struct ini_section *section)
{
	static const char *const keys[] = {
	    "command",        "environment", "directory", "stdout_logfile",
	    "stderr_logfile", "user",        NULL};
	for (size_t k = 0; keys[k]; k++)
		for (size_t i = 0; i < section->count; i++)
			if (strcmp(section->values[i].key, keys[k]) == 0 &&
			    strstr(section->values[i].value, "%(process_num)"))
				return true;
	return false;
}

void supervisord_import_program(struct supervisord *import, struct ini_section *section,
				const char *group_name, struct ytree_node *tasks)
{
	struct program program = {.import = import, .section = section};
	program.program_name = section->name + strlen("program:");
	program.group_name = group_name;
	for (size_t i = 0; i < import->name_count; i++)
		supervisord_name_add(&program.names, &program.name_count, import->names[i].name,
				     import->names[i].value, false);
	supervisord_name_add(&program.names, &program.name_count, "here", section->here, false);
	supervisord_name_add(&program.names, &program.name_count, "program_name",
			     program.program_name, false);
	supervisord_name_add(&program.names, &program.name_count, "group_name", group_name, false);
	long numprocs = number_value(&program, "numprocs", 1);
	long start = number_value(&program, "numprocs_start", 0);
	if (numprocs > 1 && uses_process_num(section)) {
		for (long n = start; n < start + numprocs; n++)
			import_process(&program, tasks, n, numprocs);
	} else {
		import_process(&program, tasks, numprocs > 1 ? -1 : start, numprocs);
	}
	supervisord_names_free(program.names, program.name_count);
}
