/* corral logs, corral events: what was kept, then (with -f) every new item
 * as it comes, until corral closes the stream or the user presses ^C. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/json_text.h"
#include "base/units.h"
#include "cli/commands.h"
#include "cli/control_client.h"

#define SOCKET_HELP                                                                                \
	"  --socket PATH  corral's control socket\n"                                               \
	"  -c, --config CONFIG\n"                                                                  \
	"                 the socket that CONFIG's socket: names\n"                                \
	"\n" CONTROL_SOCKET_SEARCH_HELP

static void print_logs_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: corral logs [-f] [-t] [--tail N] [--since WHEN] [--json] [--socket PATH | -c "
	    "CONFIG]\n"
	    "                   [GROUP/TASK | GROUP]\n\n"
	    "Prints the recent output lines corral kept for a task, for the tasks of a\n"
	    "group, or (without an operand) for every task, interleaved by time and\n"
	    "prefixed with \"group/task | \" when there are several.\n\n"
	    "  -f, --follow      then print every new line as it comes, until corral\n"
	    "                    stops or ^C\n"
	    "  -t, --timestamps  start each line with the time corral read it (UTC,\n"
	    "                    RFC 3339 with milliseconds)\n"
	    "  -n, --tail N      only the last N kept lines (0, the default: all)\n"
	    "  --since WHEN      only lines read since WHEN: a duration back from now\n"
	    "                    (10m, 1h30m) or a time (2026-11-24T10:00:00Z)\n"
	    "  --json            one JSON object per line: time, group, task, line\n" SOCKET_HELP);
}

static void print_events_usage(FILE *out)
{
	fprintf(out,
		"usage: corral events [-f] [--json] [--tail N] [--socket PATH | -c CONFIG]\n\n"
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
	bool json;         /* --json */
	bool timestamps;   /* logs --timestamps */
	bool one_task;     /* logs of one task: no task prefix */
	double since;      /* logs --since, seconds since the epoch; 0: all */
	/* The time of the last item printed: a stream followed again after
	 * a restore skips what it printed already. */
	double last_time;
	bool skip_through; /* after following again: until past last_time */
	int name_width;    /* events: column widths, growing to fit */
	int event_width;
};

/* "2026-11-24T10:00:00.123Z": a line's time, as Docker's --timestamps. */
static void format_utc_time(double seconds, char *buffer, size_t size)
{
	time_t whole = (time_t)seconds;
	struct tm utc;
	int milliseconds = (int)((seconds - (double)whole) * 1000.0);
	if (!(seconds >= 0 && seconds < 1e15) || !gmtime_r(&whole, &utc)) {
		snprintf(buffer, size, "-");
		return;
	}
	char date[32];
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &utc);
	unsigned thousandths = milliseconds < 0     ? 0
			       : milliseconds > 999 ? 999
						    : (unsigned)milliseconds;
	snprintf(buffer, size, "%s.%03uZ", date, thousandths % 1000);
}

/* --json: {"time","group","task","line"}, the fields log shippers take. */
static void print_log_json(double time, const char *task, const char *stream, const json_t *text)
{
	const char *slash = strchr(task, '/');
	json_t *object = json_object();
	json_object_set_new(object, "group",
			    slash ? json_stringn(task, (size_t)(slash - task)) : json_string(task));
	json_object_set_new(object, "task", json_string(slash ? slash + 1 : task));
	if (stream)
		json_object_set_new(object, "stream", json_string(stream));
	json_object_set_new(object, "line", json_copy((json_t *)text));
	/* The time as `run --log-format json` writes it: S.mmm. */
	uint64_t time_ms = time > 0 ? (uint64_t)(time * 1000.0 + 0.5) : 0;
	char *dumped = json_dumps_timed(time_ms, object);
	if (dumped)
		printf("%s\n", dumped);
	free(dumped);
	json_decref(object);
}

/* Whether an item at `time` is one not printed yet: once a stream is
 * followed again (follow_again), what the new corral still kept from
 * before is skipped, up to the last time printed. Items are in time
 * order. Counts what it lets through. */
static bool new_item(struct stream_command *command, double time)
{
	if (command->skip_through && time <= command->last_time)
		return false;
	command->skip_through = false;
	command->last_time = time;
	return true;
}

/* logs: the text of each line as the task wrote it, after its time (-t)
 * and its task (when there are several). A line from a task's separate
 * stderr goes to our stderr, as `docker logs` does. */
