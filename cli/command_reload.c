/* corral reload: the running corral loads its config again and applies
 * the difference (supervisor/reload.c); this prints the plan it applied,
 * or the errors that stopped it. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/control_client.h"

static void print_reload_usage(FILE *out)
{
	fprintf(out,
		"usage: corral reload [--socket PATH | -c CONFIG] [--dry-run] [--json] "
		"[--rerun-completed] "
		"[CONFIG]\n\n"
		"Loads the config again (the file corral runs, or CONFIG) and applies the\n"
		"difference while everything else keeps running, as SIGHUP does:\n"
		"  - a new group starts through its lifecycle; a removed one stops as at\n"
		"    shutdown (its poststop tasks run);\n"
		"  - a task whose command, env, user, isolation, hooks, lifecycle or\n"
		"    dependencies changed is replaced: stopped and started again;\n"
		"  - restart, kill, resources, readiness and health probes and log settings\n"
		"    change in place, without a new process (limits are written to its cgroup);\n"
		"  - unchanged tasks keep their process, restart count and logs.\n"
		"A config with an error changes nothing: every error is printed with\n"
		"FILE:LINE:COLUMN and corral goes on with the old config.\n\n"
		"  --dry-run          print the plan, apply nothing\n"
		"  --json             print corral's reply as JSON\n"
		"  --rerun-completed  a changed task that is dead (a one-shot that completed)\n"
		"                     runs again; by default it stays as it is\n"
		"  --socket PATH      corral's control socket\n"
		"  -c, --config CONFIG\n"
		"                     the socket that CONFIG's socket: names\n"
		"\n" CONTROL_SOCKET_SEARCH_HELP "\n"
		"Exit code: 0 when applied (or planned), 1 when refused, 3 when applied in\n"
		"part: the kernel refused a change (a memory limit below what the task uses),\n"
		"whose old value stays; --json names each in \"refused\".\n");
}

static void print_fields(const json_t *item)
{
	const json_t *fields = json_object_get(item, "fields");
	if (!json_array_size(fields))
		return;
	printf(" (");
	for (size_t i = 0; i < json_array_size(fields); i++)
		printf("%s%s", i ? ", " : "", json_string_value(json_array_get(fields, i)));
	printf(")");
}

static void print_items(const json_t *items, const char *key)
{
	for (size_t i = 0; i < json_array_size(items); i++) {
		const json_t *item = json_array_get(items, i);
		const char *action = json_string_value(json_object_get(item, "action"));
		printf("  %s %s: %s", key, json_string_value(json_object_get(item, key)),
		       strcmp(action, "updated") == 0 ? "updated in place" : action);
		print_fields(item);
		if (json_is_true(json_object_get(item, "rolling")))
			printf(", by a rolling restart");
		const char *warning = json_string_value(json_object_get(item, "warning"));
		if (warning)
			printf("; not applied: %s", warning);
		printf("\n");
	}
}

static void print_plan(const json_t *reply)
{
	const json_t *plan = json_object_get(reply, "plan");
	bool dry_run = json_is_true(json_object_get(reply, "dry_run"));
	size_t refused = json_array_size(json_object_get(reply, "refused"));
	printf("reload of %s: %s", json_string_value(json_object_get(reply, "path")),
	       dry_run   ? "plan (nothing applied)"
	       : refused ? "applied in part"
			 : "applied");
	if (refused)
		printf(" (%zu change%s refused)", refused, refused == 1 ? "" : "s");
	printf("\n");
	print_items(json_object_get(plan, "groups"), "group");
	print_items(json_object_get(plan, "tasks"), "task");
	json_int_t unchanged = json_integer_value(json_object_get(plan, "unchanged"));
	printf("  %lld task%s unchanged\n", (long long)unchanged, unchanged == 1 ? "" : "s");
	const json_t *http = json_object_get(reply, "http");
	if (json_is_string(http))
		printf("  http: %s\n", json_string_value(http));
}

int command_reload(int argc, char **argv)
{
	static const struct option options[] = {
	    CONTROL_SOCKET_OPTIONS,           {"dry-run", no_argument, NULL, 'n'},
	    {"json", no_argument, NULL, 'j'}, {"rerun-completed", no_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	struct control_request request = {.command = CONTROL_RELOAD};
	struct control_socket_choice socket_choice = {0};
	bool as_json = false;
	int option;

	optind = 1;
	while ((option = getopt_long(argc, argv, "c:h", options, NULL)) != -1) {
		switch (option) {
		case 'n':
			request.dry_run = true;
			break;
		case 'j':
			as_json = true;
			break;
		case 'r':
			request.rerun_completed = true;
			break;
		default: {
			int code;
			if (command_common_option(&socket_choice, option, optarg,
						  print_reload_usage, &code))
				return code;
			break;
		}
		}
	}
	if (argc - optind > 1)
		return command_usage_error("reload", print_reload_usage,
					   "expected at most one CONFIG, got %d", argc - optind);
	if (argc - optind == 1) {
		/* corral's working directory is not ours: send a full path. */
		char *absolute = realpath(argv[optind], NULL);
		if (!absolute) {
			perror(argv[optind]);
			return 1;
		}
		if (strlen(absolute) > CONTROL_PATH_MAX) {
			free(absolute);
			return command_usage_error("reload", print_reload_usage,
						   "CONFIG path too long");
		}
		snprintf(request.path, sizeof(request.path), "%s", absolute);
		free(absolute);
	}

	command_output_setup();
	const char *path = control_socket_path(&socket_choice);
	struct control_connection connection;
	json_t *reply = NULL;
	if (control_connection_open(&connection, path, &request) < 0)
		return 1;
	if (control_connection_read(&connection, &reply, NULL) != CONTROL_READ_LINE) {
		fprintf(stderr, "corral: %s: corral closed the connection without replying\n",
			path);
		control_connection_close(&connection);
		return 1;
	}
	control_connection_close(&connection);
	bool ok = json_is_true(json_object_get(reply, "ok"));
	if (as_json) {
		char *text = json_dumps(reply, JSON_COMPACT);
		printf("%s\n", text ? text : "{}");
		free(text);
	} else if (ok) {
		print_plan(reply);
	} else {
		control_connection_print_refusal(reply);
		const json_t *errors = json_object_get(reply, "errors");
		for (size_t i = 0; i < json_array_size(errors); i++)
			fprintf(stderr, "%s\n", json_string_value(json_array_get(errors, i)));
	}
	bool in_part = json_array_size(json_object_get(reply, "refused")) > 0;
	json_decref(reply);
	int flushed = command_output_flush();
	if (!ok)
		return 1;
	return flushed ? flushed : in_part ? COMMAND_APPLIED_IN_PART : 0;
}
