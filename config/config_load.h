/* YAML file -> validated struct config, with every error located.
 *
 * Pure: the only syscalls are the ones that read the file, and a stat(2)
 * of each device node in `isolation.devices` (config_devices.c says why). */
#pragma once

#include <stddef.h>
#include <stdio.h>

#include "config.h"

struct config_diagnostic {
	struct source_location location; /* line 0: the file as a whole */
	char *message;
};

struct config_diagnostics {
	struct config_diagnostic *items; /* sorted by location */
	size_t count;
};

/* Parses and validates `size` bytes of YAML that came from `path` (used for
 * messages only). On success returns a config and leaves `diagnostics`
 * empty; on any error returns NULL and fills `diagnostics` with every error
 * found, not only the first. */
struct config *config_parse_buffer(const char *path, const char *buffer, size_t size,
				   struct config_diagnostics *diagnostics);

/* Reads the file, then config_parse_buffer(). A file that cannot be read is
 * one diagnostic at line 0 naming the errno. */
struct config *config_load_file(const char *path, struct config_diagnostics *diagnostics);

/* Prints each diagnostic as "PATH:LINE:COLUMN: message" (or "PATH: message"
 * for line 0), one per line. */
void config_diagnostics_print(const struct config_diagnostics *diagnostics, const char *path,
			      FILE *out);

void config_diagnostics_free(struct config_diagnostics *diagnostics);
