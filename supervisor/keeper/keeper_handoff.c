#include "supervisor/keeper/keeper_handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/xmalloc.h"

struct describing {
	char *text;
	size_t length, capacity;
};

static void describe_one(void *context, uint32_t slot, unsigned role, int fd)
{
	struct describing *out = context;
	char entry[48];
	int length = snprintf(entry, sizeof(entry), "%s%u.%u=%d", out->length ? "," : "",
			      (unsigned)slot, role, fd);
	if (out->length + (size_t)length + 1 > out->capacity) {
		out->capacity = (out->length + (size_t)length + 1) * 2;
		out->text = xreallocarray(out->text, out->capacity, 1);
	}
	memcpy(out->text + out->length, entry, (size_t)length + 1);
	out->length += (size_t)length;
}

char *keeper_fds_describe(const struct fd_holder *holder)
{
	struct describing out = {xstrdup(""), 0, 1};
	fd_holder_visit(holder, describe_one, &out);
	return out.text;
}

/* A whole number in [0, max] at *at, which moves past it. */
static bool number(const char **at, unsigned long max, unsigned long *value)
{
	char *end;
	errno = 0;
	if (**at < '0' || **at > '9')
		return false;
	*value = strtoul(*at, &end, 10);
	if (errno || *value > max)
		return false;
	*at = end;
	return true;
}

int keeper_fds_parse(const char *text, struct fd_holder *into, char *error, size_t error_size)
{
	const char *at = text;
	while (*at) {
		const char *entry = at;
		unsigned long slot, role, fd;
		bool good = number(&at, UINT32_MAX, &slot) && *at++ == '.' &&
			    number(&at, FD_HOLDER_ROLES - 1, &role) && *at++ == '=' &&
			    number(&at, INT_MAX, &fd) && (*at == ',' || *at == '\0');
		if (good && fd_holder_get(into, (uint32_t)slot, (unsigned)role) >= 0)
			good = false; /* the same key twice */
		if (!good) {
			const char *end = strchr(entry, ',');
			snprintf(error, error_size,
				 "%s: \"%.*s\" is not SLOT.ROLE=FD (roles 0 to %d)", KEEPER_FDS_ENV,
				 (int)(end ? (size_t)(end - entry) : strlen(entry)), entry,
				 FD_HOLDER_ROLES - 1);
			/* The fds stay open: a wrong variable is not a reason to
			 * close what it may name. */
			for (size_t s = 0; s < into->slot_count; s++)
				for (unsigned r = 0; r < FD_HOLDER_ROLES; r++)
					into->slots[s].fds[r] = -1;
			into->held = 0;
			return -EINVAL;
		}
		fd_holder_hold(into, (uint32_t)slot, (unsigned)role, (int)fd);
		if (*at == ',')
			at++;
	}
	return 0;
}

static void keep_open(void *context, uint32_t slot, unsigned role, int fd)
{
	(void)context, (void)slot, (void)role;
	fcntl(fd, F_SETFD, 0);
}

/* The caller's environment without our three variables, then them. */
static char **loop_environment(char *const extra[3])
{
	extern char **environ;
	size_t count = 0;
	while (environ[count])
		count++;
	char **envp = xcalloc(count + 4, sizeof(*envp));
	size_t used = 0;
	for (size_t i = 0; i < count; i++) {
		bool ours = false;
		for (size_t e = 0; e < 3; e++) {
			size_t name = (size_t)(strchr(extra[e], '=') - extra[e]) + 1;
			ours |= strncmp(environ[i], extra[e], name) == 0;
		}
		if (!ours)
			envp[used++] = environ[i];
	}
	for (size_t e = 0; e < 3; e++)
		envp[used++] = extra[e];
	return envp;
}

pid_t keeper_exec_loop(int binary, char *const argv[], int channel, const struct fd_holder *holder,
		       unsigned restores)
{
	char *fds = keeper_fds_describe(holder);
	char *extra[3] = {xasprintf(KEEPER_FD_ENV "=%d", channel),
			  xasprintf(KEEPER_FDS_ENV "=%s", fds),
			  xasprintf(KEEPER_RESTORES_ENV "=%u", restores)};
	free(fds);
	char **envp = loop_environment(extra);
	pid_t pid = fork();
	if (pid == 0) {
		/* In the child only: the keeper's own fds stay close-on-exec. */
		fd_holder_visit(holder, keep_open, NULL);
		fcntl(channel, F_SETFD, 0);
		syscall(SYS_execveat, binary, "", argv, envp, AT_EMPTY_PATH);
		_exit(127);
	}
	int error = errno;
	free(envp);
	for (size_t e = 0; e < 3; e++)
		free(extra[e]);
	return pid < 0 ? -error : pid;
}
