/* libFuzzer target: any bytes a hook writes to stdout must give a response
 * or an error message, never a crash, a leak or undefined behaviour, for
 * every stage. A response that passed holds only what the protocol
 * allows: absolute targets without "..". Pure: no host checks.
 *
 * The text is read as JSON once and that value checked for every stage
 * (hook_response_from_json, what hook_response_parse does after reading):
 * reading it once per stage was 84% of the run's time, in jansson. A text
 * that is not JSON goes through hook_response_parse, for its message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hooks/hook_protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_target(const char *target)
{
	if (!target)
		return;
	if (target[0] != '/' || strstr(target, "/../") ||
	    (strlen(target) >= 3 && strcmp(target + strlen(target) - 3, "/..") == 0))
		abort();
}

/* The result of one stage: a refusal says why, a response holds only
 * what the protocol allows. */
static void check_result(int result, struct hook_response *response, const char *error)
{
	if (result != 0) {
		if (!error[0])
			abort(); /* a refusal always says why */
		return;
	}
	for (size_t i = 0; i < response->additions.mount_count; i++)
		check_target(response->additions.mounts[i].target);
	for (size_t i = 0; i < response->additions.device_count; i++)
		check_target(response->additions.devices[i].target);
	hook_response_free(response);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hook_response response;
	char error[256];
	json_error_t json_error;
	json_t *root = json_loadb((const char *)data, size, HOOK_RESPONSE_JSON_FLAGS, &json_error);

	if (!root) {
		/* Not JSON (or blank): the same for every stage. */
		error[0] = '\0';
		check_result(hook_response_parse((const char *)data, size, HOOK_STAGE_PRESTART,
						 false, &response, error, sizeof(error)),
			     &response, error);
		return 0;
	}
	for (int stage = 0; stage < HOOK_STAGE_COUNT; stage++) {
		error[0] = '\0';
		check_result(hook_response_from_json(root, (enum hook_stage)stage, false, &response,
						     error, sizeof(error)),
			     &response, error);
	}
	json_decref(root);
	return 0;
}
