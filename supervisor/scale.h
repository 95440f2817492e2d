/* corral scale GROUP/TASK=N ...: how many instances a task written with
 * `instances:` has, changed while corral runs (docker compose's --scale,
 * process-compose's `process scale`, kubectl scale). docs/cli.md says
 * what users see. */
#pragma once

#include <jansson.h>

#include "supervisor/control/control_protocol.h"
#include "supervisor/supervisor_internal.h"

/* The reply of a `scale` request: {"ok": true, "message", "tasks":
 * [{"task", "from", "to", "configured"}]}, or {"ok": false, "error"} with
 * nothing changed. All pairs are applied together, or none. */
json_t *scale_run(struct supervisor *supervisor, const struct control_request *request);
