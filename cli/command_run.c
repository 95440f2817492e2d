#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "cli/commands.h"
#include "config/model/config.h"
#include "supervisor/keeper/keeper_main.h"
#include "supervisor/restore.h"
#include "supervisor/supervisor.h"
#include "supervisor/upgrade.h"

static void print_run_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: corral run [--events FILE] [--socket PATH] [--keep-running] [--keeper] [-v]\n"
	    "                  [--log-format plain|timestamped|json] [--profile NAME]...\n"
	    "                  [--shutdown-timeout DURATION] CONFIG...\n\n"
	    "Runs the task groups of CONFIG until they are finished, or until SIGTERM\n"
	    "or SIGINT asks for a graceful shutdown (a second one kills at once).\n"
	    "Several files, or a directory (its *.yaml and *.yml in name order), are\n"
	    "merged into one config.\n\n"
	    "  --events FILE  also write every event as a JSON object per line to FILE\n"
	    "  --keeper       run the tasks from a child process that this one, the\n"
	    "                 keeper, starts again with every task if it dies (kill -9,\n"
	    "                 a crash, the OOM killer); also CORRAL_KEEPER=1\n"
	    "  --keep-running\n"
	    "                 stay up until SIGTERM, SIGINT or 'corral shutdown', even\n"
	    "                 when every group is finished; a main task stopped with\n"
	    "                 'corral stop' does not end its group, and 'corral start'\n"
	    "                 runs it again (supervisord's behaviour)\n"
	    "  --log-format plain|timestamped|json\n"
	    "                 task lines on stdout as 'web/app | line' (plain), after\n"
	    "                 their UTC time (timestamped), or one JSON object each:\n"
	    "                 {\"time\",\"group\",\"task\",\"line\"} (json); over the\n"
	    "                 config's log_format\n"
	    "  --shutdown-timeout DURATION\n"
	    "                 bound on a graceful shutdown (25s, 1m30s), over\n"
	    "                 $CORRAL_SHUTDOWN_TIMEOUT, over the config's\n"
	    "                 shutdown_timeout: keep it below the orchestrator's grace\n"
	    "                 period (Kubernetes' terminationGracePeriodSeconds)\n"
	    "  --profile NAME also run the groups and tasks of profile NAME (their\n"
	    "                 `profiles:` list it); repeatable. Without it, the\n"
	    "                 comma-separated $CORRAL_PROFILES. Groups and tasks\n"
	    "                 without `profiles:` always run (compose's profiles)\n"
	    "  --socket PATH  control socket (default: $CORRAL_SOCKET, else the\n"
	    "                 config's socket:, else the first default place corral\n"
	    "                 may write to: /run/corral/control.sock,\n"
	    "                 $XDG_RUNTIME_DIR/corral/control.sock,\n"
	    "                 /tmp/corral-UID/control.sock)\n"
	    "  -v, --verbose  also corral's debug messages (a protection the\n"
	    "                 container does not allow, ...)\n\n"
	    "Exit code: 0 when every task ended well, else the code of the first task\n"
	    "that failed for good (128+N for signal N), 1 for corral's own errors.\n");
}

int command_run(int argc, char **argv)
{
	static const struct option options[] = {
	    {"events", required_argument, NULL, 'e'},
	    {"socket", required_argument, NULL, 's'},
	    {"keep-running", no_argument, NULL, 'k'},
	    {"log-format", required_argument, NULL, 'f'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"shutdown-timeout", required_argument, NULL, 't'},
	    {"profile", required_argument, NULL, 'p'},
	    {"keeper", no_argument, NULL, 'K'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct run_options run_options = {.log_format = -1};
	bool keeper = false;
	const char *shutdown_timeout = NULL;
	struct command_profiles profiles = {0};
	int usage;
	int option;
	optind = 1;
	while ((option = getopt_long(argc, argv, "+hv", options, NULL)) != -1) {
		switch (option) {
		case 'e':
			run_options.events_path = optarg;
			break;
		case 's':
			run_options.socket_path = optarg;
			break;
		case 'k':
			run_options.keep_running = true;
			break;
		case 'f':
			run_options.log_format = log_format_parse(optarg);
			if (run_options.log_format < 0)
				return command_usage_error(
				    "run", print_run_usage,
				    "--log-format %s: expected plain, timestamped or json", optarg);
			/* From here on: "not valid: nothing was started" is JSON too
			 * (the diagnostics above it, with their carets, stay text). */
			log_set_json(run_options.log_format == LOG_FORMAT_JSON);
			break;
		case 'v':
			log_set_verbose(true);
			break;
		case 't':
			shutdown_timeout = optarg;
			break;
		case 'K':
			keeper = true;
			break;
		case 'p':
			if ((usage =
				 command_profiles_add(&profiles, optarg, "run", print_run_usage))) {
				command_profiles_free(&profiles);
				return usage;
			}
			break;
		case 'h':
			command_profiles_free(&profiles);
			print_run_usage(stdout);
			return 0;
		default:
			command_profiles_free(&profiles);
			print_run_usage(stderr);
			return COMMAND_USAGE_ERROR;
		}
	}
	if ((usage = command_profiles_finish(&profiles, "run", print_run_usage)))
		return usage;
	if (optind >= argc) {
		command_profiles_free(&profiles);
		return command_usage_error("run", print_run_usage,
					   "expected a CONFIG file or directory");
	}
	int refused = command_shutdown_timeout("run", print_run_usage, shutdown_timeout,
					       &run_options.shutdown_timeout_ms,
					       &run_options.shutdown_timeout_source);
	if (refused) {
		command_profiles_free(&profiles);
		return refused;
	}
	/* The process the parent started becomes the keeper; the loop, its
	 * child, runs all that follows (keeper_main.h). */
	if (!restore_keeper_present() && keeper_main_wanted(keeper)) {
		command_profiles_free(&profiles);
		return keeper_main(upgrade_command_line());
	}
	const char *path = argv[optind];
	size_t errors;
	struct config *config =
	    command_load_config((const char *const *)argv + optind, (size_t)(argc - optind),
				(const char *const *)profiles.names, &errors);
	command_profiles_free(&profiles);
	int exit_code = 1;
	if (config) {
		/* Before the first message of the run, "running 1 group". */
		if (run_options.log_format < 0)
			log_set_json(config->log_format == LOG_FORMAT_JSON);
		exit_code = supervisor_run(config, &run_options);
		config_free(config);
	} else {
		/* An upgrade's new corral: the old one runs on. */
		upgrade_fall_back("the config is not valid for it (see the lines above)");
		log_message("%s is not valid: nothing was started", path);
	}
	/* Only a run says it: --help and usage errors ran nothing. */
	/* run never sets quiet: said always, as a JSON line with json. */
	log_info("exiting with code %d", exit_code);
	return exit_code;
}
