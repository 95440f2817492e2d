/* libFuzzer target: any bytes through the CDI spec parser must give a spec
 * or one located error, never a crash, a leak or undefined behaviour. */
#include <stddef.h>
#include <stdint.h>

#include "hooks/cdi_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cdi_spec spec;
	char error[512];

	if (cdi_spec_parse("fuzz.yaml", (const char *)data, size, &spec, error, sizeof(error)) == 0)
		cdi_spec_free(&spec);
	return 0;
}
