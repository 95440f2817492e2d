/* The file corral writes its termination message to (termination_message.h):
 * config `termination_log: PATH`, else Kubernetes' /dev/termination-log
 * when it is there and corral may write it. Never made at the default
 * path: a container without the file is not in a pod that reads it.
 *
 * Opened once, when corral starts, before any task runs, and held: a task
 * that may write the file's directory cannot put a link there before
 * corral has the file, and what it puts there afterwards is never used.
 * Only a regular file with one name is taken (O_NOFOLLOW: never a
 * symbolic link; not a FIFO, a device, nor a hard link to another file,
 * which opening it truncated would clobber: it is truncated only after
 * these checks). A directory on the way is followed as the operator wrote
 * it (/var/run is a link to /run on most systems). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define TERMINATION_LOG_DEFAULT "/dev/termination-log"

struct termination_log {
	int fd;        /* -1: none */
	char *path;    /* the one opened, or the one refused */
	bool can_read; /* opened read-write: what a task wrote there can be kept */
};

/* `configured`: the config's termination_log (NULL: not written, "": off).
 * 0 with the file open and emptied, or with none (fd -1: off, or no
 * /dev/termination-log); -errno with `error` saying why the file was
 * refused or could not be opened ("/x is a symbolic link: refused, ..."),
 * or, for the default path that is there but not writable, -EACCES (or
 * -EROFS) with `error` too, which a caller may say only verbosely. */
int termination_log_open(struct termination_log *log, const char *configured, char *error,
			 size_t error_size);

/* What a task wrote into the file since it was opened (its own
 * termination message): up to `size` bytes from its start. */
size_t termination_log_read(const struct termination_log *log, char *buffer, size_t size);

/* Replaces the file's content with `text`. 0, or -errno with `error`. */
int termination_log_write(const struct termination_log *log, const char *text, size_t length,
			  char *error, size_t error_size);

void termination_log_close(struct termination_log *log);
