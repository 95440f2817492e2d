/* A task's log file (config `log.dir`), written and rotated by corral as
 * s6-log and supervisord do: DIR/GROUP/TASK.log, each line after the UTC
 * time it was read (and its stream, "stdout" or "stderr", when the task's
 * streams are kept apart); at `max_size` the file becomes TASK.log.1 (the older
 * ones move up, the one past `keep` is deleted) and a new one begins.
 *
 * Lines are gathered per event batch and written in one write(). A file
 * that cannot be opened or written (a read-only or full disk) costs the
 * task nothing: its lines still go to stdout and `corral logs`; the ones
 * the file misses are counted, line by line, and said on stderr at once,
 * then at most every 10 s while lines go on being lost (a timer says the
 * last ones even if the task has gone quiet), and the file is tried again.
 * A rotation that fails (TASK.log.1 is a directory, the file is
 * append-only) is said once; the file is written on past `max_size` and
 * the rotation tried again only when it has grown by another `max_size`.
 *
 * A file deleted or moved away, or a DIR/GROUP deleted, while corral runs
 * is made again before the next batch is written (compared once a batch,
 * by the held directory fd: log_dir_file_gone), with the checks of the
 * start; lines lost meanwhile are counted as above.
 *
 * The files are opened and renamed only inside DIR/GROUP, held open, and
 * never through a link (log_file_dir.h): a file that is not safe to write
 * is refused for good, said once, and the task's lines go on to the other
 * places. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/loop.h"
#include "supervisor/output/output_line.h"
#include "supervisor/output/output_sinks.h"

struct log_file {
	char *path;                    /* DIR/GROUP/TASK.log, for messages; NULL: no file */
	char *dir, *group, *file_name; /* DIR as configured, GROUP, TASK.log */
	const char *name;              /* "web/app", for messages */
	uint64_t max_size;
	unsigned keep;
	bool shared_dir;
	int dir_fd; /* DIR/GROUP: every open and rename is relative to it */
	int fd;
	uint64_t size;
	/* The size past which the file is rotated: max_size, or further on
	 * after a failed rotation (tried again when it is crossed). */
	uint64_t rotate_at;
	char *buffer;
	size_t used;
	struct loop *loop;
	struct loop_timer flush; /* at the end of the current event batch */
	/* Armed only while lost lines wait to be said (10 s after the last
	 * report): losses are said even when no line comes after them. */
	struct loop_timer report;
	/* Lines the file missed: in all, and since the last report. */
	uint64_t lost_lines, lost_since_report;
	int lost_error; /* why the last ones were lost (an errno) */
	uint64_t reported_ms;
	bool failing;
	bool refused; /* not safe to write: no file for this task */
	bool rotation_failing, older_rotation_failing; /* said once each */
};

/* Makes DIR/GROUP (0755) and opens the file for appending. A failure is
 * said and tried again at the next batch, a refusal said once: never an
 * error for the task. `shared_dir`: config `log.shared_dir`. */
void log_file_open(struct log_file *file, struct loop *loop, const char *dir, const char *full_name,
		   uint64_t max_size, unsigned keep, bool shared_dir);

/* Lines read at `time_ms` (CLOCK_REALTIME), each ending in '\n' in
 * `text`. */
void log_file_append_lines(struct log_file *file, uint64_t time_ms, enum output_stream stream,
			   const char *text, size_t length);

/* The file as one of a task's sinks (output_sinks.h). */
extern const struct output_sink_ops log_file_sink_ops;

/* What is gathered goes out now (the timer does it after each batch). */
void log_file_flush(struct log_file *file);

void log_file_close(struct log_file *file);
