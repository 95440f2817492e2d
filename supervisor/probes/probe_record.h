/* What one probe (readiness `exec`, `health`) said during the current run
 * of its task, and whether its latest failure is worth telling the user.
 *
 * A probe that keeps failing must be neither silent nor a flood of lines:
 * a failure is said when it is the first of a streak, when its reason
 * changes ("exited with code 1" -> "timed out after 1s"), and as a reminder
 * after 2, 4, 8, 16, 32 and 64 failures in a row, then every 64 more. The
 * record also feeds `corral status` (the READY and HEALTH columns and the
 * "probes" of --json).
 *
 * Pure: the clock is passed in. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROBE_RESULT_MAX 160

/* Past this many failures in a row, a reminder comes every so many. */
#define PROBE_REMINDER_CAP 64

struct probe_record {
	bool has_result;                    /* a run ended during this run of the task */
	bool passed;                        /* the last run exited 0 in time */
	char last_result[PROBE_RESULT_MAX]; /* "passed", "exited with code 1", ... */
	uint64_t at_ms;                     /* loop clock at the last result */
	unsigned failures_in_a_row;
	char said_reason[PROBE_RESULT_MAX];     /* the failure the user last heard of */
	char previous_reason[PROBE_RESULT_MAX]; /* the one before it, for NEW_REASON */
	/* Readiness only: the start period of this run (loop clock), during
	 * which failures are held back, not said: a service that takes a
	 * second to listen is not news (Kubernetes' startupProbe). 0: none. */
	uint64_t start_period_ends_ms;
	bool failures_held; /* failures of the start period not said yet */
};

/* What a result means to the user. */
enum probe_news {
	PROBE_NEWS_NONE,          /* nothing to say: a pass as before, a failure already said */
	PROBE_NEWS_FIRST_FAILURE, /* a streak of failures begins */
	PROBE_NEWS_NEW_REASON,    /* still failing, for another reason */
	PROBE_NEWS_STILL_FAILING, /* the same reason, and a reminder is due */
	PROBE_NEWS_RECOVERED,     /* passed after failing */
};

/* A new run of the task: nothing heard yet. */
void probe_record_reset(struct probe_record *record);

/* One run of the probe ended: `why` says why it failed (ignored when it
 * passed). Returns what to tell; for NEW_REASON, record->previous_reason
 * is the reason said before. */
enum probe_news probe_record_add(struct probe_record *record, bool passed, const char *why,
				 uint64_t now_ms);

/* A run of the task began at `now_ms` (after probe_record_reset), with a
 * start period of `period_ms` (readiness.start_period; 0: none). */
void probe_record_start_period(struct probe_record *record, uint64_t now_ms, uint64_t period_ms);

/* The task was not ready yet when the failure just added came: true when
 * it falls inside the start period and is held back (the caller says
 * nothing); false once the period is over, when the caller says it. */
bool probe_record_hold_failure(struct probe_record *record, uint64_t now_ms);

/* The held failures in words ("12 failures in a row while it started,
 * last: connect 127.0.0.1:8080: Connection refused"), said once: false
 * when none are held. The start failed (its readiness timeout passed) or
 * its start period ended without readiness. */
bool probe_record_take_held(struct probe_record *record, char *buffer, size_t size);

/* Whether the `failures`th failure in a row gets a reminder: 2, 4, ...,
 * PROBE_REMINDER_CAP, then every PROBE_REMINDER_CAP. */
bool probe_record_reminder_due(unsigned failures);
