/* The loop process' side of its keeper (keeper_handoff.h): at the start,
 * before anything is made from the environment (a task's environment
 * among them), the keeper's three variables are taken out of it and
 * kept here. Without a keeper (corral started as today) there is none:
 * no channel, no fds, 0 restores. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "supervisor/keeper/fd_holder.h"

struct keeper_loop_side {
	int channel;            /* -1: no keeper */
	struct fd_holder given; /* what the keeper held for this loop */
	unsigned restores;      /* loop processes that died before this one */
};

/* Takes $CORRAL_KEEPER_FD, $CORRAL_KEEPER_FDS and $CORRAL_RESTORES out
 * of the environment into `side`, and sets close-on-exec again on every
 * fd they name (no task inherits one). 0, or -EINVAL with `error` for a
 * value that is wrong (then `side` has no keeper). */
int keeper_loop_side_take(struct keeper_loop_side *side, char *error, size_t error_size);

/* How many times corral was restored: `corral status --json`'s
 * `corral.restores`. */
unsigned keeper_loop_side_restores(const struct keeper_loop_side *side);

void keeper_loop_side_free(struct keeper_loop_side *side);
