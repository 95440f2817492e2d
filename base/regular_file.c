#include "base/regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_kind.h"
#include "base/xmalloc.h"

void regular_file_format_size(size_t bytes, char *buffer, size_t size)
{
	if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
		snprintf(buffer, size, "%zu MiB", bytes >> 20);
	else if (bytes >= 1024 && bytes % 1024 == 0)
		snprintf(buffer, size, "%zu KiB", bytes >> 10);
	else
		snprintf(buffer, size, "%zu bytes", bytes);
}

/* Closes `fd` (when open) and returns -error; the caller has said why. */
static int give_up(int fd, int error)
{
	if (fd >= 0)
		close(fd);
	return -error;
}

static int refuse_errno(int fd, int error, char *reason)
{
	snprintf(reason, REGULAR_FILE_REASON_SIZE, "%s", strerror(error));
	return give_up(fd, error);
}

static int refuse_too_large(int fd, size_t max_bytes, char *reason)
{
	char cap[32];
	regular_file_format_size(max_bytes, cap, sizeof(cap));
	snprintf(reason, REGULAR_FILE_REASON_SIZE, "is larger than %s", cap);
	return give_up(fd, EFBIG);
}

int regular_file_read(const char *path, size_t max_bytes, char **out, size_t *out_size,
		      char reason[REGULAR_FILE_REASON_SIZE])
{
	/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	 * writer; it changes nothing for a regular file. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return refuse_errno(-1, errno, reason);
	struct stat status;
	if (fstat(fd, &status) < 0)
		return refuse_errno(fd, errno, reason);
	if (!S_ISREG(status.st_mode)) {
		snprintf(reason, REGULAR_FILE_REASON_SIZE, "is %s, not a regular file",
			 file_kind(status.st_mode));
		return give_up(fd, S_ISDIR(status.st_mode) ? EISDIR : EINVAL);
	}
	if ((unsigned long long)status.st_size > max_bytes)
		return refuse_too_large(fd, max_bytes, reason);

	/* st_size is a hint only: the file may grow while it is read, and
	 * /proc files say 0. The cap holds whatever the read returns. */
	size_t capacity = (size_t)status.st_size + 1, size = 0;
	if (capacity < 4096)
		capacity = 4096;
	char *data = xmalloc(capacity);
	for (;;) {
		if (size + 1 >= capacity) {
			capacity *= 2;
			data = xreallocarray(data, capacity, 1);
		}
		ssize_t got = read(fd, data + size, capacity - 1 - size);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int failure = errno;
			free(data);
			return refuse_errno(fd, failure, reason);
		}
		if (got == 0)
			break;
		size += (size_t)got;
		if (size > max_bytes) {
			free(data);
			return refuse_too_large(fd, max_bytes, reason);
		}
	}
	close(fd);
	data[size] = '\0';
	*out = data;
	*out_size = size;
	return 0;
}
