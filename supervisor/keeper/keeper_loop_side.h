/* The loop process' side of its keeper (keeper_handoff.h): at the start,
 * before anything is made from the environment (a task's environment
 * among them), the keeper's variables are taken out of it and kept here.
 * Without a keeper (corral started as today) there is none: no channel,
 * no records, 0 restores. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "supervisor/keeper/kept_records.h"

struct keeper_loop_side {
	int channel;                  /* -1: no keeper */
	struct kept_records restored; /* what the keeper held for the loop before */
	bool restoring;               /* a loop died before this one and left records */
	unsigned restores;            /* loop processes that died before this one */
};

/* Takes $CORRAL_KEEPER_FD, $CORRAL_RESTORE_FD and $CORRAL_RESTORES out
 * of the environment into `side`, and sets close-on-exec again on every
 * fd they name (no task inherits one). 0, or -EINVAL with `error` for a
 * value that is wrong (then `side` has no keeper). */
int keeper_loop_side_take(struct keeper_loop_side *side, char *error, size_t error_size);

/* How many times corral was restored: `corral status --json`'s
 * `corral.restores`. */
unsigned keeper_loop_side_restores(const struct keeper_loop_side *side);

/* The records taken back are done with: every fd they name that nothing
 * took (`taken` says which, by number) is closed. */
void keeper_loop_side_end_restore(struct keeper_loop_side *side, bool (*taken)(void *, int),
				  void *context);

void keeper_loop_side_free(struct keeper_loop_side *side);
