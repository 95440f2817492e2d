/* The keeper (docs/decisions.md, "corral outlives its own death"): the
 * process the parent started, which runs no task logic. It starts the
 * loop process, holds the fds the loop sends it, forwards the signals it
 * gets to the loop, reaps every other child (tasks reparented to it when
 * the loop died) and tells the loop their statuses, starts a new loop
 * when one dies by a signal, and ends with the loop's exit code.
 *
 * `start_loop` says how a loop process is made (corral: fork and execveat
 * the binary, keeper_handoff.h; the tests: fork and run a function). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "supervisor/keeper/keeper_decision.h"
#include "supervisor/keeper/kept_records.h"

struct keeper_settings {
	/* Starts a loop process that talks to the keeper on `channel` (its
	 * end of a new socketpair), given `records` (keeper_handoff.h).
	 * `restores`: how many loops died before it. Its pid, or -errno. */
	pid_t (*start_loop)(void *context, int channel, const struct kept_records *records,
			    unsigned restores);
	void *context;
	/* A socket of the keeper's to watch besides its channel (the notify
	 * relay), -1: none; `readable` is told when it is, with the loop's
	 * pid (0 while none runs). */
	int watched_fd;
	void (*readable)(void *context, pid_t loop);
	/* The window of KEEPER_DEATHS_ALLOWED deaths; 0: the default. */
	uint64_t deaths_window_ms;
	/* Told each decision (for the log); NULL: not told. */
	void (*told)(void *context, const struct keeper_decision *decision, unsigned restores);
};

/* Runs until the loop exits or the keeper gives up: the code to exit
 * with. The signals it forwards are blocked meanwhile and unblocked at
 * the end. */
int keeper_run(const struct keeper_settings *settings);
