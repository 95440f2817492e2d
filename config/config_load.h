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
	/* A config of several files: their names, by location.file; else
	 * none, and every location is in the one file printed. */
	char **files;
	size_t file_count;
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

/* A config from several places, read as one (config_sources.c): each
 * directory gives its *.yaml and *.yml files in name order, then the files
 * are merged: groups of the same name combine their keys and tasks, and a
 * key or task written twice is an error naming both places. One plain file
 * is read as config_load_file does. The config's `sources` keep `paths`,
 * for a reload. */
struct config *config_load_paths(const char *const *paths, size_t count,
				 struct config_diagnostics *diagnostics);

/* The same with `profiles` active (compose's profiles: NULL-terminated
 * names, NULL for none): a group or task with `profiles:` is in the
 * config only when one of them is active; the config keeps the list for
 * a reload. */
struct config *config_load_paths_with_profiles(const char *const *paths, size_t count,
					       const char *const *profiles,
					       struct config_diagnostics *diagnostics);

/* The config (after merging and variables) as YAML, for `corral check
 * --print`, checked with `profiles` active. 0, or -1 with the
 * diagnostics. */
int config_print_paths(const char *const *paths, size_t count, const char *const *profiles,
		       FILE *out, struct config_diagnostics *diagnostics);

/* Prints each diagnostic as "PATH:LINE:COLUMN: message" (or "PATH: message"
 * for line 0), one per line; PATH is the diagnostic's file when the config
 * has several. */
void config_diagnostics_print(const struct config_diagnostics *diagnostics, const char *path,
			      FILE *out);
/* Diagnostic `index` as one line, as print writes it (without newline). */
void config_diagnostic_format(const struct config_diagnostics *diagnostics, size_t index,
			      const char *path, char *buffer, size_t size);

void config_diagnostics_free(struct config_diagnostics *diagnostics);
