/* A path as a task sees it, looked up from corral. /proc/PID/root/PATH is
 * not enough: the kernel enters the task's root through the magic link,
 * then follows an absolute symlink in it (/run/app.sock -> /host.sock)
 * from corral's own root, so a task could point corral at any socket or
 * file of the host. openat2's RESOLVE_IN_ROOT keeps every step, ".." and
 * absolute symlinks included, inside the task's root. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* An O_PATH fd of `path` (absolute) resolved inside the root of process
 * `pid`, symlinks followed there and /proc's magic links refused; or -errno
 * with `error` ("/run/app.sock in the task's root: No such file or
 * directory"). Without openat2 (Linux < 5.6) it fails: never resolved
 * from corral's root instead. Use it through /proc/self/fd/N (connect()
 * to a Unix socket works that way). */
int task_root_open_path(pid_t pid, const char *path, char *error, size_t error_size);
