/* YAML file -> validated struct config, with every error located.
 *
 * Pure: the only syscalls are the ones that read the file, and a stat(2)
 * of each device node in `isolation.devices` (config_devices.c says why). */
#pragma once

#include <stddef.h>
#include <stdio.h>

#include "config/model/config.h"
#include "config/yaml/diagnostics.h"

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
