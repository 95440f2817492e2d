#include "cli/import/import_report.h"

#include <stdarg.h>
#include <stdio.h>

static void place(const char *file, unsigned line)
{
	if (line)
		fprintf(stderr, "%s:%u: ", file, line);
	else
		fprintf(stderr, "%s: ", file);
}

void import_drop(struct import_report *report, const char *file, unsigned line, const char *setting,
		 const char *why, ...)
{
	place(file, line);
	fprintf(stderr, "%s: not carried over: ", setting);
	va_list arguments;
	va_start(arguments, why);
	vfprintf(stderr, why, arguments);
	va_end(arguments);
	fputc('\n', stderr);
	report->dropped++;
}

void import_error(struct import_report *report, const char *file, unsigned line, const char *format,
		  ...)
{
	place(file, line);
	va_list arguments;
	va_start(arguments, format);
	vfprintf(stderr, format, arguments);
	va_end(arguments);
	fputc('\n', stderr);
	report->errors++;
}
