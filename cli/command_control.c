/* corral restart, stop, start, signal, shutdown, upgrade: one request that changes
 * what a running corral does, and its one-line answer. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/units.h"
#include "cli/commands.h"
#include "cli/control_client.h"
#include "config/model/config.h"

#define SOCKET_HELP                                                                                \
	"  --socket PATH  corral's control socket\n"                                               \
	"  -c, --config CONFIG\n"                                                                  \
	"                 the socket that CONFIG's socket: names\n"                                \
	"\n" CONTROL_SOCKET_SEARCH_HELP

static void print_restart_usage(FILE *out)
{
	fprintf(out,
		"usage: corral restart [--socket PATH | -c CONFIG] GROUP/TASK\n"
		"       corral restart [--socket PATH | -c CONFIG] --force GROUP/TASK\n"
		"       corral restart [--socket PATH | -c CONFIG] --all GROUP\n"
		"       corral restart [--socket PATH | -c CONFIG] --running GROUP\n"
		"       corral restart [--socket PATH | -c CONFIG] --rolling [--max-unavailable N] "
		"GROUP/TASK\n\n"
		"Restarts a running task: it is stopped with its kill signal and started\n"
		"again, without counting against its restart policy. A task that is not\n"
		"running is refused; --force runs it again.\n\n"
		"  --force        run the task again, dead or running; it waits on its\n"
		"                 stage gate, as any start does\n"
		"  --all          restart the whole group: its running tasks stop in reverse\n"
		"                 lifecycle order, then every task runs again in order\n"
		"  --running      restart every running task of GROUP, leave the others\n"
		"  --rolling      replace the instances of a task written with instances: one\n"
		"                 at a time, in order, each new one ready before the next old\n"
		"                 one stops (pm2 reload, a Kubernetes rolling update); waits\n"
		"                 until the roll is over, and exits 1 when a new instance never\n"
		"                 became ready (the roll stops there, the rest keep running)\n"
		"  --max-unavailable N\n"
		"                 with --rolling: N instances at a time (default 1)\n" SOCKET_HELP);
}

static void print_stop_usage(FILE *out)
{
	fprintf(out, "usage: corral stop [--socket PATH | -c CONFIG] GROUP/TASK\n\n"
		     "Stops a task with its kill signal. Its restart policy does not start it\n"
		     "again; 'corral start' does. A stopped main task or sidecar counts as dead\n"
		     "for its group's lifecycle: once every main task of a group is stopped,\n"
		     "its sidecars stop, its poststop tasks run and the group is finished, and\n"
		     "corral exits when every group is. To keep corral up with tasks stopped,\n"
		     "so that 'corral start' can run them again, start it with\n"
		     "'corral run --keep-running'.\n\n" SOCKET_HELP);
}

static void print_start_usage(FILE *out)
{
	fprintf(out, "usage: corral start [--socket PATH | -c CONFIG] GROUP/TASK\n\n"
		     "Runs a stopped or dead task again while its group is active, as\n"
		     "'corral restart --force' does: it waits on its stage gate. A running\n"
		     "task is refused ('corral restart' restarts it); for a pending one it\n"
		     "says what the task waits for.\n\n" SOCKET_HELP);
}

static void print_signal_usage(FILE *out)
{
	fprintf(out, "usage: corral signal [--socket PATH | -c CONFIG] GROUP/TASK SIGNAL\n\n"
		     "Sends SIGNAL to the task's main process. SIGNAL is a name (HUP, SIGHUP,\n"
		     "SIGRTMIN+1) or a number.\n\n" SOCKET_HELP);
}

static void print_shutdown_usage(FILE *out)
{
	fprintf(out, "usage: corral shutdown [--socket PATH | -c CONFIG]\n\n"
		     "Shuts corral down gracefully, as SIGTERM does: main tasks and sidecars\n"
		     "stop, poststop tasks run, then corral exits.\n\n" SOCKET_HELP);
}

static void print_upgrade_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: corral upgrade [--socket PATH | -c CONFIG] [BINARY]\n\n"
	    "Replaces the running corral with BINARY (default: corral's own binary as it\n"
	    "is on disk now, which a package upgrade may have replaced) in the same\n"
	    "process, as systemd's daemon-reexec does: every task runs on with its pid,\n"
	    "its output pipes (no line is lost), its restart counts and timers;\n"
	    "followers of 'logs -f' and 'events -f' stay connected. BINARY is first\n"
	    "run with --handover-format and must read the format this corral writes;\n"
	    "a BINARY, or a directory on its way, that others than root and corral's\n"
	    "user may write is refused, and the very file checked is what runs.\n"
	    "A BINARY that cannot take over leaves the running corral as it was, and\n"
	    "this command says why (exit 1). SIGUSR2 to corral does the same with its\n"
	    "own binary. The config is not read again: 'corral reload' does that.\n\n" SOCKET_HELP);
}

struct control_command_spec {
	const char *name;
	enum control_command command;
	void (*print_usage)(FILE *out);
	const char *operands; /* for "expected ..." messages; NULL: none */
	int operand_count;
};

