/* How a task's runs ended, counted over its whole life (GET /metrics'
 * corral_task_exits_total and corral_task_start_failures_total), with a
 * bounded set of kinds: the first EXIT_TALLY_SLOTS exit codes and signals
 * seen each get a count of their own, any later one counts as "other"
 * (of codes, or of signals). A series per code a program ever used would
 * be up to 256 per task, each kept by Prometheus for good; a task
 * exits with a handful (0, 1, SIGTERM, SIGKILL...).
 *
 * Pure. Allocated at a task's first exit or failed start (the runner's
 * `exits`): a task that never ended costs a pointer. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define EXIT_TALLY_SLOTS 8

struct exit_tally_slot {
	bool signaled; /* `value` is a signal number, else an exit code */
	int value;
	uint64_t count;
};

struct exit_tally {
	struct exit_tally_slot slots[EXIT_TALLY_SLOTS];
	unsigned slot_count; /* in the order first seen */
	uint64_t other_codes, other_signals;
	/* Starts that failed before the program ran (not found, not
	 * executable, a prestart hook failed): not exits of the program. */
	uint64_t start_failures;
};

/* One exit with `value` (a code, or a signal when `signaled`). */
void exit_tally_add(struct exit_tally *tally, bool signaled, int value);
