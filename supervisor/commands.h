/* The subcommands of the corral binary. Each takes its own argv (argv[0] is
 * the command name) and returns the process exit code. */
#pragma once

#include <stdio.h>

/* CLI convention: 0 success, 1 refused or failed, 2 usage error. */
#define COMMAND_USAGE_ERROR 2

struct command {
	const char *name;
	const char *summary;
	int (*main)(int argc, char **argv);
};

int command_run(int argc, char **argv);
int command_check(int argc, char **argv);