static const struct control_command_spec restart_spec = {
    "restart", CONTROL_RESTART, print_restart_usage, "GROUP/TASK (or GROUP with --all, --running)",
    1};
static const struct control_command_spec stop_spec = {"stop", CONTROL_STOP, print_stop_usage,
						      "GROUP/TASK", 1};
static const struct control_command_spec start_spec = {"start", CONTROL_START, print_start_usage,
						       "GROUP/TASK", 1};
static const struct control_command_spec signal_spec = {
    "signal", CONTROL_SIGNAL, print_signal_usage, "GROUP/TASK and a SIGNAL", 2};
static const struct control_command_spec shutdown_spec = {"shutdown", CONTROL_SHUTDOWN,
							  print_shutdown_usage, NULL, 0};
static const struct control_command_spec upgrade_spec = {"upgrade", CONTROL_UPGRADE,
							 print_upgrade_usage, NULL, 0};

/* A name as kill(1) takes it, or a number, as kill(1) also takes. */
static int parse_signal_argument(const char *text)
{
	char *end;
	long number;

	if (text[0] >= '0' && text[0] <= '9') {
		number = strtol(text, &end, 10);
		if (*end || number <= 0 || number > SIGRTMAX ||
		    strcmp(signal_name((int)number), "SIG?") == 0)
			return -1;
		return (int)number;
	}
	number = parse_signal_name(text);
	return number > 0 ? (int)number : -1;
}

/* restart's flags: at most one of them. */
static int set_restart_mode(const struct control_command_spec *spec,
			    struct control_request *request, enum control_restart_mode mode,
			    const char **chosen, const char *flag)
{
	if (*chosen && strcmp(*chosen, flag) != 0)
		return command_usage_error(spec->name, spec->print_usage,
					   "%s and %s cannot be used together", *chosen, flag);
	*chosen = flag;
	request->restart_mode = mode;
	return 0;
}

/* Only restart has flags of its own, so that "stop --all" is an unknown
 * option rather than silently ignored. */
