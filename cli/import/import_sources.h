/* The importers of `corral import`, one per kind of source, each filling
 * the `groups` of one config. They return -1 when an input cannot be read
 * at all (said through the report), else 0, whatever they dropped. */
#pragma once

#include <stddef.h>

#include "cli/import/import_report.h"
#include "cli/import/yaml_tree.h"

enum import_kind {
	IMPORT_UNKNOWN,
	IMPORT_SYSTEMD,
	IMPORT_SUPERVISORD,
	IMPORT_PROCFILE,
	IMPORT_S6,
};

int systemd_import(char *const *paths, size_t count, struct ytree_node *config,
		   struct import_report *report);
int supervisord_import(const char *path, struct ytree_node *config, struct import_report *report);
int procfile_import(const char *path, struct ytree_node *config, struct import_report *report);
int s6_import(const char *path, struct ytree_node *config, struct import_report *report);
