#include "supervisor/output/log_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "supervisor/output/log_file_dir.h"

#define BUFFER_SIZE     (64 * 1024)
#define REPORT_EVERY_MS 10000
/* "2026-11-24T10:00:00.123Z " */
#define STAMP_LENGTH 25

static void on_flush(struct loop_timer *timer)
{
	log_file_flush(timer->data);
}

static void report_losses(struct log_file *file, uint64_t now)
{
	loop_timer_cancel(file->loop, &file->report);
	log_message("%s: log file %s: %s: %llu line%s not written to it (%llu in all); they "
		    "went on to stdout and corral logs",
		    file->name, file->path,
		    file->lost_error ? strerror(file->lost_error) : "nothing written",
		    (unsigned long long)file->lost_since_report,
		    file->lost_since_report == 1 ? "" : "s", (unsigned long long)file->lost_lines);
	file->failing = true;
	file->reported_ms = now;
	file->lost_since_report = 0;
}

static void on_report(struct loop_timer *timer)
{
	struct log_file *file = timer->data;
	if (file->lost_since_report)
		report_losses(file, loop_now_ms());
}

/* Said at once the first time, then at most every REPORT_EVERY_MS: the
 * timer says what was lost since, whether or not more lines come. */
static void lose(struct log_file *file, uint64_t lines, int error)
{
	if (!lines)
		return;
	file->lost_lines += lines;
	file->lost_since_report += lines;
	file->lost_error = error;
	uint64_t now = loop_now_ms();
	if (file->failing && now - file->reported_ms < REPORT_EVERY_MS) {
		if (!loop_timer_armed(&file->report))
			loop_timer_arm(file->loop, &file->report,
				       file->reported_ms + REPORT_EVERY_MS);
		return;
	}
	report_losses(file, now);
}

static void close_fds(struct log_file *file)
{
	if (file->fd >= 0)
		close(file->fd);
	if (file->dir_fd >= 0)
		close(file->dir_fd);
	file->fd = file->dir_fd = -1;
}

/* For good: the task's lines go on to stdout and `corral logs` only. */
static void refuse(struct log_file *file, const struct log_dir_failure *failure)
{
	log_message("%s: log file %s refused: %s; its lines go on to stdout and corral logs, "
		    "not to a file",
		    file->name, file->path, failure->why);
	file->refused = true;
	file->failing = false;
	file->used = 0;
	close_fds(file);
	loop_timer_cancel(file->loop, &file->flush);
	loop_timer_cancel(file->loop, &file->report);
}

/* The directory once (held from then on), then the file in it. */
static bool open_fd(struct log_file *file, bool exclusive, struct log_dir_failure *failure)
{
	/* Deleted while the file could not be written: made again. */
	if (file->dir_fd >= 0 && log_dir_gone(file->dir_fd)) {
		close(file->dir_fd);
		file->dir_fd = -1;
	}
	if (file->dir_fd < 0)
		file->dir_fd = log_dir_open(file->dir, file->group, file->shared_dir, failure);
	if (file->dir_fd >= 0)
		file->fd = log_dir_open_file(file->dir_fd, file->file_name, exclusive, &file->size,
					     failure);
	if (file->fd >= 0)
		return true;
	if (failure->refused)
		refuse(file, failure);
	return false;
}

void log_file_open(struct log_file *file, struct loop *loop, const char *dir, const char *full_name,
		   uint64_t max_size, unsigned keep, bool shared_dir)
{
	memset(file, 0, sizeof(*file));
	file->fd = file->dir_fd = -1;
	file->loop = loop;
	loop_timer_init(&file->flush, on_flush, file);
	loop_timer_init(&file->report, on_report, file);
	if (!dir)
		return;
	file->name = full_name;
	file->max_size = file->rotate_at = max_size;
	file->keep = keep;
	file->shared_dir = shared_dir;
	const char *slash = strchr(full_name, '/');
	size_t group_length = slash ? (size_t)(slash - full_name) : strlen(full_name);
	file->dir = xstrdup(dir);
	file->group = xstrndup(full_name, group_length);
	file->file_name = xasprintf("%s.log", slash ? slash + 1 : full_name);
	file->path = xasprintf("%s/%s/%s", dir, file->group, file->file_name);
	struct log_dir_failure failure;
	if (!open_fd(file, false, &failure) && !file->refused) {
		log_message("%s: log file %s: %s; its lines go on to stdout and corral logs, and "
			    "the file is tried again",
			    full_name, file->path, failure.why);
		file->failing = true;
		file->reported_ms = loop_now_ms();
	}
}

