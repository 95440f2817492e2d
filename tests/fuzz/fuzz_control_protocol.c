/* libFuzzer target: any bytes through the control request parser must give
 * a request or an error message, never a crash, a leak or undefined
 * behaviour. What it accepts must survive encode -> parse unchanged, and
 * what it refuses must make a JSON error reply. */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/control/control_protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error_reply(const char *error)
{
	char *reply = control_reply_error(error);
	json_t *parsed;

	if (!reply)
		abort();
	parsed = json_loads(reply, 0, NULL);
	if (!json_is_object(parsed) || !json_is_false(json_object_get(parsed, "ok")))
		abort();
	json_decref(parsed);
	free(reply);
}

static void check_round_trip(const struct control_request *request)
{
	struct control_request again;
	char error[512];
	char *line = control_request_encode(request);

	if (!line)
		abort();
	if (control_request_parse(line, strlen(line) - 1, &again, error, sizeof(error)) != 0)
		abort();
	if (again.command != request->command || strcmp(again.target, request->target) != 0 ||
	    again.signal_number != request->signal_number || again.follow != request->follow ||
	    again.tail != request->tail ||
	    (request->command == CONTROL_RESTART && again.restart_mode != request->restart_mode) ||
	    again.max_unavailable != request->max_unavailable ||
	    again.count_count != request->count_count)
		abort();
	/* scale's pairs, in whatever order the object gives them. */
	for (size_t i = 0; i < request->count_count; i++) {
		bool found = false;
		for (size_t j = 0; j < again.count_count && !found; j++)
			found = strcmp(again.counts[j].target, request->counts[i].target) == 0 &&
				again.counts[j].count == request->counts[i].count;
		if (!found)
			abort();
	}
	control_request_free(&again);
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct control_request request;
	char error[512];

	if (control_request_parse((const char *)data, size, &request, error, sizeof(error)) == 0) {
		check_round_trip(&request);
		control_request_free(&request);
	} else
		check_error_reply(error);
	return 0;
}
