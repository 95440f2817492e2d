/* libFuzzer target: any bytes as an env file give variables or an error
 * with a line, never a crash, a leak or a read past the input; a variable
 * has a valid name. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "config/text/env_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(void *context, const char *name, size_t name_length, const char *value,
		  size_t value_length)
{
	(void)context;
	(void)value;
	(void)value_length;
	if (!name_length)
		abort();
	for (size_t i = 0; i < name_length; i++) {
		char c = name[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
		      (i && c >= '0' && c <= '9')))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned line = 0;
	char error[160];
	if (env_file_parse((const char *)data, size, check, NULL, &line, error, sizeof(error)) <
		0 &&
	    line == 0)
		abort();
	return 0;
}
