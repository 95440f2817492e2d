/* Small reads and writes of cgroupfs files, relative to a directory fd.
 *
 * cgroupfs files are tiny and written in one call: a partial write is an
 * error, and the kernel's errno (EINVAL for a bad value, EBUSY, ...) is the
 * message users need. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes `text` to dir_fd/name. 0 or -errno. */
int cgroup_fs_write(int dir_fd, const char *name, const char *text);

/* Reads dir_fd/name into buffer, NUL-terminated. Length or -errno. */
long cgroup_fs_read(int dir_fd, const char *name, char *buffer, size_t size);

/* The number after `key` in a "key value" file (cgroup.events, cpu.stat,
 * memory.events, memory.oom_control). 0 or -errno (-ENOENT: no such key). */
int cgroup_fs_read_key(int dir_fd, const char *name, const char *key, uint64_t *value);

/* The same, through an open file, read from its start: for a file watched
 * with epoll, where this read also rearms EPOLLPRI. */
int cgroup_fs_pread_key(int fd, const char *key, uint64_t *value);

/* A file holding one number, or "max" (UINT64_MAX). 0 or -errno. */
int cgroup_fs_read_number(int dir_fd, const char *name, uint64_t *value);

/* True when `name` holds the word `word` among space-separated words
 * (cgroup.controllers, cgroup.subtree_control). */
bool cgroup_fs_has_word(const char *text, const char *word);

/* SIGKILLs every process of the cgroup at dir_fd: cgroup.kill, or on a
 * kernel without it (before 5.14) and on v1, each pid of cgroup.procs.
 * 0 or -errno. */
int cgroup_fs_kill(int dir_fd);

/* Sends `signal_number` to every process cgroup.procs lists, but `except`
 * (0: none), once: what forks meanwhile is the kill timeout's. 0, or
 * -errno when the list cannot be read. */
int cgroup_fs_signal_members(int dir_fd, int signal_number, pid_t except);

/* Kills every process of the cgroup at dir_fd and removes the directory
 * tree below it, then the directory itself (rmdir of each leaf, deepest
 * first). Uses cgroup.kill where the kernel has it, else SIGKILL to each
 * pid in cgroup.procs. Best effort: returns 0 or the first -errno. */
int cgroup_fs_remove_tree(int parent_fd, const char *name);
