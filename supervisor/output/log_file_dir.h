/* The directory of a task's log file (DIR/GROUP), held open by corral, and
 * the files in it.
 *
 * corral writes there as root, and a task's user may be able to write
 * there too (a log directory shared with the tasks, or one left group- or
 * world-writable). So nothing here goes by path once the directory is
 * open: the file is opened relative to the held fd without following a
 * link (openat2 RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH where the kernel
 * has it, O_NOFOLLOW always), anything but a plain regular file is
 * refused, renames stay inside the held directory, and the file begun
 * after a rotation must be new (O_EXCL): a link or file planted at a name
 * corral is about to use is never written through. A directory that
 * someone other than corral's user (or root) owns, or that group or
 * others may write, is refused unless the config says it is shared
 * (`log.shared_dir`). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Why no fd came back. `refused`: unsafe to write, for good (a link, not a
 * regular file, a directory others can write); else `error` (an errno)
 * may pass, and the open is worth trying again later. */
struct log_dir_failure {
	bool refused;
	int error;
	char why[320];
};

/* Makes DIR (0755) if it is missing, then DIR/GROUP inside it, and returns
 * an fd of DIR/GROUP (O_DIRECTORY, O_CLOEXEC), or -1 with `failure` set. */
int log_dir_open(const char *dir, const char *group, bool shared_dir,
		 struct log_dir_failure *failure);

/* NAME in the held directory, write-only and appending, made 0644 if
 * missing; `exclusive`: it must not exist yet (the file that follows a
 * rotation). Returns the fd and its size, or -1 with `failure` set. */
int log_dir_open_file(int dir_fd, const char *name, bool exclusive, uint64_t *size,
		      struct log_dir_failure *failure);

/* NAME -> NAME.1 -> ... -> NAME.keep inside the held directory, the one
 * past `keep` deleted (keep 0: NAME deleted). Returns 0 once NAME is free,
 * or -errno when it could not be moved (the caller writes on into it).
 * `older_error`: the first errno of moving or deleting an older file (0:
 * none), which costs that file only. */
int log_dir_rotate(int dir_fd, const char *name, unsigned keep, int *older_error);

/* The held directory has no name any more (DIR or DIR/GROUP was deleted:
 * its link count is 0). */
bool log_dir_gone(int dir_fd);

/* NAME in the held directory is not the open file `fd` any more: the file
 * was moved or deleted (or its directory was: log_dir_gone). Stats only,
 * one fstatat and one or two fstat: cheap enough for once a batch. */
bool log_dir_file_gone(int dir_fd, const char *name, int fd);
