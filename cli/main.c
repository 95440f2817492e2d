/* corral: one binary, subcommands. */
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/suggest.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "isolation/seccomp_syscall_names.h"
#include "supervisor/pid1/machine_init.h"
#include "supervisor/upgrade.h"

static const struct command commands[] = {
    {"run", "run the task groups of a config file", command_run, true},
    {"check", "validate a config file without running anything", command_check, false},
    {"import", "write a config from systemd units, supervisord, a Procfile or s6", command_import,
     false},
    {"status", "show the state of groups and tasks", command_status, false},
    {"top", "watch groups and tasks live in the terminal; act on them", command_top, false},
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
		"usage: corral [OPTIONS] COMMAND [OPTIONS] [ARGS]\n"
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

static const char *const *command_names(void)
{
	static const char *names[sizeof(commands) / sizeof(commands[0])];
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		names[i] = commands[i].name;
	return names;
}

static const struct command *command_named(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

/* After a usage error of a command whose options came before it, for
 * whoever meant one-command mode (`corral -c npm start`, as dumb-init
 * takes it): the same line with the `--` that says so. */
static void hint_one_command(int argc, char **argv, int at)
{
	int program = command_line_one_command_program(argc, argv, at);
	if (!program)
		return;
	fprintf(stderr,
		"corral: the options before \"%s\" were taken as its own; to run a "
		"program under corral instead, write: corral",
		argv[at]);
	for (int i = 1; i < argc; i++)
		fprintf(stderr, "%s%s", i == program ? " -- " : " ", argv[i]);
	fputc('\n', stderr);
}

/* A word that can only be a config: a directory, or a file nobody may
 * execute, which one-command mode could not run as its program (`npm`, a
 * script, a name not there may be one). */
static bool names_a_config(const char *word)
{
	struct stat file;
	if (stat(word, &file) != 0)
		return false;
	return S_ISDIR(file.st_mode) || (S_ISREG(file.st_mode) && !(file.st_mode & 0111));
}

/* The FILE of a `-c FILE` (`--config FILE`) before the command when it
 * names a config; NULL otherwise. */
static const char *config_before(int at, char **argv)
{
	for (int i = 1; i + 1 < at; i++)
		if (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0)
			return names_a_config(argv[i + 1]) ? argv[i + 1] : NULL;
	return NULL;
}

/* After a usage error of a command whose options came before it. With a
 * config named there, the options were meant as they were read: only
 * `corral -c FILE check` (or run), written as `corral -c FILE status` is,
 * needs a word, as these two take the config as their argument. Else the
 * one-command line. */
static void hint_after_usage_error(int argc, char **argv, int at)
{
	const char *name = argv[at], *config = config_before(at, argv);
	if (!config)
		hint_one_command(argc, argv, at);
	else if (strcmp(name, "run") == 0 || strcmp(name, "check") == 0)
		fprintf(
		    stderr,
		    "corral: %s takes the config as its argument, not -c: write: corral %s %s\n",
		    name, name, config);
}

/* `corral [OPTIONS] COMMAND ...`: the options go to the command, as if
 * written after its name (git, kubectl). */
static int run_command_after_options(int argc, char **argv, int at, const struct command **command)
{
	*command = command_named(argv[at]);
	int moved_argc;
	char **moved = command_line_options_after(argc, argv, at, &moved_argc);
	int exit_code = (*command)->main(moved_argc, moved);
	free(moved);
	if (exit_code == COMMAND_USAGE_ERROR)
		hint_after_usage_error(argc, argv, at);
	return exit_code;
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
	if (name[0] == '-') {
		int at = command_line_find_command(argc, argv, command_names(),
						   sizeof(commands) / sizeof(commands[0]));
		if (at)
			return run_command_after_options(argc, argv, at, command);
		/* `corral -c app.yaml`, a command forgotten: without `--`,
		 * a config is not run as a program (exec would refuse it,
		 * 126, without saying what was meant). */
		int program = command_line_one_command_program(argc, argv, argc);
		if (program && names_a_config(argv[program])) {
			fprintf(stderr,
				"corral: %s is a config, not a program: name a command (corral "
				"-c %s status), or write: corral run %s\n",
				argv[program], argv[program], argv[program]);
			fprintf(stderr, "Run 'corral --help' for the commands.\n");
			return COMMAND_USAGE_ERROR;
		}
		*command = &one_command;
		return command_one(argc, argv);
	}
	*command = command_named(name);
	if (*command)
		return (*command)->main(argc - 1, argv + 1);
	/* One line, not the whole usage, so that the message stays in sight:
	 * a command misspelt, or a program named where a command goes (tini
	 * and dumb-init take `tini PROGRAM`; corral needs the `--`). */
	const char *nearest = suggest_nearest(name, strlen(name), command_names(),
					      sizeof(commands) / sizeof(commands[0]));
	if (names_a_config(name))
		fprintf(
		    stderr,
		    "corral: unknown command \"%s\"; to run that config, write: corral run %s\n",
		    name, name);
	else if (nearest)
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
