/* A probe target written with the instance number (docs/config.md,
 * "Probes of instances"): the name the instance's command reads in its
 * environment, `$CORRAL_INSTANCE` or `${CORRAL_INSTANCE}`, and the shell's
 * arithmetic over it, `$((8000 + CORRAL_INSTANCE))` (whole numbers, + - *
 * and parentheses), so that a probe reads as the command that binds the
 * port (`sh -c 'exec app --port $((8000 + CORRAL_INSTANCE))'`). `$$` is a
 * literal `$`; any other `$` is an error.
 *
 * Pure: text and an instance number in, text or an error with its offset
 * out. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether `text` asks for an expansion at all (holds a `$`). */
bool instance_template_used(const char *text);

struct instance_template_error {
	size_t offset; /* in the text, of the `$` that failed */
	char message[192];
};

/* 0 with `out` (NUL-terminated), or -1 with `error`. */
int instance_template_expand(const char *text, unsigned instance, char *out, size_t size,
			     struct instance_template_error *error);
