/* A config's error messages, each where it was written: collected by
 * the YAML walk and the loader (config/load/config_load.h loads), sorted,
 * printed; and user text written into them safely. */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* Where something was written in the config file, 1-based. */
struct source_location {
	unsigned line;
	unsigned column;
	unsigned file; /* a config of several files: which one (config_diagnostics.files) */
};

struct config_diagnostic {
	struct source_location location; /* line 0: the file as a whole */
	char *message;
};

struct config_diagnostics {
	struct config_diagnostic *items; /* sorted by location */
	size_t count;
	/* A config of several files: their names, by location.file; else
	 * none, and every location is in the one file printed. */
	char **files;
	size_t file_count;
};

/* Parses and validates `size` bytes of YAML that came from `path` (used for
 * messages only). On success returns a config and leaves `diagnostics`
 * empty; on any error returns NULL and fills `diagnostics` with every error
 * found, not only the first. */

/* Prints each diagnostic as "PATH:LINE:COLUMN: message" (or "PATH: message"
 * for line 0), one per line; PATH is the diagnostic's file when the config
 * has several. */
void config_diagnostics_print(const struct config_diagnostics *diagnostics, const char *path,
			      FILE *out);
/* Diagnostic `index` as one line, as print writes it (without newline). */
void config_diagnostic_format(const struct config_diagnostics *diagnostics, size_t index,
			      const char *path, char *buffer, size_t size);

void config_diagnostics_free(struct config_diagnostics *diagnostics);

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
