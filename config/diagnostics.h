/* Collecting the loader's error messages (the public side is in
 * config_load.h), and writing user text into them safely. */
#pragma once

#include <stddef.h>

#include "config/config_load.h"

/* Adds one message at `location`; the list is sorted once, at the end. */
void diagnostics_add(struct config_diagnostics *diagnostics, struct source_location location,
		     const char *format, ...) __attribute__((format(printf, 3, 4)));

/* By line then column; messages at the same place keep the order in which
 * they were found. */
void diagnostics_sort(struct config_diagnostics *diagnostics);

/* User text for a message: in double quotes, with control characters,
 * quotes and backslashes escaped so that one message stays one line, and
 * cut short with "..." when long. A struct so that it can be used inline:
 * diagnostics_add(..., "%s", quote(key, length).text) -- the temporary lives
 * until the end of the full expression (C11 6.2.4p8). */
struct quoted {
	char text[96];
};
struct quoted quote(const char *text, size_t length);
