#include "supervisor/log_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config/xmalloc.h"
#include "supervisor/log.h"

#define BUFFER_SIZE (64 * 1024)
#define REPORT_EVERY_MS 10000
/* "2026-11-24T10:00:00.123Z " */
#define STAMP_LENGTH 25

static void on_flush(struct loop_timer *timer)
{
	log_file_flush(timer->data);
}

static bool open_fd(struct log_file *file)
{
	file->fd = open(file->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (file->fd < 0)
		return false;
	struct stat status;
	file->size = fstat(file->fd, &status) == 0 ? (uint64_t)status.st_size : 0;
	return true;
}

void log_file_open(struct log_file *file, struct loop *loop, const char *dir,
		   const char *full_name, uint64_t max_size, unsigned keep)
{
	memset(file, 0, sizeof(*file));
	file->fd = -1;
	file->loop = loop;
	loop_timer_init(&file->flush, on_flush, file);
	if (!dir)
		return;
	file->name = full_name;
	file->max_size = max_size;
	file->keep = keep;
	const char *slash = strchr(full_name, '/');
	int group_length = slash ? (int)(slash - full_name) : (int)strlen(full_name);
	char *group_dir = xasprintf("%s/%.*s", dir, group_length, full_name);
	/* A directory that cannot be made says why better than the ENOENT
	 * of the open that follows. */
	int made = mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : errno;
	if (!made && mkdir(group_dir, 0755) < 0 && errno != EEXIST)
		made = errno;
	file->path = xasprintf("%s/%s.log", group_dir, slash ? slash + 1 : full_name);
	free(group_dir);
	if (!open_fd(file)) {
		log_message("%s: log file %s: %s; its lines go on to stdout and corral logs, and "
			    "the file is tried again",
			    full_name, file->path, strerror(made && errno == ENOENT ? made : errno));
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

static void lose(struct log_file *file, uint64_t lines, const char *why)
{
	file->lost_lines += lines;
	file->lost_since_report += lines;
	uint64_t now = loop_now_ms();
	if (file->failing && now - file->reported_ms < REPORT_EVERY_MS)
		return;
	log_message("%s: log file %s: %s: %llu line%s not written to it (%llu in all); they "
		    "went on to stdout and corral logs",
		    file->name, file->path, why, (unsigned long long)file->lost_since_report,
		    file->lost_since_report == 1 ? "" : "s", (unsigned long long)file->lost_lines);
	file->failing = true;
	file->reported_ms = now;
	file->lost_since_report = 0;
}

/* TASK.log -> .1 -> .2 ... -> .keep, the oldest deleted; then a new file. */
static void rotate(struct log_file *file)
{
	close(file->fd);
	file->fd = -1;
	size_t length = strlen(file->path) + 16;
	char *from = xmalloc(length), *to = xmalloc(length);
	if (file->keep == 0) {
		unlink(file->path);
	} else {
		snprintf(to, length, "%s.%u", file->path, file->keep);
		unlink(to);
		for (unsigned n = file->keep; n > 1; n--) {
			snprintf(from, length, "%s.%u", file->path, n - 1);
			snprintf(to, length, "%s.%u", file->path, n);
			rename(from, to);
		}
		snprintf(to, length, "%s.1", file->path);
		rename(file->path, to);
	}
	free(from);
	free(to);
	open_fd(file);
}

static uint64_t count_lines(const char *text, size_t length)
{
	uint64_t lines = 0;
	for (const char *end = text + length; (text = memchr(text, '\n', (size_t)(end - text)));
	     text++)
		lines++;
	return lines;
}

void log_file_flush(struct log_file *file)
{
	if (!file->path || !file->used)
		return;
	loop_timer_cancel(file->loop, &file->flush);
	if (file->fd < 0 && !open_fd(file)) {
		lose(file, count_lines(file->buffer, file->used), strerror(errno));
		file->used = 0;
		return;
	}
	size_t done = 0;
	while (file->fd >= 0 && done < file->used) {
		/* As many whole lines as the file has room for; a file is
		 * rotated between lines, never in one. */
		const char *start = file->buffer + done;
		size_t left = file->used - done;
		size_t room = file->size < file->max_size ? (size_t)(file->max_size - file->size) : 0;
		size_t chunk = left;
		if (chunk > room) {
			const char *cut = room ? memrchr(start, '\n', room) : NULL;
			if (cut) {
				chunk = (size_t)(cut - start) + 1;
			} else if (file->size) {
				rotate(file);
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
			lose(file, count_lines(start, left),
			     written < 0 ? strerror(errno) : "nothing written");
			break;
		}
		done += (size_t)written;
		file->size += (uint64_t)written;
	}
	if (done == file->used && file->failing) {
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
	if (!file->path)
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
		if (file->used + head + line + 1 > BUFFER_SIZE)
			log_file_flush(file);
		char *out = file->buffer + file->used;
		memcpy(out, before, before_length);
		memcpy(out + before_length, text, line);
		out[before_length + line] = '\n';
		file->used += before_length + line + 1;
	}
	if (file->flush.heap_index == SIZE_MAX)
		loop_timer_arm(file->loop, &file->flush, loop_now_ms());
}

void log_file_close(struct log_file *file)
{
	log_file_flush(file);
	if (file->loop)
		loop_timer_cancel(file->loop, &file->flush);
	if (file->fd >= 0)
		close(file->fd);
	free(file->buffer);
	free(file->path);
	memset(file, 0, sizeof(*file));
	file->fd = -1;
}
