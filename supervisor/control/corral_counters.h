/* Counters corral keeps over its whole run, whatever reloads do to its
 * groups, for status' "corral" object and GET /metrics (metrics_text.h).
 * Each is counted where the thing happens: reloads in reload.c, control
 * requests in control_commands.c. */
#pragma once

#include <stdint.h>

#include "supervisor/control/control_protocol.h"

struct corral_counters {
	uint64_t reloads_succeeded; /* applied, in whole or in part */
	uint64_t reloads_failed;    /* refused: config errors, or a change it cannot make */
	/* corral's own life, for status' "corral" object: the times it
	 * took over from an older corral (corral upgrade, SIGUSR2), and the
	 * times it was restored after its own death. Both go over an
	 * upgrade. */
	uint64_t upgrades;
	uint64_t restores;
	/* Requests run (parsed, admitted), by command. */
	uint64_t control_requests[CONTROL_COMMAND_COUNT];
};
