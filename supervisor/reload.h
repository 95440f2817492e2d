/* Reload: the config loaded again and applied while everything else runs
 * (supervisor/reload.c says how; docs/cli.md says what users see). */
#pragma once

#include <jansson.h>
#include <stdbool.h>

#include "supervisor/control/control_commands.h"
#include "supervisor/supervisor_internal.h"

/* The reply of a `reload` request: {"ok": true, "path", "dry_run", "plan":
 * {"groups": [...], "tasks": [...], "unchanged": N}}, or {"ok": false,
 * "error", "errors": ["FILE:LINE:COLUMN: ..."]} with nothing changed. */
json_t *reload_run(struct supervisor *supervisor, const struct reload_options *options);

/* corral scale (scale.c): `config` is the running one with other instance
 * counts (config_copy.h). It is applied as a reload of it would be, but
 * only instances are added and removed; every other task stays as it
 * runs. 0, or -EINVAL with `error` and nothing changed (a user of a new
 * instance that does not exist, an instance of an earlier scale down still
 * stopping). `config` is taken either way. */
int reload_apply_scaled(struct supervisor *supervisor, struct config *config, char *error,
			size_t error_size);

/* After each settle (reload_collect.c): frees the tasks and groups a reload removed once they
 * are dead, and the configs nothing points into any more. */
void reload_collect(struct supervisor *supervisor);

/* At exit, after every group is freed: the configs reloads loaded. */
void reload_free_generations(struct supervisor *supervisor);
