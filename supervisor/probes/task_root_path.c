#include "supervisor/probes/task_root_path.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int task_root_open_path(pid_t pid, const char *path, char *error, size_t error_size)
{
	char root_path[64];
	snprintf(root_path, sizeof(root_path), "/proc/%d/root", (int)pid);
	int root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		int failure = -errno;
		snprintf(error, error_size, "the task's root (%s): %s", root_path,
			 strerror(-failure));
		return failure;
	}
	struct open_how how = {
	    .flags = O_PATH | O_CLOEXEC,
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	/* EAGAIN: a rename in the task's root raced the lookup. A task that
	 * renames without pause must not keep corral here: a few tries. */
	int fd = -1;
	for (int attempt = 0; attempt < 3 && fd < 0; attempt++) {
		fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
		if (fd < 0 && errno != EAGAIN)
			break;
	}
	int failure = errno;
	close(root);
	if (fd >= 0)
		return fd;
	if (failure == ENOSYS)
		snprintf(error, error_size,
			 "%s: cannot look it up inside the task's root: openat2 needs Linux 5.6 or "
			 "later",
			 path);
	else
		snprintf(error, error_size, "%s in the task's root: %s", path, strerror(failure));
	return -failure;
}
