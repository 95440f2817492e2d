/* libFuzzer target: whatever a probed server answers, reading its status
 * line gives a status, "read more" or "not HTTP", never a crash or a read
 * past what was received; a status is three digits, 100 to 999. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "supervisor/probes/http_status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int status = -1;
	int result = http_status_parse((const char *)data, size, &status);
	if (result == 1 && (status < 100 || status > 999))
		abort();
	if (result < -1 || result > 1)
		abort();
	return 0;
}
