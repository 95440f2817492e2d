/* Cleanup attributes, as systemd's src/basic: a variable marked with one of
 * these is released when it goes out of scope, so a function with several
 * early returns writes its unwind once, at the declaration.
 *
 *     _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
 *     if (fd < 0)
 *             return -errno;
 *     ...
 *     return TAKE_FD(fd);     (the caller owns it now: nothing is closed)
 *
 * Each helper keeps errno as it was, so a caller may still say "%m" or
 * return -errno after the scope ends. */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cleanup_free(void *pointer)
{
	free(*(void **)pointer);
}

static inline void cleanup_close(const int *fd)
{
	if (*fd < 0)
		return;
	int saved = errno;
	close(*fd);
	errno = saved;
}

static inline void cleanup_fclose(FILE **file)
{
	if (!*file)
		return;
	int saved = errno;
	fclose(*file);
	errno = saved;
}

#define _cleanup_free_   __attribute__((cleanup(cleanup_free)))
#define _cleanup_close_  __attribute__((cleanup(cleanup_close)))
#define _cleanup_fclose_ __attribute__((cleanup(cleanup_fclose)))

/* The pointer, and the variable emptied so that its cleanup does
 * nothing: ownership handed on. */
#define TAKE_PTR(pointer)                                                                          \
	({                                                                                         \
		__typeof__(pointer) taken_pointer_ = (pointer);                                    \
		(pointer) = NULL;                                                                  \
		taken_pointer_;                                                                    \
	})

/* The fd, and the variable emptied so that its cleanup does nothing:
 * ownership handed to the caller. */
#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int taken_fd_ = (fd);                                                              \
		(fd) = -1;                                                                         \
		taken_fd_;                                                                         \
	})
