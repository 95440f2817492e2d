/* libFuzzer target: any bytes through the config parser must give a config
 * or diagnostics, never a crash, a leak or undefined behaviour. */
#include <stddef.h>
#include <stdint.h>

#include "config/config_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_diagnostics diagnostics = {0};
	struct config *config =
		config_parse_buffer("fuzz.yaml", (const char *)data, size, &diagnostics);
	config_free(config);
	config_diagnostics_free(&diagnostics);
	return 0;
}
