#include "isolation/cgroup_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"

int cgroup_fs_write(int dir_fd, const char *name, const char *text)
{
	_cleanup_close_ int fd = openat(dir_fd, name, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t length = strlen(text);
	ssize_t written = write(fd, text, length);
	return written < 0 ? -errno : (size_t)written == length ? 0 : -EIO;
}

long cgroup_fs_read(int dir_fd, const char *name, char *buffer, size_t size)
{
	_cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t total = 0;
	while (total + 1 < size) {
		ssize_t got = read(fd, buffer + total, size - 1 - total);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			break;
		total += (size_t)got;
	}
	buffer[total] = '\0';
	return (long)total;
}

/* The number after `key` in "key value" lines. */
static int find_key(const char *text, const char *key, uint64_t *value)
{
	size_t key_length = strlen(key);
	for (const char *line = text; *line;) {
		if (strncmp(line, key, key_length) == 0 && line[key_length] == ' ') {
			*value = strtoull(line + key_length + 1, NULL, 10);
			return 0;
		}
		const char *end = strchr(line, '\n');
		if (!end)
			break;
		line = end + 1;
	}
	return -ENOENT;
}

int cgroup_fs_read_key(int dir_fd, const char *name, const char *key, uint64_t *value)
{
	char text[4096];
	long length = cgroup_fs_read(dir_fd, name, text, sizeof(text));
	if (length < 0)
		return (int)length;
	return find_key(text, key, value);
}

int cgroup_fs_pread_key(int fd, const char *key, uint64_t *value)
{
	char text[4096];
	ssize_t length = pread(fd, text, sizeof(text) - 1, 0);
	if (length < 0)
		return -errno;
	text[length] = '\0';
	return find_key(text, key, value);
}

int cgroup_fs_read_number(int dir_fd, const char *name, uint64_t *value)
{
	char text[64];
	long length = cgroup_fs_read(dir_fd, name, text, sizeof(text));
	if (length < 0)
		return (int)length;
	if (strncmp(text, "max", 3) == 0) {
		*value = UINT64_MAX;
		return 0;
	}
	char *end;
	errno = 0;
	*value = strtoull(text, &end, 10);
	return errno || end == text ? -EINVAL : 0;
}

bool cgroup_fs_has_word(const char *text, const char *word)
{
	size_t length = strlen(word);
	for (const char *at = text; (at = strstr(at, word)); at += length) {
		bool starts = at == text || at[-1] == ' ';
		bool ends = at[length] == '\0' || at[length] == ' ' || at[length] == '\n';
		if (starts && ends)
			return true;
	}
	return false;
}

int cgroup_fs_signal_members(int dir_fd, int signal_number, pid_t except)
{
	char text[8192];
	long length = cgroup_fs_read(dir_fd, "cgroup.procs", text, sizeof(text));
	if (length < 0)
		return (int)length;
	for (char *line = text; *line;) {
		pid_t pid = (pid_t)strtol(line, &line, 10);
		if (pid > 0 && pid != except)
			kill(pid, signal_number);
		while (*line == '\n')
			line++;
	}
	return 0;
}

static void kill_listed_processes(int dir_fd)
{
	cgroup_fs_signal_members(dir_fd, SIGKILL, 0);
}

int cgroup_fs_kill(int dir_fd)
{
	int failure = cgroup_fs_write(dir_fd, "cgroup.kill", "1");
	if (failure == -ENOENT) {
		kill_listed_processes(dir_fd);
		return 0;
	}
	return failure;
}

static bool is_empty(int dir_fd)
{
	uint64_t populated = 0;
	if (cgroup_fs_read_key(dir_fd, "cgroup.events", "populated", &populated) == 0)
		return !populated;
	char text[16]; /* v1: no cgroup.events */
	return cgroup_fs_read(dir_fd, "cgroup.procs", text, sizeof(text)) <= 0;
}

/* Waits a little for a killed cgroup to empty, so that rmdir can work:
 * processes need a moment to exit after SIGKILL. At most a second. */
static void wait_until_empty(int dir_fd)
{
	for (int attempt = 0; attempt < 100 && !is_empty(dir_fd); attempt++)
		poll(NULL, 0, 10);
}

int cgroup_fs_remove_tree(int parent_fd, const char *name)
{
	int dir_fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0)
		return errno == ENOENT ? 0 : -errno;
	cgroup_fs_kill(dir_fd);

	int first_error = 0;
	DIR *directory = fdopendir(dup(dir_fd));
	if (directory) {
		struct dirent *entry;
		while ((entry = readdir(directory))) {
			if (entry->d_type != DT_DIR || entry->d_name[0] == '.')
				continue;
			int failure = cgroup_fs_remove_tree(dir_fd, entry->d_name);
			if (failure < 0 && !first_error)
				first_error = failure;
		}
		closedir(directory);
	}
	wait_until_empty(dir_fd);
	close(dir_fd);
	if (unlinkat(parent_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && !first_error)
		first_error = -errno;
	return first_error;
}
