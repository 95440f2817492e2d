/* Reading a whole file from a path a user gives (the config, conf.d
 * entries, env_file, CDI specs): a FIFO would block the open or the read
 * for ever, /dev/zero or a log file named by mistake would be read until
 * memory runs out, and either would stall `corral check`, a start or a
 * reload in corral's loop. So only a regular file is read, opened without
 * blocking, and only up to a cap the caller documents.
 *
 * Symlinks are followed: a Kubernetes ConfigMap volume and /etc/cdi
 * entries are symlinks by design; what they lead to is checked instead. */
#pragma once

#include <stddef.h>

/* Fills `reason` with a phrase that completes "PATH ...": "is a FIFO, not a
 * regular file", "is larger than 1 MiB", or strerror's text. */
#define REGULAR_FILE_REASON_SIZE 96

/* 0 with the whole file in *out (NUL-terminated, for the caller to free)
 * and its length in *out_size; or -errno with `reason`: -EISDIR for a
 * directory, -EINVAL for any other file that is not regular (FIFO, device,
 * socket), -EFBIG past `max_bytes`, or what open() or read() said. */
int regular_file_read(const char *path, size_t max_bytes, char **out, size_t *out_size,
		      char reason[REGULAR_FILE_REASON_SIZE]);

/* "16 MiB", "1 MiB", "4096 bytes": how messages and docs say a cap. */
void regular_file_format_size(size_t bytes, char *buffer, size_t size);
