#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/commands.h"
#include "config/load/config_load.h"
#include "config/model/config.h"
#include "supervisor/lifecycle/shutdown_budget.h"
#include "supervisor/pid1/fd_budget.h"
#include "supervisor/pid1/signal_exposure.h"

static void print_check_usage(FILE *out)
{
	fprintf(out, "usage: corral check [--print] [--shutdown-timeout DURATION]\n"
		     "                    [--profile NAME]... CONFIG...\n\n"
		     "Validates CONFIG without running anything. Prints every error as\n"
		     "FILE:LINE:COLUMN: message. Exit 0 when valid, 1 when not. Several files,\n"
		     "or a directory (its *.yaml and *.yml in name order), are merged into one\n"
		     "config, as `corral run` does. Warns (exit 0) when a graceful shutdown can\n"
		     "take longer than the shutdown timeout, naming the longest stop chain.\n\n"
		     "  --print  print the config as corral reads it, after merging the files\n"
		     "           and replacing variables (interpolate: true), as YAML\n"
		     "  --shutdown-timeout DURATION\n"
		     "           check against this timeout (say, the pod's\n"
		     "           terminationGracePeriodSeconds) instead of\n"
		     "           $CORRAL_SHUTDOWN_TIMEOUT or the config's shutdown_timeout, as\n"
		     "           `corral run --shutdown-timeout` would run it\n"
		     "  --profile NAME\n"
		     "           check what `corral run --profile NAME` would run (repeatable;\n"
		     "           without it, $CORRAL_PROFILES)\n");
}

static int print_config(const char *const *paths, size_t count, const char *const *profiles)
{
	struct config_diagnostics diagnostics;
	int result = config_print_paths(paths, count, profiles, stdout, &diagnostics);
	if (result < 0) {
		config_diagnostics_print(&diagnostics, paths[0], stderr);
		fprintf(stderr, "%s: %zu error%s\n", paths[0], diagnostics.count,
			diagnostics.count == 1 ? "" : "s");
	}
	config_diagnostics_free(&diagnostics);
	return result < 0 ? 1 : 0;
}

int command_check(int argc, char **argv)
{
	static const struct option options[] = {
	    {"print", no_argument, NULL, 'p'},
	    {"shutdown-timeout", required_argument, NULL, 't'},
	    {"profile", required_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int option, usage;
	bool print = false;
	const char *shutdown_timeout_flag = NULL;
	struct command_profiles profiles = {0};
	optind = 1;
	while ((option = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
		if (option == 'p') {
			print = true;
			continue;
		}
		if (option == 't') {
			shutdown_timeout_flag = optarg;
			continue;
		}
		if (option == 'P') {
			if ((usage = command_profiles_add(&profiles, optarg, "check",
							  print_check_usage))) {
				command_profiles_free(&profiles);
				return usage;
			}
			continue;
		}
		command_profiles_free(&profiles);
		if (option == 'h') {
			print_check_usage(stdout);
			return 0;
		}
		print_check_usage(stderr);
		return COMMAND_USAGE_ERROR;
	}
	if ((usage = command_profiles_finish(&profiles, "check", print_check_usage)))
		return usage;
	if (optind >= argc) {
		command_profiles_free(&profiles);
		return command_usage_error("check", print_check_usage,
					   "expected a CONFIG file or directory");
	}
	uint64_t shutdown_timeout_ms;
	const char *shutdown_timeout_source;
	int refused = command_shutdown_timeout("check", print_check_usage, shutdown_timeout_flag,
					       &shutdown_timeout_ms, &shutdown_timeout_source);
	if (refused) {
		command_profiles_free(&profiles);
		return refused;
	}
	const char *path = argv[optind];
	const char *const *paths = (const char *const *)argv + optind;
	size_t path_count = (size_t)(argc - optind), errors;
	if (print) {
		int result = print_config(paths, path_count, (const char *const *)profiles.names);
		command_profiles_free(&profiles);
		return result;
	}
	struct config *config =
	    command_load_config(paths, path_count, (const char *const *)profiles.names, &errors);
	command_profiles_free(&profiles);
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
	char warning[1024];
	if (fd_budget_check(config, true, warning, sizeof(warning)) < 0)
		fprintf(stderr, "%s: warning: %s\n", path, warning);
	if (!shutdown_timeout_source)
		shutdown_timeout_ms = config->shutdown_timeout_ms;
	if (shutdown_budget_check(config, shutdown_timeout_ms, shutdown_timeout_source, warning,
				  sizeof(warning)) < 0)
		fprintf(stderr, "%s: warning: %s\n", path, warning);
	char exposure[1024];
	if (signal_exposure_warning(config, geteuid(), exposure, sizeof(exposure)))
		fprintf(stderr, "%s: warning: %s\n", path, exposure);
	config_free(config);
	return 0;
}
