/* corral: one binary, subcommands. */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/commands.h"

static const struct command commands[] = {
	{"run", "run the task groups of a config file", command_run},
	{"check", "validate a config file without running anything", command_check},
	{"status", "show the state of groups and tasks", command_status},
	{"restart", "restart a task, or the tasks of a group", command_restart},
	{"stop", "stop a task, without restarting it by policy", command_stop},
	{"start", "run a stopped or dead task again", command_start},
	{"signal", "send a signal to a task", command_signal},
	{"logs", "show, or follow, a task's recent output", command_logs},
	{"events", "show, or follow, recent task and group events", command_events},
	{"shutdown", "shut corral down gracefully, as SIGTERM does", command_shutdown},
};

static void print_usage(FILE *out)
{
	fprintf(out, "usage: corral COMMAND [OPTIONS] [ARGS]\n\n"
		     "A process supervisor: task groups with a lifecycle, as PID 1 or a service.\n\n"
		     "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nRun 'corral COMMAND --help' for a command's options.\n"
		     "Other options: --help, --version\n");
}

/* A supervisor started with fd 0, 1 or 2 closed would hand its own pipes
 * out under those numbers; park /dev/null there first. */
static void ensure_standard_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		int opened = open("/dev/null", O_RDWR);
		if (opened >= 0 && opened != fd) {
			dup2(opened, fd);
			close(opened);
		}
	}
}

int main(int argc, char **argv)
{
	ensure_standard_fds();
	if (argc < 2) {
		print_usage(stderr);
		return COMMAND_USAGE_ERROR;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
		print_usage(stdout);
		return 0;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		printf("corral %s\n", CORRAL_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i].name) == 0)
			return commands[i].main(argc - 1, argv + 1);
	fprintf(stderr, "corral: unknown command \"%s\"\n\n", name);
	print_usage(stderr);
	return COMMAND_USAGE_ERROR;
}
