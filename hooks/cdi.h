/* The CDI built-in prestart hook: fully-qualified device names in, the
 * mounts, device nodes and environment their specs describe out.
 *
 * Specs are read from the spec directories each time a task starts, so a
 * driver that rewrites its spec (a GPU added, a path moved) is seen by the
 * next start without restarting corral; names are only checked for their
 * syntax when the config is loaded. */
#pragma once

#include <stddef.h>

#include "config/model/config.h"

/* Where specs are looked for when a task names none (CDI's defaults). A
 * later directory has the higher priority: a device defined in both is
 * taken from the later one. */
extern const char *const cdi_default_spec_dirs[]; /* /etc/cdi, /var/run/cdi */

/* What the hook does at each start of a task: reads every *.yaml, *.yml
 * and *.json file of `spec_dirs` (NULL-terminated; NULL: the defaults),
 * then appends to `out` what the devices `names` (NULL-terminated, each
 * VENDOR/CLASS=NAME) need. A spec directory that does not exist is
 * skipped; one that cannot be read, a spec that is not valid ("cdi:
 * PATH:LINE:COLUMN: FIELD: problem"), an unknown device or a missing host
 * node or mount source is an error: a negative errno, `error` written and
 * nothing added to `out`. What corral cannot apply (OCI hooks,
 * additionalGids, intelRdt) is left out and said in `warning` ("" when
 * nothing was left out). */
int cdi_additions(const char *const *names, const char *const *spec_dirs,
		  struct start_additions *out, char *warning, size_t warning_size, char *error,
		  size_t error_size);
