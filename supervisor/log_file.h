/* A task's log file (config `log.dir`), written and rotated by corral as
 * s6-log and supervisord do: DIR/GROUP/TASK.log, each line after the UTC
 * time it was read (and its stream, "stdout" or "stderr", when the task's
 * streams are kept apart); at `max_size` the file becomes TASK.log.1 (the older
 * ones move up, the one past `keep` is deleted) and a new one begins.
 *
 * Lines are gathered per event batch and written in one write(). A file
 * that cannot be opened or written (a read-only or full disk) costs the
 * task nothing: its lines still go to stdout and `corral logs`; the ones
 * the file misses are counted and said on stderr at once and every 10 s
 * while it lasts, and the file is tried again. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervisor/loop.h"
#include "supervisor/output_stream.h"

struct log_file {
	char *path; /* NULL: no file */
	const char *name; /* "web/app", for messages */
	uint64_t max_size;
	unsigned keep;
	int fd;
	uint64_t size;
	char *buffer;
	size_t used;
	struct loop *loop;
	struct loop_timer flush; /* at the end of the current event batch */
	/* Lines the file missed: in all, and since the last report. */
	uint64_t lost_lines, lost_since_report;
	uint64_t reported_ms;
	bool failing;
};

/* Makes DIR/GROUP (0755) and opens the file for appending. A failure is
 * said and tried again at the next batch: never an error for the task. */
void log_file_open(struct log_file *file, struct loop *loop, const char *dir,
		   const char *full_name, uint64_t max_size, unsigned keep);

/* Lines read at `time_ms` (CLOCK_REALTIME), each ending in '\n' in
 * `text`. */
void log_file_append_lines(struct log_file *file, uint64_t time_ms, enum output_stream stream,
			   const char *text, size_t length);

/* What is gathered goes out now (the timer does it after each batch). */
void log_file_flush(struct log_file *file);

void log_file_close(struct log_file *file);
