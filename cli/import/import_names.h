/* Names in the shape corral's config takes, from what other tools allow. */
#pragma once

#include <stddef.h>

#include "cli/import/yaml_tree.h"

/* A group or task name from NAME: lowercase letters, digits, '-', '_' and
 * '.', starting with a letter or digit, at most 64 characters ("Web@1"
 * is "web-1"). Never empty. */
char *import_config_name(const char *name);
/* NAME, or NAME-2, NAME-3...: the first that GROUPS does not hold yet, so
 * that two inputs never write one group over the other. */
char *import_unique_group(const struct ytree_node *groups, const char *name);
/* Why NAME cannot be an environment variable's name in corral's env:,
 * or NULL when it can. */
const char *import_env_name_problem(const char *name);
/* The length of a NULL-terminated vector. */
size_t string_vector_length(char *const *vector);
