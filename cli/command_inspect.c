/* corral inspect: what a task's run really got, and where each part came
 * from (supervisor/control/task_inspect.h), as text or as corral's JSON. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/control_client.h"

static void print_inspect_usage(FILE *out)
{
	fprintf(out, "usage: corral inspect [--socket PATH | -c CONFIG] [--json] [--show-secrets] "
		     "GROUP/TASK\n\n"
		     "Shows the effective definition of the task's current (or last) run, after\n"
		     "group defaults, prestart hooks and CDI: command, environment, user, mounts\n"
		     "and devices in the order applied, namespaces, capabilities, seccomp,\n"
		     "limits, dependencies and hooks; each variable, mount and device says\n"
		     "where it came from (config, hook NAME, cdi, corral).\n\n"
		     "  --json          corral's reply as JSON\n"
		     "  --show-secrets  values of variables named like secrets (PASSWORD,\n"
		     "                  TOKEN, *_KEY...), masked as *** otherwise; root and\n"
		     "                  corral's own user only\n"
		     "  --socket PATH   corral's control socket\n"
		     "  -c, --config CONFIG\n"
		     "                  the socket that CONFIG's socket: names\n"
		     "\n" CONTROL_SOCKET_SEARCH_HELP);
}

static const char *text_of(const json_t *object, const char *key)
{
	const char *value = json_string_value(json_object_get(object, key));
	return value ? value : "-";
}

static void print_words(const char *title, const json_t *list)
{
	printf("%-13s", title);
	if (json_is_string(list))
		printf(" %s", json_string_value(list));
	for (size_t i = 0; i < json_array_size(list); i++)
		printf(" %s", json_string_value(json_array_get(list, i)));
	if (!json_is_string(list) && !json_array_size(list))
		printf(" -");
	printf("\n");
}

static void print_text(const json_t *inspect)
{
	const json_t *pid = json_object_get(inspect, "pid");
	printf("%s  %s", text_of(inspect, "task"), text_of(inspect, "state"));
	if (json_is_integer(pid))
		printf("  pid %lld", (long long)json_integer_value(pid));
	printf("  cgroup %s\n", text_of(inspect, "cgroup"));
	print_words("command", json_object_get(inspect, "command"));
	printf("%-13s %s\n", "executable", text_of(inspect, "executable"));
	printf("%-13s %s\n", "cwd", text_of(inspect, "cwd"));
	const json_t *user = json_object_get(inspect, "user");
	printf("%-13s uid %lld gid %lld", "user",
	       (long long)json_integer_value(json_object_get(user, "uid")),
	       (long long)json_integer_value(json_object_get(user, "gid")));
	const json_t *groups = json_object_get(user, "groups");
	for (size_t i = 0; i < json_array_size(groups); i++)
		printf("%s%lld", i ? "," : " groups ",
		       (long long)json_integer_value(json_array_get(groups, i)));
	printf("\n");
	print_words("namespaces", json_object_get(inspect, "namespaces"));
	printf("%-13s %s\n", "hostname", text_of(inspect, "hostname"));
	printf("%-13s %s\n", "rootfs", text_of(inspect, "rootfs"));
	print_words("capabilities", json_object_get(inspect, "capabilities"));
	printf("%-13s %s, no_new_privileges %s\n", "seccomp", text_of(inspect, "seccomp"),
	       json_is_true(json_object_get(inspect, "no_new_privileges")) ? "yes" : "no");
	char *resources = json_dumps(json_object_get(inspect, "resources"), JSON_COMPACT);
	printf("%-13s %s\n", "resources", resources ? resources : "{}");
	free(resources);
	const json_t *after = json_object_get(inspect, "after");
	printf("%-13s", "after");
	for (size_t i = 0; i < json_array_size(after); i++)
		printf(" %s (%s)", text_of(json_array_get(after, i), "task"),
		       text_of(json_array_get(after, i), "condition"));
	printf("%s\n", json_array_size(after) ? "" : " -");
	const json_t *instances = json_object_get(inspect, "instances");
	if (json_is_object(instances)) {
		json_int_t configured =
		    json_integer_value(json_object_get(instances, "configured"));
		json_int_t now = json_integer_value(json_object_get(instances, "now"));
		const json_t *update = json_object_get(instances, "update");
		printf("%-13s %" JSON_INTEGER_FORMAT " of %s: %" JSON_INTEGER_FORMAT
		       " now, the config says %" JSON_INTEGER_FORMAT "%s; update: %s",
		       "instance", json_integer_value(json_object_get(instances, "number")),
		       text_of(instances, "task"), now, configured,
		       now != configured ? " (corral scale)" : "", text_of(update, "strategy"));
		if (json_is_integer(json_object_get(update, "max_unavailable")))
			printf(", %" JSON_INTEGER_FORMAT " at a time",
			       json_integer_value(json_object_get(update, "max_unavailable")));
		printf("\n");
	}
	const json_t *hooks = json_object_get(inspect, "hooks");
	printf("%-13s", "hooks");
	for (size_t i = 0; i < json_array_size(hooks); i++)
		printf(" %s: %s%s", text_of(json_array_get(hooks, i), "stage"),
		       text_of(json_array_get(hooks, i), "name"),
		       i + 1 < json_array_size(hooks) ? "," : "");
	printf("%s\n", json_array_size(hooks) ? "" : " -");
	if (!json_is_true(json_object_get(inspect, "prestart_ran")))
		printf("(it has not run yet: what hooks and CDI add is not known)\n");

	const json_t *mounts = json_object_get(inspect, "mounts");
	printf("mounts%s\n", json_array_size(mounts) ? "" : "        -");
	for (size_t i = 0; i < json_array_size(mounts); i++) {
		const json_t *mount = json_array_get(mounts, i);
		printf("  %-6s %s -> %s%s    from %s\n", text_of(mount, "type"),
		       text_of(mount, "source"), text_of(mount, "target"),
		       json_is_true(json_object_get(mount, "readonly")) ? " (ro)" : "",
		       text_of(mount, "from"));
	}
	const json_t *devices = json_object_get(inspect, "devices");
	printf("devices%s\n", json_array_size(devices) ? "" : "       -");
	for (size_t i = 0; i < json_array_size(devices); i++) {
		const json_t *device = json_array_get(devices, i);
		printf("  %s -> %s %s    from %s\n", text_of(device, "source"),
		       text_of(device, "target"), text_of(device, "permissions"),
		       text_of(device, "from"));
	}
	const json_t *env = json_object_get(inspect, "env");
	printf("env%s\n", json_is_true(json_object_get(inspect, "secrets_masked"))
			      ? " (secret values masked: --show-secrets)"
			      : "");
	for (size_t i = 0; i < json_array_size(env); i++) {
		const json_t *item = json_array_get(env, i);
		printf("  %s=%s    from %s\n", text_of(item, "name"), text_of(item, "value"),
		       text_of(item, "from"));
	}
}

int command_inspect(int argc, char **argv)
{
	static const struct option options[] = {
	    CONTROL_SOCKET_OPTIONS,
	    {"json", no_argument, NULL, 'j'},
	    {"show-secrets", no_argument, NULL, 'S'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct control_request request = {.command = CONTROL_INSPECT};
	struct control_socket_choice socket_choice = {0};
	bool as_json = false;
	int option;
	optind = 1;
	while ((option = getopt_long(argc, argv, "c:h", options, NULL)) != -1) {
		switch (option) {
		case 'j':
			as_json = true;
			break;
		case 'S':
			request.show_secrets = true;
			break;
		default: {
			int code;
			if (command_common_option(&socket_choice, option, optarg,
						  print_inspect_usage, &code))
				return code;
			break;
		}
		}
	}
	if (argc - optind != 1)
		return command_usage_error("inspect", print_inspect_usage, "expected GROUP/TASK");
	if (command_set_target("inspect", print_inspect_usage, &request, argv[optind]) != 0)
		return COMMAND_USAGE_ERROR;
	command_output_setup();
	struct control_connection connection;
	json_t *reply;
	if (control_connection_call(&connection, control_socket_path(&socket_choice), &request,
				    &reply, NULL) < 0)
		return 1;
	control_connection_close(&connection);
	const json_t *inspect = json_object_get(reply, "inspect");
	if (as_json) {
		char *text = json_dumps(inspect, JSON_COMPACT | JSON_PRESERVE_ORDER);
		printf("%s\n", text ? text : "{}");
		free(text);
	} else {
		print_text(inspect);
	}
	json_decref(reply);
	return command_output_flush();
}
