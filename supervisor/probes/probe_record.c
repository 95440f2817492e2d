#include "supervisor/probes/probe_record.h"

#include <stdio.h>
#include <string.h>

void probe_record_reset(struct probe_record *record)
{
	memset(record, 0, sizeof(*record));
}

bool probe_record_reminder_due(unsigned failures)
{
	if (failures < 2)
		return false;
	if (failures >= PROBE_REMINDER_CAP)
		return failures % PROBE_REMINDER_CAP == 0;
	return (failures & (failures - 1)) == 0; /* a power of two */
}

/* The reason of this failure against the one said last. */
static enum probe_news failure_news(const struct probe_record *record, const char *why)
{
	if (record->failures_in_a_row == 1)
		return PROBE_NEWS_FIRST_FAILURE;
	if (strcmp(why, record->said_reason) != 0)
		return PROBE_NEWS_NEW_REASON;
	if (probe_record_reminder_due(record->failures_in_a_row))
		return PROBE_NEWS_STILL_FAILING;
	return PROBE_NEWS_NONE;
}

enum probe_news probe_record_add(struct probe_record *record, bool passed, const char *why,
				 uint64_t now_ms)
{
	bool was_failing = record->failures_in_a_row > 0;
	record->has_result = true;
	record->passed = passed;
	record->at_ms = now_ms;
	if (passed) {
		snprintf(record->last_result, sizeof(record->last_result), "passed");
		record->failures_in_a_row = 0;
		record->said_reason[0] = '\0';
		return was_failing ? PROBE_NEWS_RECOVERED : PROBE_NEWS_NONE;
	}
	snprintf(record->last_result, sizeof(record->last_result), "%s", why);
	record->failures_in_a_row++;
	enum probe_news news = failure_news(record, why);
	if (news != PROBE_NEWS_NONE) {
		memcpy(record->previous_reason, record->said_reason, sizeof(record->said_reason));
		snprintf(record->said_reason, sizeof(record->said_reason), "%s", why);
	}
	return news;
}

void probe_record_start_period(struct probe_record *record, uint64_t now_ms, uint64_t period_ms)
{
	record->start_period_ends_ms = period_ms ? now_ms + period_ms : 0;
	record->failures_held = false;
}

bool probe_record_hold_failure(struct probe_record *record, uint64_t now_ms)
{
	if (now_ms >= record->start_period_ends_ms)
		return false;
	record->failures_held = true;
	return true;
}

bool probe_record_take_held(struct probe_record *record, char *buffer, size_t size)
{
	bool held = record->failures_held && record->failures_in_a_row;
	record->failures_held = false;
	if (!held)
		return false;
	unsigned failures = record->failures_in_a_row;
	snprintf(buffer, size, "%u failure%s in a row while it started, last: %s", failures,
		 failures == 1 ? "" : "s", record->last_result);
	return true;
}
