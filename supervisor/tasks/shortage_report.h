/* Starts put off because corral ran short of a resource (runner.c: clone's
 * EAGAIN under pids.max, EMFILE, ENFILE, ENOMEM), said once a burst rather
 * than once a retry, the way the kubelet and systemd rate-limit such
 * messages: with 10,000 tasks under the fd limit, a line per retry was
 * 13,915 lines in 45 s.
 *
 * - A task's first retry in a row is its own start_failed event (what
 *   failed, and that it is retried): the runner says it.
 * - While tasks wait, one line at most every SHORTAGE_SUMMARY_MS, from a
 *   failed retry (the retries' own timers drive it: no timer of its own):
 *   "29 tasks wait for a resource (last: ...: Too many open files);
 *   140 retries failed in the last 5s; the next in 1s200ms".
 * - One line when none waits any more, checked from the loop's idle turn
 *   after a wait ended: "no task waits for a resource any more: 29
 *   started after waiting, over 45s (2000 tries failed)". A wait that
 *   ended in a stop rather than a start counts in neither. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "base/loop.h"

#define SHORTAGE_SUMMARY_MS 5000

struct services;

struct shortage_report {
	struct services *services;
	uint64_t burst_began_ms; /* the first put-off of the burst */
	bool in_burst;
	uint64_t summary_at_ms; /* the last summary, or the burst's start */
	unsigned long failed_since_summary, failed_in_burst;
	unsigned long started_in_burst;
	char reason[128];       /* the last put-off's */
	uint64_t put_off_total; /* over corral's run (GET /metrics) */
	struct loop_idle end_check;
};

void shortage_report_init(struct shortage_report *report, struct services *services);
void shortage_report_free(struct shortage_report *report);

/* A start was put off (runner_effects.resource_wait). */
void shortage_report_put_off(struct shortage_report *report, const char *reason, bool first,
			     uint64_t now_ms);

/* A task's wait ended (runner_effects.resource_wait_over). */
void shortage_report_wait_over(struct shortage_report *report, bool started);
