#include "base/log_throttle.h"

#include <stdio.h>
#include <string.h>

void log_throttle_init(struct log_throttle *throttle, uint64_t interval_ms, log_throttle_say *say,
		       void *context)
{
	memset(throttle, 0, sizeof(*throttle));
	throttle->interval_ms = interval_ms;
	throttle->say = say;
	throttle->context = context;
}

static bool interval_over(const struct log_throttle *throttle,
			  const struct log_throttle_entry *entry, uint64_t now_ms)
{
	return now_ms >= entry->interval_start_ms + throttle->interval_ms;
}

/* Says what `entry` held back, and opens the next interval at `now_ms`
 * for what keeps coming; with nothing held back, closes it. */
static void end_interval(struct log_throttle *throttle, struct log_throttle_entry *entry,
			 uint64_t now_ms)
{
	if (!entry->held_back) {
		entry->open = false;
		return;
	}
	throttle->say(throttle->context, entry->source, entry->held_back, entry->reason);
	entry->held_back = 0;
	entry->interval_start_ms = now_ms;
}

/* The entry of `source`; else a free one, or one with no interval open
 * and nothing held back; else the shared last one. */
static struct log_throttle_entry *entry_of(struct log_throttle *throttle, const char *source,
					   uint64_t now_ms)
{
	struct log_throttle_entry *spare = NULL;
	for (size_t i = 0; i + 1 < LOG_THROTTLE_SOURCES; i++) {
		struct log_throttle_entry *entry = &throttle->entries[i];
		if (entry->source[0] && strcmp(entry->source, source) == 0)
			return entry;
		bool idle =
		    !entry->open || (!entry->held_back && interval_over(throttle, entry, now_ms));
		if (!spare && (!entry->source[0] || idle))
			spare = entry;
	}
	if (spare) {
		snprintf(spare->source, sizeof(spare->source), "%s", source);
		spare->held_back = 0;
		spare->open = false;
		return spare;
	}
	struct log_throttle_entry *shared = &throttle->entries[LOG_THROTTLE_SOURCES - 1];
	if (!shared->source[0])
		snprintf(shared->source, sizeof(shared->source), "%s", LOG_THROTTLE_OTHERS);
	return shared;
}

bool log_throttle_note(struct log_throttle *throttle, const char *source, const char *reason,
		       uint64_t now_ms)
{
	struct log_throttle_entry *entry = entry_of(throttle, source, now_ms);
	if (entry->open && interval_over(throttle, entry, now_ms))
		end_interval(throttle, entry, now_ms);
	if (!entry->open) {
		entry->open = true;
		entry->interval_start_ms = now_ms;
		return true;
	}
	entry->held_back++;
	snprintf(entry->reason, sizeof(entry->reason), "%s", reason);
	return false;
}

uint64_t log_throttle_flush(struct log_throttle *throttle, uint64_t now_ms)
{
	uint64_t next = 0;
	for (size_t i = 0; i < LOG_THROTTLE_SOURCES; i++) {
		struct log_throttle_entry *entry = &throttle->entries[i];
		if (entry->open && entry->held_back && interval_over(throttle, entry, now_ms))
			end_interval(throttle, entry, now_ms);
		if (!entry->open || !entry->held_back)
			continue;
		uint64_t due = entry->interval_start_ms + throttle->interval_ms;
		if (!next || due < next)
			next = due;
	}
	return next;
}

void log_throttle_describe_interval(const struct log_throttle *throttle, char *buffer, size_t size)
{
	if (throttle->interval_ms % 1000 == 0)
		snprintf(buffer, size, "%llu s",
			 (unsigned long long)(throttle->interval_ms / 1000));
	else
		snprintf(buffer, size, "%llu ms", (unsigned long long)throttle->interval_ms);
}
