#include "supervisor/pid1/termination_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_kind.h"
#include "base/xmalloc.h"

#define OPEN_FLAGS (O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

static int refuse(struct termination_log *log, int fd, int failure, char *error, size_t error_size,
		  const char *why)
{
	snprintf(error, error_size, "termination_log %s %s", log->path, why);
	if (fd >= 0)
		close(fd);
	return failure;
}

/* Read-write, so that a task's own message can be kept; write-only when
 * that is all corral may. */
static int open_file(const char *path, bool create, bool *can_read)
{
	int flags = OPEN_FLAGS | (create ? O_CREAT : 0);
	int fd = open(path, O_RDWR | flags, 0644);
	*can_read = fd >= 0;
	if (fd < 0 && errno == EACCES)
		fd = open(path, O_WRONLY | flags, 0644);
	return fd < 0 ? -errno : fd;
}

int termination_log_open(struct termination_log *log, const char *configured, char *error,
			 size_t error_size)
{
	*log = (struct termination_log){.fd = -1};
	if (configured && !*configured)
		return 0;
	bool by_default = !configured;
	log->path = xstrdup(by_default ? TERMINATION_LOG_DEFAULT : configured);
	int fd = open_file(log->path, !by_default, &log->can_read);
	if (fd == -ENOENT && by_default)
		return 0;
	char why[160];
	if (fd < 0) {
		switch (-fd) {
		case ELOOP:
			return refuse(
			    log, -1, fd, error, error_size,
			    "is a symbolic link: refused, it could lead corral to write over "
			    "another file; no termination message is written");
		case ENXIO:
			return refuse(log, -1, fd, error, error_size,
				      "is a FIFO or a socket, not a regular file: refused; no "
				      "termination message is written");
		default:
			snprintf(why, sizeof(why),
				 "cannot be opened: %s; no termination message is "
				 "written",
				 strerror(-fd));
			return refuse(log, -1, fd, error, error_size, why);
		}
	}
	struct stat status;
	if (fstat(fd, &status) < 0) {
		int failure = -errno;
		snprintf(why, sizeof(why), "cannot be read: %s", strerror(-failure));
		return refuse(log, fd, failure, error, error_size, why);
	}
	if (!S_ISREG(status.st_mode)) {
		snprintf(why, sizeof(why),
			 "is %s, not a regular file: refused; no termination message is written",
			 file_kind(status.st_mode));
		return refuse(log, fd, -EINVAL, error, error_size, why);
	}
	if (status.st_nlink > 1) {
		snprintf(why, sizeof(why),
			 "has %lu hard links: refused, it could be another file's name; no "
			 "termination message is written",
			 (unsigned long)status.st_nlink);
		return refuse(log, fd, -EMLINK, error, error_size, why);
	}
	/* Whatever an earlier run left there is not this one's message. */
	if (ftruncate(fd, 0) < 0) {
		int failure = -errno;
		snprintf(why, sizeof(why),
			 "cannot be emptied: %s; no termination message is written",
			 strerror(-failure));
		return refuse(log, fd, failure, error, error_size, why);
	}
	log->fd = fd;
	return 0;
}

size_t termination_log_read(const struct termination_log *log, char *buffer, size_t size)
{
	if (log->fd < 0 || !log->can_read)
		return 0;
	size_t got = 0;
	while (got < size) {
		ssize_t n = pread(log->fd, buffer + got, size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

int termination_log_write(const struct termination_log *log, const char *text, size_t length,
			  char *error, size_t error_size)
{
	if (log->fd < 0)
		return 0;
	int failure = 0;
	if (ftruncate(log->fd, 0) < 0)
		failure = -errno;
	for (size_t done = 0; !failure && done < length;) {
		ssize_t n = pwrite(log->fd, text + done, length - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			failure = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
	if (failure)
		snprintf(error, error_size,
			 "termination_log %s: cannot write the termination message: %s", log->path,
			 strerror(-failure));
	return failure;
}

void termination_log_close(struct termination_log *log)
{
	if (log->fd >= 0)
		close(log->fd);
	free(log->path);
	*log = (struct termination_log){.fd = -1};
}
