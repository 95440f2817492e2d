/* The CDI built-in prestart hook: fully-qualified device names in, the
 * mounts, device nodes and environment their specs describe out.
 *
 * Specs are read from the spec directories each time a task starts, so a
 * driver that rewrites its spec (a GPU added, a path moved) is seen by the
 * next start without restarting corral; names are only checked for their
 * syntax when the config is loaded. */
#pragma once

#include <stddef.h>

#include "config/config.h"
#include "hooks/cdi_spec.h"

/* Where specs are looked for when a task names none (CDI's defaults). A
 * later directory has the higher priority: a device defined in both is
 * taken from the later one. */
extern const char *const cdi_default_spec_dirs[]; /* /etc/cdi, /var/run/cdi */

/* Every spec of some directories, each with the priority of its directory
 * (its index in the list). */
struct cdi_registry {
	struct cdi_spec *specs;
	unsigned *priorities;
	size_t spec_count;
	char **dirs; /* the directories read, for messages */
};

/* Reads every *.yaml, *.yml and *.json file of `spec_dirs` (NULL-terminated;
 * NULL: the defaults), each directory in name order. A directory that does
 * not exist is skipped; one that cannot be read, or a spec that is not
 * valid, is an error ("cdi: PATH:LINE:COLUMN: FIELD: problem"). Returns 0
 * or a negative errno with `error` written and `registry` empty. */
int cdi_registry_load(struct cdi_registry *registry, const char *const *spec_dirs, char *error,
		      size_t error_size);

/* Appends to `out` what the devices `names` (NULL-terminated, each
 * VENDOR/CLASS=NAME) need: each device's edits, then once the edits of
 * each spec that one of them came from. Device nodes and bind-mount
 * sources must exist on the host now. What corral cannot apply (OCI hooks,
 * additionalGids, intelRdt) is left out and said in `warning` ("" when
 * nothing was left out). On failure returns a negative errno, writes
 * `error` and adds nothing to `out`. */
int cdi_registry_resolve(const struct cdi_registry *registry, const char *const *names,
			 struct start_additions *out, char *warning, size_t warning_size,
			 char *error, size_t error_size);

void cdi_registry_free(struct cdi_registry *registry);

/* Load, resolve, free: what the hook does at each start of a task. */
int cdi_additions(const char *const *names, const char *const *spec_dirs,
		  struct start_additions *out, char *warning, size_t warning_size, char *error,
		  size_t error_size);
