#include "supervisor/keeper/keeper_handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/xmalloc.h"

#define LOOP_VARIABLES 3

static struct rlimit loop_fd_limit;
static bool loop_fd_limit_set;

void keeper_handoff_loop_fd_limit(const struct rlimit *limit)
{
	loop_fd_limit = *limit;
	loop_fd_limit_set = true;
}

/* The caller's environment without our variables, then `extra`. */
static char **loop_environment(char *extra[LOOP_VARIABLES])
{
	extern char **environ;
	static const char *const ours[] = {KEEPER_FD_ENV "=", KEEPER_RESTORE_ENV "=",
					   KEEPER_RESTORES_ENV "="};
	size_t count = 0;
	while (environ[count])
		count++;
	char **envp = xcalloc(count + LOOP_VARIABLES + 1, sizeof(*envp));
	size_t used = 0;
	for (size_t i = 0; i < count; i++) {
		bool taken = false;
		for (size_t e = 0; e < LOOP_VARIABLES; e++)
			taken |= strncmp(environ[i], ours[e], strlen(ours[e])) == 0;
		if (!taken)
			envp[used++] = environ[i];
	}
	for (size_t e = 0; e < LOOP_VARIABLES && extra[e]; e++)
		envp[used++] = extra[e];
	return envp;
}

/* In the child: the fds where the loop wants them, the variables, the
 * exec. Returns only on failure. */
static void become_loop(int binary, char *const argv[], int channel,
			const struct kept_records *held, unsigned restores)
{
	/* A copy of the table: the child moves its fds. */
	struct kept_records records = *held;
	records.items = xcalloc(held->count ? held->count : 1, sizeof(*records.items));
	if (held->count) /* nothing held: items may be NULL, which memcpy must not see */
		memcpy(records.items, held->items, held->count * sizeof(*records.items));
	int restore = held->count ? kept_records_to_memfd(held) : -1;
	int *others[] = {&binary, &channel, &restore};
	if (kept_records_place(&records, others, restore >= 0 ? 3 : 2) < 0)
		return;
	/* The fds placed above it stay open; the loop raises its own. */
	if (loop_fd_limit_set)
		setrlimit(RLIMIT_NOFILE, &loop_fd_limit);
	fcntl(channel, F_SETFD, 0);
	fcntl(binary, F_SETFD, FD_CLOEXEC); /* an ELF binary runs from a closed-on-exec fd */
	char *extra[LOOP_VARIABLES + 1] = {
	    xasprintf(KEEPER_FD_ENV "=%d", channel), xasprintf(KEEPER_RESTORES_ENV "=%u", restores),
	    restore >= 0 ? xasprintf(KEEPER_RESTORE_ENV "=%d", restore) : NULL, NULL};
	syscall(SYS_execveat, binary, "", argv, loop_environment(extra), AT_EMPTY_PATH);
}

pid_t keeper_exec_loop(int binary, char *const argv[], int channel,
		       const struct kept_records *records, unsigned restores)
{
	pid_t pid = fork();
	if (pid == 0) {
		become_loop(binary, argv, channel, records, restores);
		_exit(127);
	}
	return pid < 0 ? -errno : pid;
}
