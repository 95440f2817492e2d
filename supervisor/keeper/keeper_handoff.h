/* How the keeper gives a new loop process what it holds: it forks,
 * clears close-on-exec on exactly the held fds, and executes the binary it
 * holds open (as `corral upgrade` does, so that a replaced file on disk
 * changes nothing) with three variables:
 *
 *   CORRAL_KEEPER_FD    its end of the keeper's socketpair
 *   CORRAL_KEEPER_FDS   the held fds by key: "SLOT.ROLE=FD,..."
 *   CORRAL_RESTORES     how many loop processes died before it
 *
 * The new loop reads them back into a table of its own (and sets
 * close-on-exec again on what it takes). docs/architecture.md, "corral
 * outlives its own death". */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "supervisor/keeper/fd_holder.h"

#define KEEPER_FD_ENV       "CORRAL_KEEPER_FD"
#define KEEPER_FDS_ENV      "CORRAL_KEEPER_FDS"
#define KEEPER_RESTORES_ENV "CORRAL_RESTORES"

/* "SLOT.ROLE=FD,..." of every fd held (malloc'd; "" when none). */
char *keeper_fds_describe(const struct fd_holder *holder);

/* `text` (CORRAL_KEEPER_FDS) into `into` (initialised, empty), which owns
 * the fds then. 0, or -EINVAL with `error` naming the entry that is
 * wrong (then nothing is held, and no fd closed). */
int keeper_fds_parse(const char *text, struct fd_holder *into, char *error, size_t error_size);

/* Forks a loop process: `binary` (an fd) executed with `argv` and the
 * environment of the caller plus the three variables. Its pid, or
 * -errno. */
pid_t keeper_exec_loop(int binary, char *const argv[], int channel, const struct fd_holder *holder,
		       unsigned restores);
