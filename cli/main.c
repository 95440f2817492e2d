/* corral: one binary, subcommands. */
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/suggest.h"
#include "cli/commands.h"
#include "isolation/seccomp_syscall_names.h"
#include "supervisor/pid1/machine_init.h"
#include "supervisor/upgrade/upgrade.h"

static const struct command commands[] = {
    {"run", "run the task groups of a config file", command_run, true},
    {"check", "validate a config file without running anything", command_check, false},
    {"status", "show the state of groups and tasks", command_status, false},
    {"restart", "restart a task, or the tasks of a group", command_restart, false},
    {"stop", "stop a task, without restarting it by policy", command_stop, false},
    {"start", "run a stopped or dead task again", command_start, false},
    {"signal", "send a signal to a task", command_signal, false},
    {"logs", "show, or follow, a task's recent output", command_logs, false},
    {"events", "show, or follow, recent task and group events", command_events, false},
    {"reload", "load the config again and apply the difference", command_reload, false},
    {"exec", "run a command inside a running task", command_exec, false},
    {"inspect", "show what a task's run really got, and from where", command_inspect, false},
    {"scale", "change how many instances a task has", command_scale, false},
    {"shutdown", "shut corral down gracefully, as SIGTERM does", command_shutdown, false},
    {"upgrade", "replace corral with a new binary; every task runs on", command_upgrade, false},
};

/* `corral -- COMMAND`, `corral -g -- COMMAND`...: not a subcommand but
 * one-command mode. */
static const struct command one_command = {"--", "run one command as tini and dumb-init do",
					   command_one, true};

static void print_usage(FILE *out)
{
	fprintf(out,
		"usage: corral COMMAND [OPTIONS] [ARGS]\n"
		"       corral [OPTIONS] -- PROGRAM [ARG]...\n\n"
		"A process supervisor: task groups with a lifecycle, as PID 1 or a service.\n\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nRun 'corral COMMAND --help' for a command's options.\n"
		     "Other options: --help, --version\n\n"
		     "One-command mode, a drop-in for tini and dumb-init (ENTRYPOINT [\"corral\", "
		     "\"--\"]):\n\n");
	command_one_print_usage(out);
}

/* An option where a subcommand would be, or "--": one-command mode. */
static bool wants_one_command(const char *first)
{
	return first[0] == '-' && strcmp(first, "--help") != 0 && strcmp(first, "-h") != 0 &&
	       strcmp(first, "--version") != 0 && strcmp(first, "--handover-format") != 0;
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

/* Runs the subcommand argv[1]; *command is set when there is one. */
static int run_command(int argc, char **argv, const struct command **command)
{
	if (argc < 2) {
		print_usage(stderr);
		return COMMAND_USAGE_ERROR;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
		print_usage(stdout);
		return 0;
	}
	if (strcmp(name, "--handover-format") == 0)
		return upgrade_print_format();
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		printf("corral %s\n", CORRAL_VERSION);
		return 0;
	}
	if (wants_one_command(name)) {
		*command = &one_command;
		return command_one(argc, argv);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i].name) == 0) {
			*command = &commands[i];
			return commands[i].main(argc - 1, argv + 1);
		}
	/* One line, not the whole usage, so that the message stays in sight:
	 * a command misspelt, or a program named where a command goes (tini
	 * and dumb-init take `tini PROGRAM`; corral needs the `--`). */
	const char *names[sizeof(commands) / sizeof(commands[0])];
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		names[i] = commands[i].name;
	const char *nearest =
	    suggest_nearest(name, strlen(name), names, sizeof(commands) / sizeof(commands[0]));
	if (nearest)
		fprintf(stderr,
			"corral: unknown command \"%s\"; did you mean \"%s\"? (to run a "
			"program under corral: corral -- %s ...)\n",
			name, nearest, name);
	else
		fprintf(stderr,
			"corral: unknown command \"%s\"; to run a program under corral, write: "
			"corral -- %s ...\n",
			name, name);
	fprintf(stderr, "Run 'corral --help' for the commands.\n");
	return COMMAND_USAGE_ERROR;
}

/* jansson seeds its hash tables from /dev/urandom on first use, which
 * blocks early in a boot until the kernel's pool is ready (about a second in
 * a VM where corral is /init). A seed that never blocks is as good. */
static void seed_json_hashes(void)
{
	size_t seed;
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed)) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		seed = (size_t)now.tv_nsec ^ ((size_t)now.tv_sec << 20) ^ (size_t)getpid();
	}
	json_object_seed(seed ? seed : 1);
}

int main(int argc, char **argv)
{
	ensure_standard_fds();
	/* `corral upgrade`: the argv the exec gives the new corral, and,
	 * in the new corral, the state the old one handed over. */
	upgrade_remember_command_line(argc, argv);
	upgrade_resume_begin();
	/* Every command that loads a config checks seccomp syscall names
	 * against libseccomp's tables (loaded only when a config lists some). */
	config_use_syscall_names(seccomp_syscall_names());
	seed_json_hashes();
	/* As a machine's /init, whatever happens (a bad config, bad
	 * arguments), corral must power off rather than exit: an init that
	 * exits makes the kernel panic. */
	bool machine_init = machine_init_prepare();
	const struct command *command = NULL;
	int exit_code = run_command(argc, argv, &command);
	if (machine_init && !(command && command->reports_exit_code))
		fprintf(stderr, "corral: exiting with code %d\n", exit_code);
	if (machine_init)
		machine_init_power_off();
	return exit_code;
}
