/* corral scale GROUP/TASK=N...: how many instances a task written with
 * `instances:` has, changed while corral runs (supervisor/scale.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/control_client.h"
#include "config/model/config.h"

static void print_scale_usage(FILE *out)
{
	fprintf(out,
		"usage: corral scale [--socket PATH | -c CONFIG] [--json] GROUP/TASK=N...\n\n"
		"Gives a task written with instances: N instances while corral runs, as\n"
		"docker compose up --scale and process-compose's process scale do. More: new\n"
		"instances TASK@K start, each through its stage gate and what the task waits\n"
		"for (after:). Fewer: the highest-numbered stop, each as `corral stop` stops it\n"
		"(prekill hooks, its kill signal, its kill timeout), and are forgotten once\n"
		"dead. Every pair is applied together, or none. N is 0 to %d: at 0 the task\n"
		"stays defined with no instance running (kubectl scale --replicas=0), and a\n"
		"later scale brings instances back. The count holds until the next reload,\n"
		"which goes back to what the config says; status shows both.\n\n"
		"  --json         print corral's reply as JSON\n"
		"  --socket PATH  corral's control socket\n"
		"  -c, --config CONFIG\n"
		"                 the socket that CONFIG's socket: names\n"
		"\n" CONTROL_SOCKET_SEARCH_HELP,
		TASK_INSTANCES_MAX);
}

/* "web/worker=3" into the request's next pair; COMMAND_USAGE_ERROR after
 * saying why. */
static int add_pair(struct control_request *request, const char *argument)
{
	const char *equals = strrchr(argument, '=');
	char *end;
	unsigned long count = equals ? strtoul(equals + 1, &end, 10) : 0;
	if (!equals || equals == argument || !equals[1] || *end || equals[1] == '-' ||
	    count > TASK_INSTANCES_MAX)
		return command_usage_error("scale", print_scale_usage,
					   "expected GROUP/TASK=N (N from 0 to %d), not \"%s\"",
					   TASK_INSTANCES_MAX, argument);
	size_t length = (size_t)(equals - argument);
	if (length > CONTROL_TARGET_MAX)
		return command_usage_error("scale", print_scale_usage,
					   "invalid target: longer than %d characters",
					   CONTROL_TARGET_MAX);
	if (request->count_count == CONTROL_SCALE_MAX)
		return command_usage_error("scale", print_scale_usage,
					   "at most %d GROUP/TASK=N at once", CONTROL_SCALE_MAX);
	struct control_scale_count *pair = &request->counts[request->count_count++];
	snprintf(pair->target, sizeof(pair->target), "%.*s", (int)length, argument);
	pair->count = (unsigned)count;
	return 0;
}

int command_scale(int argc, char **argv)
{
	static const struct option options[] = {
	    CONTROL_SOCKET_OPTIONS,
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct control_scale_count counts[CONTROL_SCALE_MAX];
	struct control_request request = {.command = CONTROL_SCALE, .counts = counts};
	struct control_socket_choice socket_choice = {0};
	bool json = false;
	int option;

	optind = 1;
	while ((option = getopt_long(argc, argv, "c:h", options, NULL)) != -1) {
		switch (option) {
		case 'h':
			print_scale_usage(stdout);
			return 0;
		case 'j':
			json = true;
			break;
		default: {
			int code;
			if (command_common_option(&socket_choice, option, optarg, print_scale_usage,
						  &code))
				return code;
			break;
		}
		}
	}
	if (optind == argc)
		return command_usage_error("scale", print_scale_usage, "expected GROUP/TASK=N");
	for (int i = optind; i < argc; i++)
		if (add_pair(&request, argv[i]))
			return COMMAND_USAGE_ERROR;
	char error[512];
	if (control_request_validate(&request, error, sizeof(error)) < 0)
		return command_usage_error("scale", print_scale_usage, "%s", error);

	command_output_setup();
	struct control_connection connection;
	json_t *reply;
	const char *raw;
	if (control_connection_call(&connection, control_socket_path(&socket_choice), &request,
				    &reply, &raw) < 0)
		return 1;
	if (json)
		printf("%s\n", raw);
	else
		printf("%s\n", json_string_value(json_object_get(reply, "message")));
	json_decref(reply);
	control_connection_close(&connection);
	return command_output_flush();
}
