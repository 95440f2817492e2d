/* What a file is, as a message says it: "/x is a FIFO, not a regular file". */
#pragma once

#include <sys/types.h>

/* "a regular file", "a directory", "a FIFO", "a socket", "a character
 * device", "a block device", "a symbolic link", or "a special file". */
const char *file_kind(mode_t mode);