static size_t stamp(char *out, uint64_t time_ms)
{
	time_t seconds = (time_t)(time_ms / 1000);
	struct tm utc;
	if (!gmtime_r(&seconds, &utc))
		memset(&utc, 0, sizeof(utc));
	char text[40];
	size_t length = strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
	length += (size_t)snprintf(text + length, sizeof(text) - length, ".%03uZ ",
				   (unsigned)(time_ms % 1000));
	memcpy(out, text, length);
	return length;
}

/* TASK.log -> .1 -> ... -> .keep, the oldest deleted; then a new file,
 * which must not exist yet. False when TASK.log stays: said once while
 * it lasts, and tried again only once another max_size is written. */
static bool rotate(struct log_file *file)
{
	int older_error;
	int result = log_dir_rotate(file->dir_fd, file->file_name, file->keep, &older_error);
	if (result < 0) {
		if (!file->rotation_failing)
			log_message(
			    "%s: log file %s: cannot rotate it: %s; it is written on past "
			    "log.max_size, and rotation is tried again once it has grown by "
			    "another %llu bytes",
			    file->name, file->path, strerror(-result),
			    (unsigned long long)file->max_size);
		file->rotation_failing = true;
		file->rotate_at = file->size + file->max_size;
		return false;
	}
	if (file->rotation_failing)
		log_message("%s: log file %s is rotated again", file->name, file->path);
	file->rotation_failing = false;
	if (older_error && !file->older_rotation_failing)
		log_message("%s: log file %s: an older file (%s.N) could not be moved or deleted: "
			    "%s; the newest files are kept",
			    file->name, file->path, file->file_name, strerror(older_error));
	file->older_rotation_failing = older_error != 0;
	file->rotate_at = file->max_size;
	close(file->fd);
	file->fd = -1;
	struct log_dir_failure failure;
	open_fd(file, true, &failure); /* a failure: the caller counts the lines */
	return true;
}

/* The file (or DIR/GROUP, or DIR) was deleted or moved away while
 * corral ran: both are made again at the next open, with the checks of
 * the first (log_dir_open), so that lines reach a file a person finds. */
static void begin_again(struct log_file *file)
{
	bool dir_gone = log_dir_gone(file->dir_fd);
	log_info("%s: log file %s: %s was moved or deleted; %s", file->name, file->path,
		 dir_gone ? "its directory" : "it",
		 dir_gone ? "the directory and the file are made again" : "a new file is begun");
	close(file->fd);
	file->fd = -1;
	if (dir_gone) {
		close(file->dir_fd);
		file->dir_fd = -1;
	}
}

static uint64_t count_lines(const char *text, size_t length)
{
	uint64_t lines = 0;
	for (const char *end = text + length; (text = memchr(text, '\n', (size_t)(end - text)));
	     text++)
		lines++;
	return lines;
}

/* A short write (the disk is full) may end inside a line: the part of it
 * that was written is taken back, so that the file holds whole lines
 * only and the line is counted as lost, not half kept. Returns the bytes
 * that stay. */
static size_t keep_whole_lines(struct log_file *file, const char *start, size_t written)
{
	const char *last = memrchr(start, '\n', written);
	size_t whole = last ? (size_t)(last - start) + 1 : 0;
	if (whole < written && ftruncate(file->fd, (off_t)(file->size + whole)) < 0)
		return written; /* it stays cut; it is still counted as lost */
	return whole;
}

