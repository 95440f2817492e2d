/* corral logs, corral events: what was kept, then (with -f) every new item
 * as it comes, until corral closes the stream or the user presses ^C. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/commands.h"
#include "supervisor/control_client.h"

#define SOCKET_HELP                                                                                \
	"  --socket PATH  corral's control socket (default: $CORRAL_SOCKET, else\n"                \
	"                 " CONTROL_SOCKET_DEFAULT ")\n"

static void print_logs_usage(FILE *out)
{
	fprintf(out,
		"usage: corral logs [-f] [--tail N] [--socket PATH] GROUP/TASK\n\n"
		"Prints the recent output lines corral kept for a task.\n\n"
		"  -f, --follow   then print every new line as it comes, until corral\n"
		"                 stops or ^C\n"
		"  -n, --tail N   only the last N kept lines (0, the default: all)\n" SOCKET_HELP);
}

static void print_events_usage(FILE *out)
{
	fprintf(out,
		"usage: corral events [-f] [--json] [--tail N] [--socket PATH]\n\n"
		"Prints recent task and group events, one per line:\n"
		"  TIME  GROUP/TASK  EVENT  MESSAGE\n\n"
		"  -f, --follow   then print every new event as it comes, until corral\n"
		"                 stops or ^C\n"
		"  --json         one JSON object per event, as 'corral run --events' writes\n"
		"  -n, --tail N   only the last N kept events (0, the default: all)\n" SOCKET_HELP);
}

struct stream_command {
	const char *name;
	void (*print_usage)(FILE *out);
	const char *items; /* the reply's array of kept items */
	bool json;         /* events --json */
	int name_width;    /* events: column widths, growing to fit */
	int event_width;
};

/* logs: the text of each line, as the task wrote it. */
static void print_log_line(const json_t *line)
{
	const json_t *text = json_object_get(line, "text");

	if (json_is_string(text))
		printf("%s\n", json_string_value(text));
}

/* "14:03:07.123" in local time; the date is rarely in doubt for recent
 * events, and --json has the full timestamp. */
static void format_event_time(const json_t *time_value, char *buffer, size_t size)
{
	double seconds = json_number_value(time_value);
	time_t whole_seconds;
	struct tm local;
	int milliseconds;

	/* Times are seconds since the epoch, so positive: truncating is
	 * rounding down. The range check keeps the conversion defined. */
	if (!json_is_number(time_value) || !(seconds >= 0 && seconds < 1e15)) {
		snprintf(buffer, size, "--:--:--.---");
		return;
	}
	whole_seconds = (time_t)seconds;
	milliseconds = (int)((seconds - (double)whole_seconds) * 1000.0);
	if (milliseconds > 999)
		milliseconds = 999;
	if (!localtime_r(&whole_seconds, &local)) {
		snprintf(buffer, size, "--:--:--.---");
		return;
	}
	snprintf(buffer, size, "%02d:%02d:%02d.%03d", local.tm_hour, local.tm_min, local.tm_sec,
		 milliseconds);
}

/* "group/task", or "group" for a group event. */
static void format_event_name(const json_t *event, char *buffer, size_t size)
{
	const char *group = json_string_value(json_object_get(event, "group"));
	const char *task = json_string_value(json_object_get(event, "task"));

	if (task)
		snprintf(buffer, size, "%s/%s", group ? group : "?", task);
	else
		snprintf(buffer, size, "%s", group ? group : "?");
}

/* Widths only grow: the kept events are measured before any is printed,
 * and a later, longer name pushes only what follows it. */
static void measure_event(struct stream_command *command, const json_t *event)
{
	const char *type = json_string_value(json_object_get(event, "event"));
	char name[2 * CONTROL_TARGET_MAX];
	int length;

	format_event_name(event, name, sizeof(name));
	length = (int)strlen(name);
	if (length > command->name_width)
		command->name_width = length;
	length = type ? (int)strlen(type) : 1;
	if (length > command->event_width)
		command->event_width = length;
}

static void print_event(struct stream_command *command, const json_t *event)
{
	const char *type = json_string_value(json_object_get(event, "event"));
	const char *message = json_string_value(json_object_get(event, "message"));
	const json_t *pid = json_object_get(event, "pid");
	char time_text[32], name[2 * CONTROL_TARGET_MAX];

	if (command->json) {
		char *line = json_dumps(event, JSON_COMPACT);

		if (line)
			printf("%s\n", line);
		free(line);
		return;
	}
	format_event_time(json_object_get(event, "time"), time_text, sizeof(time_text));
	format_event_name(event, name, sizeof(name));
	measure_event(command, event);
	printf("%s  %-*s  %-*s  %s", time_text, command->name_width, name, command->event_width,
	       type ? type : "?", message ? message : "");
	if (json_is_integer(pid))
		printf(" (pid %" JSON_INTEGER_FORMAT ")", json_integer_value(pid));
	putchar('\n');
}

