#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>

static bool quiet, verbose;

static void log_line(const char *format, va_list args)
{
	char line[1024];
	vsnprintf(line, sizeof(line), format, args);
	/* One write per message, so that lines never interleave. */
	fprintf(stderr, "corral: %s\n", line);
}

void log_message(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	log_line(format, args);
	va_end(args);
}

void log_info(const char *format, ...)
{
	if (quiet)
		return;
	va_list args;
	va_start(args, format);
	log_line(format, args);
	va_end(args);
}

void log_debug(const char *format, ...)
{
	if (!verbose)
		return;
	va_list args;
	va_start(args, format);
	log_line(format, args);
	va_end(args);
}

void log_set_quiet(bool value)
{
	quiet = value;
}

void log_set_verbose(bool value)
{
	verbose = value;
}