void log_file_flush(struct log_file *file)
{
	if (!file->path || file->refused || !file->used)
		return;
	loop_timer_cancel(file->loop, &file->flush);
	/* Once per flush (a batch), never per line: lines written to a file
	 * no name reaches any more would be lost without a count. */
	if (file->fd >= 0 && log_dir_file_gone(file->dir_fd, file->file_name, file->fd))
		begin_again(file);
	size_t done = 0;
	bool rotation_failed = false; /* in this flush: write on, do not try again */
	while (done < file->used) {
		const char *start = file->buffer + done;
		size_t left = file->used - done;
		struct log_dir_failure failure;
		if (file->fd < 0 && !open_fd(file, false, &failure)) {
			if (!file->refused)
				lose(file, count_lines(start, left), failure.error);
			break;
		}
		/* As many whole lines as the file has room for; a file is
		 * rotated between lines, never in one. */
		size_t room =
		    file->size < file->rotate_at ? (size_t)(file->rotate_at - file->size) : 0;
		size_t chunk = left;
		if (chunk > room) {
			const char *cut = room ? memrchr(start, '\n', room) : NULL;
			if (cut) {
				chunk = (size_t)(cut - start) + 1;
			} else if (file->size && !rotation_failed) {
				rotation_failed = !rotate(file);
				if (file->refused)
					break;
				continue;
			} else {
				/* One line longer than the whole file: alone. */
				const char *end = memchr(start, '\n', left);
				chunk = end ? (size_t)(end - start) + 1 : left;
			}
		}
		ssize_t written = write(file->fd, start, chunk);
		if (written < 0 && errno == EINTR)
			continue;
		if (written <= 0) {
			/* ENOSPC, EIO: what did not fit is lost to the file only. */
			lose(file, count_lines(start, left), written < 0 ? errno : 0);
			break;
		}
		size_t kept = (size_t)written < chunk
				  ? keep_whole_lines(file, start, (size_t)written)
				  : (size_t)written;
		done += kept;
		file->size += kept;
		if (!kept) {
			/* Not even one line fits: the next write would do the same. */
			lose(file, count_lines(start, left), ENOSPC);
			break;
		}
	}
	if (done == file->used && file->failing) {
		if (file->lost_since_report)
			report_losses(file, loop_now_ms());
		log_message("%s: log file %s is written again (%llu lines were lost to it)",
			    file->name, file->path, (unsigned long long)file->lost_lines);
		file->failing = false;
	}
	file->used = 0;
}

/* "stdout " or "stderr " after the time, when the streams are apart. */
#define STREAM_LENGTH 7

void log_file_append_lines(struct log_file *file, uint64_t time_ms, enum output_stream stream,
			   const char *text, size_t length)
{
	if (!file->path || file->refused)
		return;
	if (!file->buffer)
		file->buffer = xmalloc(BUFFER_SIZE);
	/* The lines were read together: one time and stream before each. */
	char before[STAMP_LENGTH + STREAM_LENGTH + 8];
	size_t before_length = stamp(before, time_ms);
	const char *stream_name = output_stream_name(stream);
	if (stream_name) {
		memcpy(before + before_length, stream_name, STREAM_LENGTH - 1);
		before[before_length + STREAM_LENGTH - 1] = ' ';
		before_length += STREAM_LENGTH;
	}
	const size_t head = STAMP_LENGTH + STREAM_LENGTH;
	for (const char *end = text + length, *newline; text < end; text = newline + 1) {
		newline = memchr(text, '\n', (size_t)(end - text));
		size_t line = (size_t)(newline - text);
		if (line > BUFFER_SIZE - head - 1)
			line = BUFFER_SIZE - head - 1; /* a longer line is cut */
		if (file->used + head + line + 1 > BUFFER_SIZE) {
			log_file_flush(file);
			if (file->refused)
				return;
		}
		char *out = file->buffer + file->used;
		memcpy(out, before, before_length);
		memcpy(out + before_length, text, line);
		out[before_length + line] = '\n';
		file->used += before_length + line + 1;
	}
	if (file->flush.heap_index == SIZE_MAX)
		loop_timer_arm(file->loop, &file->flush, loop_now_ms());
}

static void take_lines(void *file, struct output_batch *batch)
{
	log_file_append_lines(file, batch->time_ms, batch->stream, batch->text, batch->length);
}

const struct output_sink_ops log_file_sink_ops = {.lines = take_lines};

void log_file_close(struct log_file *file)
{
	log_file_flush(file);
	/* What the report timer would have said: the count is complete. */
	if (file->lost_since_report)
		report_losses(file, loop_now_ms());
	if (file->loop) {
		loop_timer_cancel(file->loop, &file->flush);
		loop_timer_cancel(file->loop, &file->report);
	}
	close_fds(file);
	free(file->buffer);
	free(file->path);
	free(file->dir);
	free(file->group);
	free(file->file_name);
	memset(file, 0, sizeof(*file));
	file->fd = file->dir_fd = -1;
}
