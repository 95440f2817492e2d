/* The event log: every task and group event as one JSON object per line
 * (`corral run --events FILE`), for scripts and tests. Also echoes each
 * event to stderr for people. */
#pragma once

#include <stdio.h>
#include <sys/types.h>

struct event_log {
	FILE *file; /* NULL: stderr only */
};

/* Opens (truncates) `path`; NULL path means stderr only. Returns 0 or -errno. */
int event_log_open(struct event_log *log, const char *path);
void event_log_close(struct event_log *log);

/* pid <= 0: not shown. */
void event_log_task(struct event_log *log, const char *full_name, const char *event,
		    const char *message, pid_t pid);
void event_log_group(struct event_log *log, const char *group, const char *event,
		     const char *message);
