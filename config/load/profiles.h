/* Profiles (compose's): a group or task with `profiles: [debug]` is part
 * of the config only when one of its profiles is active (`corral run
 * --profile debug`, CORRAL_PROFILES=debug,tools); one without `profiles`
 * always is. Pure: what the CLI and the loader share. */
#pragma once

#include <stddef.h>

/* compose's rule for a profile name, [a-zA-Z0-9][a-zA-Z0-9_.-]*: NULL when
 * `name` follows it, else what is wrong. */
const char *profile_name_problem(const char *name, size_t length);

/* The names of a comma-separated list (CORRAL_PROFILES's, as
 * COMPOSE_PROFILES's: "debug,tools"; empty items and spaces around names
 * are skipped), added to the NULL-terminated vector *names (allocated;
 * *count its length). -1 with `error` naming a bad one. */
int profiles_split(const char *text, char ***names, size_t *count, char *error, size_t error_size);

/* "debug, tools", or "none" for no profile (NULL). */
void profiles_describe(const char *const *profiles, char *buffer, size_t size);
