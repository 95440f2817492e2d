/* Cron expressions, as crontab(5) writes them: five fields (minute, hour,
 * day of month, month, day of week) of `*`, numbers, ranges `a-b`, steps
 * `*\/n` and `a-b/n`, lists `a,b`, month and day names (`jan`, `mon`), or
 * one of @yearly (@annually), @monthly, @weekly, @daily (@midnight),
 * @hourly. As in Vixie cron, when both day fields are restricted a day
 * matching either runs. Pure: the next time is worked out on broken-down
 * time, so the caller chooses the time zone. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct cron {
	uint64_t minutes;     /* bit 0..59 */
	uint32_t hours;       /* bit 0..23 */
	uint32_t days;        /* bit 1..31 */
	uint16_t months;      /* bit 1..12 */
	uint8_t weekdays;     /* bit 0..6, Sunday 0 */
	bool days_restricted; /* the day-of-month field is not `*` */
	bool weekdays_restricted;
};

/* 0, or -1 with `error` saying what is wrong and where ("field 2 (hour):
 * 24 is out of 0-23"). */
int cron_parse(const char *text, struct cron *out, char *error, size_t error_size);

/* The first minute strictly after `after` that matches, as broken-down
 * local time of whatever zone `after` is in (tm_isdst -1: for mktime).
 * false when none comes within 5 years (a 30 February). */
bool cron_next(const struct cron *cron, const struct tm *after, struct tm *next);