static void print_log_line(struct stream_command *command, const json_t *line)
{
	const json_t *text = json_object_get(line, "text");
	const char *task = json_string_value(json_object_get(line, "task"));
	const char *stream = json_string_value(json_object_get(line, "stream"));
	double time = json_number_value(json_object_get(line, "time"));

	if (!json_is_string(text) || (command->since && time < command->since) ||
	    !new_item(command, time))
		return;
	if (command->json) {
		print_log_json(time, task ? task : "?", stream, text);
		return;
	}
	FILE *out = stdout;
	if (stream && strcmp(stream, "stderr") == 0) {
		fflush(stdout); /* what came before it is seen before it */
		out = stderr;
	}
	if (command->timestamps) {
		char stamp[40];
		format_utc_time(time, stamp, sizeof(stamp));
		fprintf(out, "%s ", stamp);
	}
	if (!command->one_task)
		fprintf(out, "%s | ", task ? task : "?");
	fwrite(json_string_value(text), 1, json_string_length(text), out); /* NULs too */
	fputc('\n', out);
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

/* "group/task", "group" for a group event, "corral" for one of corral's
 * own (reload). */
static void format_event_name(const json_t *event, char *buffer, size_t size)
{
	const char *group = json_string_value(json_object_get(event, "group"));
	const char *task = json_string_value(json_object_get(event, "task"));

	if (task)
		snprintf(buffer, size, "%s/%s", group ? group : "?", task);
	else
		snprintf(buffer, size, "%s", group ? group : "corral");
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

	if (!new_item(command, json_number_value(json_object_get(event, "time"))))
		return;
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
		print_log_line(command, item);
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
		return -errno;
	int fd = signalfd(-1, &mask, SFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The stream ended without a word. corral stopping in order removes its
 * socket before it closes its followers, so a socket still there is a
 * corral that died: under a keeper its next loop answers on the same
 * socket (docs/decisions.md, "corral outlives its own death"), and the
 * follow goes on there, saying so, from after the last item printed.
 * True with `connection` following again. */
static bool follow_again(struct stream_command *command, struct control_connection *connection,
			 const struct control_request *request, const char *path)
{
	struct stat socket_file;
	if (!path || stat(path, &socket_file) < 0 || !S_ISSOCK(socket_file.st_mode))
		return false;
	struct control_request status = {.command = CONTROL_STATUS};
	snprintf(status.target, sizeof(status.target), "%s", request->target);
	struct control_connection asked;
	json_t *reply = NULL;
	if (control_connection_call(&asked, path, &status, &reply, NULL) < 0)
		return false;
	const json_t *self = json_object_get(reply, "corral");
	fprintf(stderr,
		"corral: the stream ended without corral stopping, and corral answers again "
		"(pid %" JSON_INTEGER_FORMAT ", restores %" JSON_INTEGER_FORMAT
		"): following again; what it read between the two may be missing\n",
		json_integer_value(json_object_get(self, "pid")),
		json_integer_value(json_object_get(self, "restores")));
	json_decref(reply);
	control_connection_close(&asked);
	int interrupt_fd = connection->interrupt_fd;
	control_connection_close(connection);
	if (control_connection_call(connection, path, request, &reply, NULL) < 0) {
		connection->interrupt_fd = interrupt_fd;
		return false;
	}
	connection->interrupt_fd = interrupt_fd;
	connection->output_fd = STDOUT_FILENO;
	command->skip_through = true;
	size_t i;
	json_t *item;
	json_array_foreach(json_object_get(reply, command->items), i, item)
	{
		print_item(command, item);
	}
	json_decref(reply);
	return command_output_flush() == 0;
}

/* Every object after the first reply is one item, until corral closes the
 * stream; {"ok": false, ...} is its last word when it cuts us off. */
static int follow_stream(struct stream_command *command, struct control_connection *connection,
			 const struct control_request *request, const char *path)
{
	json_t *item;

	int interrupt_fd = interrupt_fd_open();
	connection->output_fd = STDOUT_FILENO;
	if (interrupt_fd < 0) {
		fprintf(stderr, "corral: cannot watch for ^C: %s\n", strerror(-interrupt_fd));
		return 1;
	}
	connection->interrupt_fd = interrupt_fd;
	/* A corral that dies again and again is not followed for ever. */
	unsigned followed_again = 0;
	for (;;) {
		enum control_read_result result = control_connection_read(connection, &item, NULL);

		if (result == CONTROL_READ_CLOSED && followed_again < 100 &&
		    follow_again(command, connection, request, path)) {
			followed_again++;
			continue;
		}
		if (result == CONTROL_READ_CLOSED || result == CONTROL_READ_INTERRUPTED)
			break;
		if (result == CONTROL_READ_FAILED)
			goto fail;
		if (json_is_true(json_object_get(item, "ended"))) {
			json_decref(item); /* corral ended the stream: no more to follow */
			break;
		}
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

/* --since: a duration back from now ("10m") or a UTC time
 * ("2026-11-24T10:00:00Z", the Z optional); seconds since the epoch, or
 * -1. */
static double parse_since(const char *text)
{
	uint64_t ms;
	const char *why;
	if (parse_duration_ms(text, &ms, &why) == 0) {
		return (double)wall_clock_ns() / 1e9 - (double)ms / 1000.0;
	}
	struct tm utc = {0};
	const char *rest = strptime(text, "%Y-%m-%dT%H:%M:%S", &utc);
	if (!rest || (*rest && strcmp(rest, "Z") != 0))
		return -1;
	return (double)timegm(&utc);
}

static int run_stream_command(struct stream_command *command, struct control_request *request,
			      int argc, char **argv)
{
	static const struct option options[] = {
	    {"follow", no_argument, NULL, 'f'},     {"tail", required_argument, NULL, 'n'},
	    {"json", no_argument, NULL, 'j'},       CONTROL_SOCKET_OPTIONS,
	    {"timestamps", no_argument, NULL, 't'}, {"since", required_argument, NULL, 'S'},
	    {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
	};
	bool takes_target = request->command == CONTROL_LOGS;
	struct control_socket_choice socket_choice = {0};
	struct control_connection connection;
	const json_t *items, *item;
	json_t *reply;
	int option, exit_code;
	size_t i;

	optind = 1;
	while ((option = getopt_long(argc, argv, takes_target ? "c:fn:th" : "c:fn:h", options,
				     NULL)) != -1) {
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
			command->json = true;
			break;
		case 't':
		case 'S':
			/* Lines have times to show and to filter by; events
			 * show theirs anyway. */
			if (!takes_target)
				return command_usage_error(command->name, command->print_usage,
							   "unknown option --%s",
							   option == 't' ? "timestamps" : "since");
			if (option == 't') {
				command->timestamps = true;
			} else if ((command->since = parse_since(optarg)) < 0) {
				return command_usage_error(
				    command->name, command->print_usage,
				    "--since needs a duration (10m) or a time "
				    "(2026-11-24T10:00:00Z), not \"%s\"",
				    optarg);
			}
			break;
		default: {
			int code;
			if (command_common_option(&socket_choice, option, optarg,
						  command->print_usage, &code))
				return code;
			break;
		}
		}
	}
	if (takes_target && argc - optind > 1)
		return command_usage_error(command->name, command->print_usage,
					   "expected at most one GROUP/TASK or GROUP");
	if (!takes_target && argc - optind != 0)
		return command_usage_error(command->name, command->print_usage,
					   "takes no arguments, got \"%s\"", argv[optind]);
	const char *target = optind < argc ? argv[optind] : "";
	command->one_task = strchr(target, '/') != NULL;
	if (command_set_target(command->name, command->print_usage, request, target) != 0)
		return COMMAND_USAGE_ERROR;

	command_output_setup();
	const char *path = control_socket_path(&socket_choice);
	if (control_connection_call(&connection, path, request, &reply, NULL) < 0)
		return 1;
	/* The reply names a task when the target was one: a task written
	 * with `instances:` named as a whole is several, prefixed. */
	command->one_task = command->one_task && json_object_get(reply, "task") != NULL;
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
		exit_code = follow_stream(command, &connection, request, path);
	control_connection_close(&connection);
	return exit_code;
}

int command_logs(int argc, char **argv)
{
	struct stream_command command = {
	    .name = "logs", .print_usage = print_logs_usage, .items = "lines"};
	struct control_request request = {.command = CONTROL_LOGS};

	return run_stream_command(&command, &request, argc, argv);
}

int command_events(int argc, char **argv)
{
	/* The longest event name, "restart_requested", so that the
	 * messages line up from the start. */
	struct stream_command command = {.name = "events",
					 .print_usage = print_events_usage,
					 .items = "events",
					 .event_width = 17};
	struct control_request request = {.command = CONTROL_EVENTS};

	return run_stream_command(&command, &request, argc, argv);
}