static void print_item(struct stream_command *command, const json_t *item)
{
	if (strcmp(command->name, "logs") == 0)
		print_log_line(item);
	else
		print_event(command, item);
}

/* ^C while following is how one stops: exit 0, without a word. SIGINT is
 * read from a signalfd, which the reader polls next to the socket. */
static int interrupt_fd_open(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -1;
	return signalfd(-1, &mask, SFD_CLOEXEC);
}

/* Every object after the first reply is one item, until corral closes the
 * stream; {"ok": false, ...} is its last word when it cuts us off. */
static int follow_stream(struct stream_command *command, struct control_connection *connection)
{
	json_t *item;

	connection->interrupt_fd = interrupt_fd_open();
	connection->output_fd = STDOUT_FILENO;
	if (connection->interrupt_fd < 0) {
		fprintf(stderr, "corral: cannot watch for ^C: %m\n");
		return 1;
	}
	for (;;) {
		enum control_read_result result = control_connection_read(connection, &item, NULL);

		if (result == CONTROL_READ_CLOSED || result == CONTROL_READ_INTERRUPTED)
			break;
		if (result == CONTROL_READ_FAILED)
			goto fail;
		if (json_is_false(json_object_get(item, "ok"))) {
			control_connection_print_refusal(item);
			json_decref(item);
			goto fail;
		}
		print_item(command, item);
		json_decref(item);
		if (command_output_flush() != 0)
			goto fail;
		if (command_output_closed())
			break;
	}
	close(connection->interrupt_fd);
	return 0;
fail:
	close(connection->interrupt_fd);
	return 1;
}

static int parse_tail(const char *text, unsigned *tail)
{
	char *end;
	unsigned long long value;

	if (text[0] < '0' || text[0] > '9')
		return -1;
	value = strtoull(text, &end, 10);
	if (*end || value > UINT_MAX)
		return -1;
	*tail = (unsigned)value;
	return 0;
}

static int run_stream_command(struct stream_command *command, struct control_request *request,
			      int argc, char **argv)
{
	static const struct option options[] = {
	    {"follow", no_argument, NULL, 'f'}, {"tail", required_argument, NULL, 'n'},
	    {"json", no_argument, NULL, 'j'},   {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},   {NULL, 0, NULL, 0},
	};
	bool takes_target = request->command == CONTROL_LOGS;
	const char *socket_option = NULL;
	struct control_connection connection;
	const json_t *items, *item;
	json_t *reply;
	int option, exit_code;
	size_t i;

	optind = 1;
	while ((option = getopt_long(argc, argv, "fn:h", options, NULL)) != -1) {
		switch (option) {
		case 'f':
			request->follow = true;
			break;
		case 'n':
			if (parse_tail(optarg, &request->tail) < 0)
				return command_usage_error(command->name, command->print_usage,
							   "--tail needs a whole number >= 0, not "
							   "\"%s\"",
							   optarg);
			break;
		case 'j':
			/* Only events have JSON items worth passing on. */
			if (takes_target)
				return command_usage_error(command->name, command->print_usage,
							   "unknown option --json");
			command->json = true;
			break;
		case 's':
			socket_option = optarg;
			break;
		case 'h':
			command->print_usage(stdout);
			return 0;
		default:
			command->print_usage(stderr);
			return COMMAND_USAGE_ERROR;
		}
	}
	if (takes_target && argc - optind != 1)
		return command_usage_error(command->name, command->print_usage,
					   "expected one GROUP/TASK");
	if (!takes_target && argc - optind != 0)
		return command_usage_error(command->name, command->print_usage,
					   "takes no arguments, got \"%s\"", argv[optind]);
	if (command_set_target(command->name, command->print_usage, request,
			       takes_target ? argv[optind] : "") != 0)
		return COMMAND_USAGE_ERROR;

	command_output_setup();
	if (control_connection_call(&connection, control_socket_path(socket_option), request,
				    &reply, NULL) < 0)
		return 1;
	items = json_object_get(reply, command->items);
	if (!command->json && request->command == CONTROL_EVENTS) {
		json_array_foreach(items, i, item)
		{
			measure_event(command, item);
		}
	}
	json_array_foreach(items, i, item)
	{
		print_item(command, item);
	}
	json_decref(reply);
	exit_code = command_output_flush();
	if (exit_code == 0 && request->follow && !command_output_closed())
		exit_code = follow_stream(command, &connection);
	control_connection_close(&connection);
	return exit_code;
}

int command_logs(int argc, char **argv)
{
	struct stream_command command = {"logs", print_logs_usage, "lines", false, 0, 0};
	struct control_request request = {.command = CONTROL_LOGS};

	return run_stream_command(&command, &request, argc, argv);
}

int command_events(int argc, char **argv)
{
	/* The longest event name, "restart_requested", so that the
	 * messages line up from the start. */
	struct stream_command command = {"events", print_events_usage, "events", false, 0, 17};
	struct control_request request = {.command = CONTROL_EVENTS};

	return run_stream_command(&command, &request, argc, argv);
}
