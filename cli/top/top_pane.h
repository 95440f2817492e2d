/* The output pane of corral top: the last lines of the task (or group)
 * being followed, as the control protocol's logs/follow sends them. A
 * ring: a chatty task costs the same memory as a quiet one. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define TOP_PANE_LINES 256

struct top_pane {
	char *target; /* NULL: closed */
	char *lines[TOP_PANE_LINES];
	size_t first, count;
	/* Why the stream ended ("corral closed the stream"), or NULL while it
	 * runs: said in the pane's title. */
	char *ended;
};

void top_pane_open(struct top_pane *pane, const char *target);
void top_pane_close(struct top_pane *pane);
static inline bool top_pane_is_open(const struct top_pane *pane)
{
	return pane->target != NULL;
}
/* Adds one line (`length` bytes, NULs and all), dropping the oldest when
 * full. Tabs become spaces to the next multiple of 8, so that columns of
 * output line up as in a terminal. */
void top_pane_add(struct top_pane *pane, const char *text, size_t length);
/* The line `index` from the oldest kept (0) on. */
const char *top_pane_line(const struct top_pane *pane, size_t index);
void top_pane_set_ended(struct top_pane *pane, const char *why);
