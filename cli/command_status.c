/* corral status: the state of a running corral's groups and tasks. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/control_client.h"
#include "cli/status_table.h"
#include "supervisor/control/status_ready.h"

static void print_status_usage(FILE *out)
{
	fprintf(out, "usage: corral status [--json | --ready] [--socket PATH | -c CONFIG] [GROUP | "
		     "GROUP/TASK]\n\n"
		     "Shows every group (or one group, or one task) of a running corral: the\n"
		     "group's lifecycle state, and for each task its stage, state, pid, uptime,\n"
		     "CPU, memory and pids, restarts, last exit and when it restarts next.\n\n"
		     "  --json         print the reply as corral sent it: one JSON object\n"
		     "  --ready        exit 0 when every main task and sidecar (of GROUP, or of\n"
		     "                 all groups) is running and ready, else 1: for\n"
		     "                 Kubernetes exec probes and Nomad script checks\n"
		     "  --socket PATH  corral's control socket\n"
		     "  -c, --config CONFIG\n"
		     "                 the socket that CONFIG's socket: names\n"
		     "\n" CONTROL_SOCKET_SEARCH_HELP);
}

/* The table of the reply line `raw`; under it, for one task (or its
 * instances), room for what the row leaves out. An exit code. */
static int write_table(char *raw, bool one_task)
{
	struct json_view view;
	char error[128];
	if (json_view_parse(&view, raw, strlen(raw), error, sizeof(error)) < 0) {
		fprintf(stderr, "corral: corral sent a status reply that is not JSON: %s\n", error);
		return 1;
	}
	int exit_code = 0;
	if (status_table_write(stdout, view.values) < 0) {
		fprintf(stderr, "corral: the status reply has no \"groups\" list\n");
		exit_code = 1;
	} else if (one_task) {
		status_table_write_memory(stdout, view.values);
	}
	json_view_free(&view);
	return exit_code;
}

int command_status(int argc, char **argv)
{
	static const struct option options[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"ready", no_argument, NULL, 'r'},
	    CONTROL_SOCKET_OPTIONS,
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct control_request request = {.command = CONTROL_STATUS};
	struct control_connection connection;
	struct control_socket_choice socket_choice = {0};
	const char *raw;
	bool json = false, ready = false;
	json_t *reply;
	int option, exit_code;

	optind = 1;
	while ((option = getopt_long(argc, argv, "c:h", options, NULL)) != -1) {
		switch (option) {
		case 'j':
			json = true;
			break;
		case 'r':
			ready = true;
			break;
		default: {
			int code;
			if (command_common_option(&socket_choice, option, optarg,
						  print_status_usage, &code))
				return code;
			break;
		}
		}
	}
	if (json && ready)
		return command_usage_error("status", print_status_usage,
					   "--json and --ready do not go together");
	if (argc - optind > 1)
		return command_usage_error("status", print_status_usage,
					   "expected at most one GROUP or GROUP/TASK, got %s too",
					   argv[optind + 1]);
	if (command_set_target("status", print_status_usage, &request,
			       optind < argc ? argv[optind] : "") != 0)
		return COMMAND_USAGE_ERROR;

	command_output_setup();
	/* The table reads the reply through a json_view, not jansson, whose
	 * tree of a 1000-task reply took most of the command's time. */
	if ((ready ? control_connection_call : control_connection_call_raw)(
		&connection, control_socket_path(&socket_choice), &request, &reply, &raw) < 0)
		return 1;
	exit_code = 0;
	if (ready) {
		exit_code = status_ready_check(stdout, reply) == 0 ? 0 : 1;
	} else if (json) {
		/* As received: scripts get exactly what the protocol documents. */
		printf("%s\n", raw);
	} else {
		/* Parsed in place: the line is the connection's own buffer,
		 * which nothing reads again. */
		exit_code = write_table((char *)raw, strchr(request.target, '/') != NULL);
	}
	json_decref(reply);
	control_connection_close(&connection);
	return command_output_flush() ? 1 : exit_code;
}
