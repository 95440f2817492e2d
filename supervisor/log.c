#include "supervisor/log.h"

#include <stdarg.h>
#include <stdio.h>

void log_message(const char *format, ...)
{
	char line[1024];
	va_list args;
	va_start(args, format);
	vsnprintf(line, sizeof(line), format, args);
	va_end(args);
	/* One write per message, so that lines never interleave. */
	fprintf(stderr, "corral: %s\n", line);
}
