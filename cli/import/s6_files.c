/* Reading s6 service directories, and the tasks and hooks their files
 * become, for both s6-overlay layouts. */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/regular_file.h"
#include "base/xmalloc.h"
#include "cli/import/import_names.h"
#include "cli/import/import_s6.h"

bool s6_is_dir(const char *path)
{
	struct stat status;
	return stat(path, &status) == 0 && S_ISDIR(status.st_mode);
}

bool s6_is_file(const char *path)
{
	struct stat status;
	return stat(path, &status) == 0 && S_ISREG(status.st_mode);
}

/* A small file's text, trimmed; NULL when it is not there. */
char *s6_read_small(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s", dir, name);
	char *text = NULL, reason[REGULAR_FILE_REASON_SIZE];
	size_t size;
	if (s6_is_file(path) &&
	    regular_file_read(path, S6_FILE_MAX_BYTES, &text, &size, reason) == 0) {
		while (size && isspace((unsigned char)text[size - 1]))
			text[--size] = '\0';
	}
	free(path);
	return text;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of DIR in name order, hidden ones skipped (NULL-terminated). */
char **s6_entries(const char *dir)
{
	char **names = xcalloc(1, sizeof(*names));
	size_t count = 0;
	DIR *directory = opendir(dir);
	if (!directory)
		return names;
	struct dirent *entry;
	while ((entry = readdir(directory)))
		if (entry->d_name[0] != '.') {
			names = xreallocarray(names, count + 2, sizeof(*names));
			names[count++] = xstrdup(entry->d_name);
			names[count] = NULL;
		}
	closedir(directory);
	qsort(names, count, sizeof(*names), compare_names);
	return names;
}

void s6_free_entries(char **names)
{
	for (size_t i = 0; names[i]; i++)
		free(names[i]);
	free(names);
}

/* How a script is run: its shebang is s6-overlay's with-contenv, which
 * loads the container's environment from /run/s6/container_environment;
 * corral hands the task its environment directly, so the interpreter
 * after it runs the script. */
struct ytree_node *s6_script_command(const char *path, struct ytree_node *task)
{
	char *text, reason[REGULAR_FILE_REASON_SIZE];
	size_t size;
	struct ytree_node *command = ytree_list();
	if (regular_file_read(path, S6_FILE_MAX_BYTES, &text, &size, reason) == 0 &&
	    strncmp(text, "#!", 2) == 0) {
		char *end = strchr(text, '\n');
		if (end)
			*end = '\0';
		char *save = NULL;
		char *interpreter = strtok_r(text + 2, " \t", &save);
		const char *base = interpreter ? strrchr(interpreter, '/') : NULL;
		if (base && strcmp(base + 1, "with-contenv") == 0) {
			char *shell = strtok_r(NULL, " \t", &save);
			ytree_append(command, ytree_string(shell ? shell : "/bin/sh"));
			for (char *word = strtok_r(NULL, " \t", &save); word;
			     word = strtok_r(NULL, " \t", &save))
				ytree_append(command, ytree_string(word));
			ytree_append(command, ytree_string(path));
			ytree_comment(
			    task, "command",
			    "#!%s: corral gives the task its environment itself, so %s runs "
			    "the script",
			    interpreter, shell ? shell : "/bin/sh");
			free(text);
			return command;
		}
		if (interpreter && strncmp(interpreter, "/command/", 9) == 0)
			ytree_comment(task, "command",
				      "#!%s: s6-overlay's path; the image needs it (or execline) "
				      "installed",
				      interpreter);
	}
	if (text)
		free(text);
	ytree_append(command, ytree_string(path));
	return command;
}

void s6_drop(struct s6 *import, const char *path, const char *setting, const char *why, ...)
{
	va_list arguments;
	va_start(arguments, why);
	char *reason = xvasprintf(why, arguments);
	va_end(arguments);
	import_drop(import->report, path, 0, setting, "%s", reason);
	free(reason);
}

/* A finish script: an exited hook, given the exit code (256 when killed)
 * and the signal as s6-supervise gives them. Its output goes to the
 * task's (stdout is the hook's response). */
void s6_add_finish_hook(struct ytree_node *task, const char *finish)
{
	struct ytree_node *hooks = ytree_set(task, "hooks", ytree_list());
	hooks->flow = false;
	struct ytree_node *hook = ytree_map();
	ytree_append(hooks, hook);
	ytree_set(hook, "name", ytree_string("finish"));
	ytree_set(hook, "stage", ytree_plain("exited"));
	struct ytree_node *exec = ytree_set(hook, "exec", ytree_list());
	ytree_append(exec, ytree_string("/bin/sh"));
	ytree_append(exec, ytree_string("-c"));
	ytree_append(exec,
		     ytree_string("request=$(cat); "
				  "code=$(printf %s \"$request\" | sed -n "
				  "'s/.*\"exit\": *{\"code\": *\\([0-9]*\\).*/\\1/p'); "
				  "signal=$(printf %s \"$request\" | sed -n "
				  "'s/.*\"signal\": *\"SIG\\([A-Z0-9+]*\\)\".*/\\1/p'); "
				  "number=0; if [ -n \"$signal\" ]; then code=256; n=1; "
				  "while [ $n -lt 65 ]; do if [ \"$(kill -l $n)\" = \"$signal\" ]; "
				  "then number=$n; break; fi; n=$((n + 1)); done; fi; "
				  "\"$0\" \"${code:-0}\" \"$number\" >&2"));
	ytree_append(exec, ytree_string(finish));
	ytree_comment(task, "hooks",
		      "finish: after every exit, with the exit code (256 if killed) and the "
		      "signal; as corral's user, and a finish that halts the container "
		      "(/run/s6/basedir/bin/halt) needs on_failure: exit instead");
}

struct ytree_node *s6_new_task(struct s6 *import, const char *name, const char *origin)
{
	char *task_name = import_config_name(name);
	struct ytree_node *task = ytree_set(import->tasks, task_name, ytree_map());
	ytree_comment(import->tasks, task_name, "%s", origin);
	free(task_name);
	return task;
}

void s6_longrun_restart(struct ytree_node *task)
{
	struct ytree_node *restart = ytree_set(task, "restart", ytree_map());
	restart->flow = true;
	ytree_set(restart, "policy", ytree_plain("always"));
	ytree_set(restart, "attempts", ytree_plain("unlimited"));
	ytree_set(restart, "delay", ytree_plain("1s"));
	ytree_set(restart, "max_delay", ytree_plain("1s"));
	ytree_comment(task, "restart",
		      "s6-supervise restarts a longrun for ever, at most once a "
		      "second");
}

void s6_milliseconds(struct s6 *import, const char *dir, const char *file, struct ytree_node *map,
		     const char *key, struct ytree_node *task, const char *task_key)
{
	char *text = s6_read_small(dir, file);
	if (!text)
		return;
	char *end;
	unsigned long ms = strtoul(text, &end, 10);
	if (*end) {
		char *path = xasprintf("%s/%s", dir, file);
		s6_drop(import, path, file, "not a number of milliseconds");
		free(path);
	} else if (ms == 0) {
		ytree_comment(task, task_key, "%s 0: no limit", file);
		if (strcmp(key, "timeout") == 0 && strcmp(task_key, "kill") == 0)
			ytree_set(map, key, ytree_plain("24h"));
	} else {
		ytree_set(map, key, ytree_plainf("%lums", ms));
	}
	free(text);
}
