/* Variables in config values (docs/config.md, "Variables"), with docker
 * compose's rules: `$NAME`, `${NAME}`, `${NAME:-default}` (unset or empty),
 * `${NAME-default}` (unset), `${NAME:?message}`, `${NAME?message}` (an
 * error when unset or empty / unset), `${NAME:+other}`, `${NAME+other}`
 * (other when set and not empty / set), `$$` for a literal `$`. A default
 * may itself hold variables. An unset variable without a default is an
 * error, as is a malformed one.
 *
 * Pure: text in, text or an error with its offset out. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* NULL: the variable is not set. */
typedef const char *(*interpolate_lookup)(void *context, const char *name);

struct interpolate_error {
	size_t offset; /* in the text, of the `$` that failed */
	char message[256];
};

/* 0 with *out (malloc'd, NUL-terminated; *out_length without the NUL), or
 * -1 with `error`. Text without `$` comes back unchanged. */
int interpolate(const char *text, size_t length, interpolate_lookup lookup, void *context,
		char **out, size_t *out_length, struct interpolate_error *error);
