/* How the keeper gives a new loop process what it holds: it forks, puts
 * every held fd at the number the dead loop had it under (so that the
 * states' fd numbers are right as they are), writes the records into a
 * memfd, and executes the binary it holds open (as `corral upgrade`
 * does, so that a replaced file on disk changes nothing) with:
 *
 *   CORRAL_KEEPER_FD    its end of the keeper's socketpair
 *   CORRAL_RESTORE_FD   the records (kept_records.h); only when there are
 *   CORRAL_RESTORES     how many loop processes died before it
 *
 * docs/decisions.md, "corral outlives its own death". */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "supervisor/keeper/kept_records.h"

#define KEEPER_FD_ENV       "CORRAL_KEEPER_FD"
#define KEEPER_RESTORE_ENV  "CORRAL_RESTORE_FD"
#define KEEPER_RESTORES_ENV "CORRAL_RESTORES"

struct rlimit;
/* The RLIMIT_NOFILE each loop is started with (the keeper's own, raised
 * to hold the fds, is not one for the loop and its tasks to inherit);
 * not called: the keeper's. */
void keeper_handoff_loop_fd_limit(const struct rlimit *limit);

/* Forks a loop process: `binary` (an fd) executed with `argv` and the
 * environment of the caller plus the variables. Its pid, or -errno. */
pid_t keeper_exec_loop(int binary, char *const argv[], int channel,
		       const struct kept_records *records, unsigned restores);
