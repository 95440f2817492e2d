/* Bounds on a YAML text's nesting and on what its aliases expand to,
 * checked before the document is built (yaml_limits.c says why). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/yaml/diagnostics.h"

#define YAML_DEPTH_MAX  64
#define YAML_VALUES_MAX 1000000

/* false, with an error at the place that went past a bound. A syntax
 * error is not reported here: the loader reports it. */
bool yaml_within_limits(const char *buffer, size_t size, unsigned file,
			struct config_diagnostics *diagnostics);
