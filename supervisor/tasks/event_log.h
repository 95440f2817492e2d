/* The event log: every task and group event as one JSON object per line
 * (`corral run --events FILE`), for scripts and tests. Also echoes each
 * event to stderr for people. */
#pragma once

#include <stdio.h>
#include <sys/types.h>

#include "supervisor/output/line_ring.h"

#define EVENT_LOG_RECENT_BYTES (256 * 1024)

struct event_log {
	FILE *file;              /* NULL: no file */
	struct line_ring recent; /* the last events as JSON, for `corral events` */
	/* Called with each event's JSON (no newline), for followers. */
	void (*on_event)(void *context, const char *json, size_t length);
	void *on_event_context;
};

/* Opens (truncates) `path`; NULL path means no file. Returns 0 or -errno. */
int event_log_open(struct event_log *log, const char *path);
void event_log_close(struct event_log *log);
/* `corral upgrade`: the file of the corral before the exec (-1: none),
 * written on at its end, for a log opened with a NULL path. */
int event_log_adopt(struct event_log *log, int fd);

/* pid <= 0: not shown. */
void event_log_task(struct event_log *log, const char *full_name, const char *event,
		    const char *message, pid_t pid);
void event_log_group(struct event_log *log, const char *group, const char *event,
		     const char *message);
/* An event of corral as a whole (corral_event_type_name): no group, no task. */
void event_log_corral(struct event_log *log, const char *event, const char *message);
