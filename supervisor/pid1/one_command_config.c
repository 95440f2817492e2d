/* The in-memory config of one-command mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "config/load/config_load.h"
#include "supervisor/pid1/one_command.h"

/* Written as a config file would be, and loaded by the same loader, so
 * that every default (kill timeout, log history, isolation off...) is the
 * one a file would get. Only the command line is set afterwards: argv is
 * any bytes, which YAML could not always carry. */
static const char one_command_yaml[] = "groups:\n"
				       "  main:\n"
				       "    tasks:\n"
				       "      command:\n"
				       "        command: [\"placeholder\"]\n"
				       "        restart: {policy: never}\n";

struct config *one_command_config(char *const *argv, const struct exit_status_set *expected)
{
	struct config_diagnostics diagnostics = {0};
	struct config *config = config_parse_buffer("the command line", one_command_yaml,
						    sizeof(one_command_yaml) - 1, &diagnostics);
	if (!config) {
		config_diagnostics_print(&diagnostics, "one-command config", stderr);
		config_diagnostics_free(&diagnostics);
		return NULL;
	}
	struct task_config *task = &config->groups[0].tasks[0];
	for (size_t i = 0; i < task->argc; i++)
		free(task->argv[i]);
	free(task->argv);
	size_t argc = 0;
	while (argv[argc])
		argc++;
	task->argv = xcalloc(argc + 1, sizeof(*task->argv));
	for (size_t i = 0; i < argc; i++)
		task->argv[i] = xstrdup(argv[i]);
	task->argc = argc;
	task->restart.success_exit = *expected;
	return config;
}
