/* libFuzzer target: any bytes a hook writes to stdout must give a response
 * or an error message, never a crash, a leak or undefined behaviour, for
 * every stage. A response that passed holds only what the protocol
 * allows: absolute targets without "..". Pure: no host checks. */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int stage = 0; stage < HOOK_STAGE_COUNT; stage++) {
		struct hook_response response;
		char error[256];
		error[0] = '\0';
		if (hook_response_parse((const char *)data, size, (enum hook_stage)stage, false,
					&response, error, sizeof(error)) != 0) {
			if (!error[0])
				abort(); /* a refusal always says why */
			continue;
		}
		for (size_t i = 0; i < response.additions.mount_count; i++)
			check_target(response.additions.mounts[i].target);
		for (size_t i = 0; i < response.additions.device_count; i++)
			check_target(response.additions.devices[i].target);
		hook_response_free(&response);
	}
	return 0;
}
