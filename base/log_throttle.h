/* One line per source per interval for what a source can repeat as fast as
 * it likes (refused connections, refused signals): the first is said at
 * once, in full; the rest of its interval are counted and said in one
 * summary line when the interval is over, and while they go on, one
 * summary an interval. 3,000 refused connections from one task within an
 * interval are two lines, not 3,000 (issue 36).
 *
 * Pure: the clock is passed in, and the lines are said through a callback;
 * the caller arms a timer for log_throttle_flush's deadline. The table is
 * bounded: past LOG_THROTTLE_SOURCES sources at once, the rest share one
 * entry, "other sources". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOG_THROTTLE_SOURCES    64
#define LOG_THROTTLE_SOURCE_MAX 192
#define LOG_THROTTLE_REASON_MAX 256
/* The name the sources past the table's room share. */
#define LOG_THROTTLE_OTHERS "other sources"

struct log_throttle_entry {
	char source[LOG_THROTTLE_SOURCE_MAX]; /* "" when free */
	/* Why the last one held back was refused, for the summary. */
	char reason[LOG_THROTTLE_REASON_MAX];
	uint64_t interval_start_ms;
	uint64_t held_back; /* since the last line said */
	/* An interval is open: what comes before its end is counted. */
	bool open;
};

/* Says the summary of `count` held-back events of `source` in the interval
 * that just ended, the last of them for `reason`. */
typedef void log_throttle_say(void *context, const char *source, uint64_t count,
			      const char *reason);

struct log_throttle {
	uint64_t interval_ms;
	log_throttle_say *say;
	void *context;
	struct log_throttle_entry entries[LOG_THROTTLE_SOURCES];
};

void log_throttle_init(struct log_throttle *throttle, uint64_t interval_ms, log_throttle_say *say,
		       void *context);

/* One more event of `source`, refused for `reason`, at `now_ms`. true: say
 * it now, in full (the first of its interval); false: it is counted, and
 * said in the interval's summary. A summary that was due is said first. */
bool log_throttle_note(struct log_throttle *throttle, const char *source, const char *reason,
		       uint64_t now_ms);

/* Says every summary whose interval is over at `now_ms`. Returns when the
 * next one is due (arm a timer for it), or 0 when none is waiting. */
uint64_t log_throttle_flush(struct log_throttle *throttle, uint64_t now_ms);

/* "10 s": the interval as a summary says it. */
void log_throttle_describe_interval(const struct log_throttle *throttle, char *buffer, size_t size);
