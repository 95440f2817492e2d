/* What `corral import` could not carry over, said on stderr as
 * FILE:LINE: SETTING: why, and counted: the exit code says whether
 * anything was left behind (2) or all was carried (0). */
#pragma once

#include <stddef.h>

struct import_report {
	size_t dropped;
	size_t errors;
};

/* A setting left out of the config: `setting` as written in the source
 * ("KillMode=process"), `why` what corral does instead or what to do. */
void import_drop(struct import_report *report, const char *file, unsigned line, const char *setting,
		 const char *why, ...) __attribute__((format(printf, 5, 6)));
/* Input that cannot be read at all (missing file, broken syntax). */
void import_error(struct import_report *report, const char *file, unsigned line, const char *format,
		  ...) __attribute__((format(printf, 4, 5)));
