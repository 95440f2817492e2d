/* What the keeper does when the loop process ends (docs/decisions.md,
 * "corral outlives its own death"): an exit is corral's answer and the
 * keeper passes its code on; a death by a signal (kill -9, a crash, the
 * OOM killer, the keeper's own watchdog) is restored by a new loop
 * process, unless the loop died too often of late: a restore that
 * crashes must not go round for ever.
 *
 * Pure: the wait status and the recent deaths in, a decision out, the
 * clock passed in. */
#pragma once

#include <stdint.h>

/* More deaths than this within the window: the keeper gives up. */
#define KEEPER_DEATHS_ALLOWED   5
#define KEEPER_DEATHS_WINDOW_MS 60000

enum keeper_action {
	KEEPER_EXIT,    /* the loop exited: the keeper exits with its code */
	KEEPER_RESTORE, /* a new loop process takes everything back */
	KEEPER_GIVE_UP, /* too many deaths: every task is killed, exit_code */
};

struct keeper_decision {
	enum keeper_action action;
	int exit_code; /* KEEPER_EXIT, KEEPER_GIVE_UP: what the keeper exits with */
	int signal;    /* the signal the loop died of; 0 when it exited */
};

/* The times of the last deaths by a signal, oldest first. */
struct keeper_deaths {
	uint64_t at_ms[KEEPER_DEATHS_ALLOWED];
	unsigned count;
	/* 0: KEEPER_DEATHS_WINDOW_MS. The restore soak's keeper shortens it
	 * (CORRAL_TEST_KEEPER_WINDOW_MS) to kill the loop 200 times. */
	uint64_t window_ms;
};

/* The loop process ended with `wait_status` (waitpid's) at `now_ms`. */
struct keeper_decision keeper_loop_ended(struct keeper_deaths *deaths, int wait_status,
					 uint64_t now_ms);
