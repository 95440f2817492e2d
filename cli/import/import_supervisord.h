/* What the supervisord importers share (import_supervisord.c reads the
 * files and makes the groups, import_supervisord_program.c makes a
 * program's tasks). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cli/import/import_report.h"
#include "cli/import/ini_file.h"
#include "cli/import/python_text.h"
#include "cli/import/yaml_tree.h"

struct supervisord {
	struct ini_file ini;
	struct import_report *report;
	struct ytree_node *groups;
	struct python_name *names; /* host_node_name, ENV_* of corral import's
				    * environment and [supervisord]'s */
	size_t name_count;
	struct ytree_node *global_env; /* [supervisord] environment */
};

/* A value left out: KEY=VALUE at its FILE:LINE, and why. */
void supervisord_drop(struct supervisord *import, const struct ini_value *value, const char *why,
		      ...) __attribute__((format(printf, 3, 4)));
/* Sets NAME (a %(NAME)s expansion) in *names, replacing it if there. */
void supervisord_name_add(struct python_name **names, size_t *count, const char *name,
			  const char *value, bool number);
void supervisord_names_free(struct python_name *names, size_t count);
/* VALUE expanded with NAMES; NULL (reported) when supervisord could not
 * either. */
char *supervisord_expand(struct supervisord *import, const struct ini_value *value,
			 const struct python_name *names, size_t count);

/* The tasks of one [program:x] section, into TASKS of GROUP_NAME. */
void supervisord_import_program(struct supervisord *import, struct ini_section *section,
				const char *group_name, struct ytree_node *tasks);