static const struct option common_options[] = {
    CONTROL_SOCKET_OPTIONS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
static const struct option restart_options[] = {
    CONTROL_SOCKET_OPTIONS,
    {"help", no_argument, NULL, 'h'},
    {"force", no_argument, NULL, 'F'},
    {"all", no_argument, NULL, 'A'},
    {"running", no_argument, NULL, 'R'},
    {"rolling", no_argument, NULL, 'L'},
    {"max-unavailable", required_argument, NULL, 'M'},
    {NULL, 0, NULL, 0},
};

/* After --rolling's first reply: a line as each instance is replaced,
 * then one that says how the roll ended. 0 when it was done, 1 when it
 * stopped (or the connection went first). */
static int follow_roll(struct control_connection *connection)
{
	for (;;) {
		json_t *line = NULL;
		enum control_read_result result = control_connection_read(connection, &line, NULL);
		if (result != CONTROL_READ_LINE) {
			if (result == CONTROL_READ_CLOSED)
				fprintf(stderr, "corral: the connection closed before the rolling "
						"restart ended (see corral status)\n");
			return 1;
		}
		const char *message = json_string_value(json_object_get(line, "message"));
		bool done = json_is_true(json_object_get(line, "done"));
		bool ok = json_is_true(json_object_get(line, "ok"));
		const char *task = json_string_value(json_object_get(line, "task"));
		if (done && !ok)
			fprintf(stderr, "corral: %s: %s\n", task ? task : "?",
				message ? message : "the rolling restart stopped");
		else if (done)
			printf("%s: %s\n", task ? task : "?", message ? message : "done");
		else if (message)
			printf("%s\n", message);
		fflush(stdout);
		json_decref(line);
		if (done)
			return ok ? 0 : 1;
	}
}

static int run_control_command(const struct control_command_spec *spec, int argc, char **argv)
{
	const struct option *options =
	    spec->command == CONTROL_RESTART ? restart_options : common_options;
	struct control_request request = {.command = spec->command};
	struct control_connection connection;
	struct control_socket_choice socket_choice = {0};
	const char *restart_flag = NULL, *message;
	json_t *reply;
	int option, exit_code;

	optind = 1;
	while ((option = getopt_long(argc, argv, "c:h", options, NULL)) != -1) {
		switch (option) {
		case 'h':
			spec->print_usage(stdout);
			return 0;
		case 'F':
			exit_code = set_restart_mode(spec, &request, CONTROL_RESTART_FORCE,
						     &restart_flag, "--force");
			if (exit_code)
				return exit_code;
			break;
		case 'A':
			exit_code = set_restart_mode(spec, &request, CONTROL_RESTART_ALL,
						     &restart_flag, "--all");
			if (exit_code)
				return exit_code;
			break;
		case 'R':
			exit_code = set_restart_mode(spec, &request, CONTROL_RESTART_RUNNING,
						     &restart_flag, "--running");
			if (exit_code)
				return exit_code;
			break;
		case 'L':
			exit_code = set_restart_mode(spec, &request, CONTROL_RESTART_ROLLING,
						     &restart_flag, "--rolling");
			if (exit_code)
				return exit_code;
			break;
		case 'M': {
			char *end;
			unsigned long count = strtoul(optarg, &end, 10);
			if (!*optarg || *end || optarg[0] == '-' || count < 1 ||
			    count > TASK_INSTANCES_MAX)
				return command_usage_error(spec->name, spec->print_usage,
							   "--max-unavailable takes a whole number "
							   "from 1 to %d, not \"%s\"",
							   TASK_INSTANCES_MAX, optarg);
			request.max_unavailable = (unsigned)count;
			break;
		}
		default: {
			int code;
			if (command_common_option(&socket_choice, option, optarg, spec->print_usage,
						  &code))
				return code;
			break;
		}
		}
	}
	/* upgrade's BINARY: absolute, since corral's directory is not ours. */
	if (spec->command == CONTROL_UPGRADE && argc - optind > 1)
		return command_usage_error(spec->name, spec->print_usage,
					   "takes one BINARY at most, got \"%s\" too",
					   argv[optind + 1]);
	if (spec->command == CONTROL_UPGRADE && argc - optind == 1) {
		const char *binary = argv[optind];
		char *absolute = realpath(binary, NULL);
		char cwd[PATH_MAX];
		/* One that is not there is still ours to make absolute, so
		 * that corral says it is missing, not that it is relative. */
		if (absolute)
			snprintf(request.path, sizeof(request.path), "%s", absolute);
		else if (binary[0] != '/' && getcwd(cwd, sizeof(cwd)))
			snprintf(request.path, sizeof(request.path), "%s/%s", cwd, binary);
		else
			snprintf(request.path, sizeof(request.path), "%s", binary);
		free(absolute);
		optind++;
	}
	if (argc - optind != spec->operand_count) {
		if (spec->operand_count == 0)
			return command_usage_error(spec->name, spec->print_usage,
						   "takes no arguments, got \"%s\"", argv[optind]);
		return command_usage_error(spec->name, spec->print_usage, "expected %s",
					   spec->operands);
	}
	if (spec->command == CONTROL_SIGNAL) {
		request.signal_number = parse_signal_argument(argv[optind + 1]);
		if (request.signal_number < 0)
			return command_usage_error(spec->name, spec->print_usage,
						   "unknown signal \"%s\"", argv[optind + 1]);
	}
	if (command_set_target(spec->name, spec->print_usage, &request,
			       spec->operand_count ? argv[optind] : "") != 0)
		return COMMAND_USAGE_ERROR;

	command_output_setup();
	if (control_connection_call(&connection, control_socket_path(&socket_choice), &request,
				    &reply, NULL) < 0)
		return 1;
	message = json_string_value(json_object_get(reply, "message"));
	if (message)
		printf("%s\n", message);
	json_decref(reply);
	exit_code = 0;
	if (request.restart_mode == CONTROL_RESTART_ROLLING && spec->command == CONTROL_RESTART) {
		fflush(stdout);
		exit_code = follow_roll(&connection);
	}
	control_connection_close(&connection);
	int flushed = command_output_flush();
	return exit_code ? exit_code : flushed;
}

int command_upgrade(int argc, char **argv)
{
	return run_control_command(&upgrade_spec, argc, argv);
}

int command_restart(int argc, char **argv)
{
	return run_control_command(&restart_spec, argc, argv);
}

int command_stop(int argc, char **argv)
{
	return run_control_command(&stop_spec, argc, argv);
}

int command_start(int argc, char **argv)
{
	return run_control_command(&start_spec, argc, argv);
}

int command_signal(int argc, char **argv)
{
	return run_control_command(&signal_spec, argc, argv);
}

int command_shutdown(int argc, char **argv)
{
	return run_control_command(&shutdown_spec, argc, argv);
}
