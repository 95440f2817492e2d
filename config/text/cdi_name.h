/* CDI's names: a device is asked for by its fully-qualified name
 * VENDOR/CLASS=NAME ("nvidia.com/gpu=0"), where VENDOR/CLASS is the `kind`
 * of the spec that defines it. The rules are those of the reference
 * implementation's parser (container-device-interface, pkg/parser):
 *   vendor, class: letters, digits, '_', '-', '.'; starting with a letter,
 *                  ending with a letter or digit;
 *   name:          letters, digits, '_', '-', '.', ':'; starting and ending
 *                  with a letter or digit.
 * Pure: used by the config loader (names written in a task) and by the
 * spec parser (names written in a spec). */
#pragma once

#include <stddef.h>

/* NULL when `qualified` is a valid VENDOR/CLASS=NAME; else writes into
 * `buffer` why not ("missing \"=NAME\" after the kind ...") and returns it. */
const char *cdi_qualified_name_problem(const char *qualified, char *buffer, size_t size);

/* The same for a spec's `kind` (VENDOR/CLASS) and a device's `name`. */
const char *cdi_kind_problem(const char *kind, char *buffer, size_t size);
const char *cdi_device_name_problem(const char *name, char *buffer, size_t size);
