/* `corral import` of a Procfile, as foreman and honcho run one: each
 * `name: command` line a task running `sh -c command`, with the .env
 * beside the Procfile, and PORT as they give it: 5000 for the first
 * process type, 100 more for each next one. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/regular_file.h"
#include "base/xmalloc.h"
#include "cli/import/import_names.h"
#include "cli/import/import_sources.h"

#define PROCFILE_MAX_BYTES (1024 * 1024)
#define FOREMAN_BASE_PORT  5000
#define FOREMAN_PORT_STEP  100

/* foreman's line: a name of letters, digits, _ and -, a colon, a command. */
static bool procfile_line(char *line, char **name, char **command)
{
	char *p = line;
	while (isalnum((unsigned char)*p) || *p == '_' || *p == '-')
		p++;
	if (p == line || *p != ':')
		return false;
	*p = '\0';
	*name = line;
	p++;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t length = strlen(p);
	while (length && isspace((unsigned char)p[length - 1]))
		p[--length] = '\0';
	*command = p;
	return *p != '\0';
}

int procfile_import(const char *path, struct ytree_node *config, struct import_report *report)
{
	char *text, reason[REGULAR_FILE_REASON_SIZE];
	size_t size;
	if (regular_file_read(path, PROCFILE_MAX_BYTES, &text, &size, reason) < 0) {
		import_error(report, path, 0, "cannot read: %s", reason);
		return -1;
	}
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
	char *absolute_dir = realpath(dir, NULL);
	const char *dir_slash = absolute_dir ? strrchr(absolute_dir, '/') : NULL;
	char *wanted = import_config_name(dir_slash && dir_slash[1] ? dir_slash + 1 : "app");
	struct ytree_node *groups = ytree_child_map(config, "groups");
	char *group_name = import_unique_group(groups, wanted);
	free(wanted);
	struct ytree_node *group = ytree_set(groups, group_name, ytree_map());
	ytree_comment(groups, group_name,
		      "%s, as foreman runs it: when a process ends, foreman stops the others; "
		      "corral restarts none (policy never) and stops the group when one fails",
		      path);
	struct ytree_node *tasks = ytree_set(group, "tasks", ytree_map());
	char *env_path = xasprintf("%s/.env", absolute_dir ? absolute_dir : dir);
	bool has_env = access(env_path, R_OK) == 0;

	unsigned number = 0, index = 0;
	char *cursor = text;
	while (*cursor) {
		char *line = cursor, *end = strchr(cursor, '\n');
		if (end) {
			*end = '\0';
			cursor = end + 1;
		} else {
			cursor += strlen(cursor);
		}
		number++;
		char *name, *command;
		char *start = line;
		while (*start == ' ' || *start == '\t')
			start++;
		if (!*start || *start == '#')
			continue;
		if (!procfile_line(start, &name, &command)) {
			import_drop(report, path, number, start,
				    "not NAME: COMMAND, which foreman skips too");
			continue;
		}
		char *task_name = import_config_name(name);
		if (ytree_get(tasks, task_name)) {
			import_drop(
			    report, path, number, name,
			    "a second process type of this name; foreman runs the last one");
		}
		struct ytree_node *task = ytree_set(tasks, task_name, ytree_map());
		ytree_set(task, "command", ytree_string(command));
		if (has_env) {
			struct ytree_node *files = ytree_set(task, "env_file", ytree_list());
			ytree_append(files, ytree_string(env_path));
		}
		struct ytree_node *env = ytree_set(task, "env", ytree_map());
		ytree_set(env, "PORT",
			  ytree_plainf("\"%u\"", FOREMAN_BASE_PORT + FOREMAN_PORT_STEP * index));
		ytree_comment(task, "env",
			      "PORT: foreman's and honcho's, 5000 + 100 per process type");
		struct ytree_node *restart = ytree_set(task, "restart", ytree_map());
		restart->flow = true;
		ytree_set(restart, "policy", ytree_plain("never"));
		index++;
		free(task_name);
	}
	if (!index)
		import_error(report, path, 0, "no NAME: COMMAND line: nothing to run");
	free(env_path);
	free(group_name);
	free(absolute_dir);
	free(dir);
	free(text);
	return index ? 0 : -1;
}
