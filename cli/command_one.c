/* `corral [OPTIONS] -- COMMAND [ARG]...`: the command line of one-command
 * mode (supervisor/pid1/one_command.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "base/log.h"
#include "base/units.h"
#include "cli/commands.h"
#include "config/model/config.h"
#include "supervisor/pid1/one_command.h"
#include "supervisor/supervisor.h"

void command_one_print_usage(FILE *out)
{
	fprintf(out,
		"usage: corral [OPTIONS] -- COMMAND [ARG]...\n\n"
		"Runs COMMAND as the only task, as tini and dumb-init do: every signal corral\n"
		"gets is passed on to it, orphans are reaped, what it leaves behind is killed\n"
		"when it exits, and its exit code is corral's (128+N when killed by signal N).\n"
		"It has corral's stdin, stdout and stderr (and terminal), untouched, and its\n"
		"environment with CORRAL_GROUP=main and CORRAL_TASK=command added.\n"
		"Job control, as dumb-init: SIGTSTP, SIGTTIN and SIGTTOU are passed on as\n"
		"SIGSTOP (with -c, as they are) and corral stops too (not as PID 1), until\n"
		"SIGCONT, passed on.\n\n"
		"  -c, --single-child  pass signals to COMMAND alone; by default they go to\n"
		"                      its whole process group (dumb-init's setsid mode)\n"
		"  -g                  to its process group: the default (tini's -g)\n"
		"  -r, --rewrite S:R   pass signal S on as R (numbers or names, \"TERM:INT\");\n"
		"                      R = 0 drops S; repeatable (dumb-init's -r)\n"
		"  -e, --expect-exit CODE\n"
		"                      exit 0 when COMMAND exits with CODE; repeatable (tini)\n"
		"  -p, --parent-death-signal SIGNAL\n"
		"                      get SIGNAL (and pass it on) when corral's parent dies\n"
		"  -s                  accepted for tini: corral always reaps as a subreaper\n"
		"  -v, --verbose       corral's own messages on stderr (quiet by default)\n"
		"  -V, --version       print corral's version (dumb-init's -V)\n\n"
		"Exit code: COMMAND's; 127 when it is not found, 126 when it cannot be\n"
		"executed; 1 for a usage error or corral's own errors (as tini and\n"
		"dumb-init).\n");
}

static void expect_exit_code(struct exit_status_set *expected, int code)
{
	expected->codes[code / 64] |= UINT64_C(1) << (code % 64);
	/* tini compares 128+N for a command killed by signal N. */
	if (code > 128 && code - 128 <= 64)
		expected->signals |= UINT64_C(1) << (code - 128 - 1);
}

static int parse_exit_code(const char *text)
{
	char *end;
	errno = 0;
	long code = strtol(text, &end, 10);
	if (end == text || *end || errno || code < 0 || code > 255)
		return -1;
	return (int)code;
}

static int set_parent_death_signal(const char *text)
{
	char *end;
	long number = strtol(text, &end, 10);
	int signal_number = end != text && !*end ? (int)number : parse_signal_name(text);
	if (signal_number <= 0 || signal_number >= 65)
		return -1;
	return prctl(PR_SET_PDEATHSIG, signal_number, 0, 0, 0);
}

/* tini and dumb-init exit 1 on a usage error: a script written for them
 * that tells a usage error by its status tells corral's the same way. */
#define ONE_COMMAND_USAGE_ERROR 1

/* One line and a pointer to the help, not the whole of it, so that the
 * message stays in sight. */
static int usage_error(const char *option, const char *argument, const char *expected)
{
	fprintf(stderr, "corral: %s%s%s\nRun 'corral --help' for one-command mode's options.\n",
		option, argument, expected);
	return ONE_COMMAND_USAGE_ERROR;
}

int command_one(int argc, char **argv)
{
	static const struct option options[] = {
	    {"single-child", no_argument, NULL, 'c'},
	    {"rewrite", required_argument, NULL, 'r'},
	    {"expect-exit", required_argument, NULL, 'e'},
	    {"parent-death-signal", required_argument, NULL, 'p'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	struct one_command mode;
	struct exit_status_set expected = {0};
	bool verbose = false;
	int option, code;

	one_command_init(&mode);
	optind = 1;
	/* getopt names itself by argv[0], a path; corral's messages say "corral". */
	argv[0] = "corral";
	/* '+': the options end at COMMAND, whose own options are its own. */
	while ((option = getopt_long(argc, argv, "+cgr:e:p:svVh", options, NULL)) != -1) {
		switch (option) {
		case 'c':
			mode.single_child = true;
			break;
		case 'g':
			mode.single_child = false;
			break;
		case 'r':
			if (one_command_parse_rewrite(&mode, optarg) < 0)
				return usage_error("-r ", optarg,
						   ": expected S:R, two signals (R may be 0)");
			break;
		case 'e':
			code = parse_exit_code(optarg);
			if (code < 0)
				return usage_error("-e ", optarg,
						   ": expected an exit code, 0 to 255");
			expect_exit_code(&expected, code);
			break;
		case 'p':
			if (set_parent_death_signal(optarg) < 0)
				return usage_error("-p ", optarg, ": expected a signal");
			break;
		case 's':
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			command_one_print_usage(stdout);
			return 0;
		case 'V':
			printf("corral %s\n", CORRAL_VERSION);
			return 0;
		default: /* getopt said which option */
			fprintf(stderr, "Run 'corral --help' for one-command mode's options.\n");
			return ONE_COMMAND_USAGE_ERROR;
		}
	}
	if (optind >= argc)
		return usage_error("", "", "expected a COMMAND to run after --");

	log_set_quiet(!verbose);
	log_set_verbose(verbose);
	struct config *config = one_command_config(argv + optind, &expected);
	if (!config)
		return 1;
	one_command_release_terminal(&mode);
	struct run_options run_options = {.one_command = &mode, .log_format = -1};
	int exit_code = supervisor_run(config, &run_options);
	config_free(config);
	log_info("exiting with code %d", exit_code);
	return exit_code;
}
