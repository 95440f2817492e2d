/* `corral run --keeper` (or CORRAL_KEEPER=1): the process the parent
 * started becomes corral's keeper (keeper.h) and runs the loop as a
 * child of its own, the same binary with the same arguments, started
 * again with what the keeper held whenever it dies by a signal
 * (docs/decisions.md, "corral outlives its own death"). */
#pragma once

#include <stdbool.h>

#define KEEPER_WANTED_ENV "CORRAL_KEEPER"

/* Whether a keeper is asked for (`option`, or CORRAL_KEEPER=1). The
 * caller knows whether it is the loop a keeper started (restore.h). */
bool keeper_main_wanted(bool option);
/* Runs the keeper with `argv` (main's, for the loop's exec): the code to
 * exit with. */
int keeper_main(char *const argv[]);
