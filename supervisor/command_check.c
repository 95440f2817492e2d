#include <getopt.h>
#include <stdio.h>

#include "config/config.h"
#include "supervisor/commands.h"
#include "supervisor/fd_budget.h"

static void print_check_usage(FILE *out)
{
	fprintf(out, "usage: corral check CONFIG\n\n"
		     "Validates CONFIG without running anything. Prints every error as\n"
		     "FILE:LINE:COLUMN: message. Exit 0 when valid, 1 when not.\n");
}

int command_check(int argc, char **argv)
{
	static const struct option options[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int option;
	optind = 1;
	while ((option = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
		if (option == 'h') {
			print_check_usage(stdout);
			return 0;
		}
		print_check_usage(stderr);
		return COMMAND_USAGE_ERROR;
	}
	if (optind != argc - 1)
		return command_usage_error("check", print_check_usage, "expected one CONFIG file");
	const char *path = argv[optind];
	size_t errors;
	struct config *config = command_load_config(path, &errors);
	if (!config) {
		fprintf(stderr, "%s: %zu error%s\n", path, errors, errors == 1 ? "" : "s");
		return 1;
	}
	size_t tasks = 0;
	for (size_t i = 0; i < config->group_count; i++)
		tasks += config->groups[i].task_count;
	printf("%s: ok (%zu group%s, %zu task%s)\n", path, config->group_count,
	       config->group_count == 1 ? "" : "s", tasks, tasks == 1 ? "" : "s");
	/* `corral run` raises the soft limit to the hard one: compare with that. */
	char warning[320];
	if (fd_budget_check(config, true, warning, sizeof(warning)) < 0)
		fprintf(stderr, "%s: warning: %s\n", path, warning);
	config_free(config);
	return 0;
}
