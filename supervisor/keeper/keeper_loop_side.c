#include "supervisor/keeper/keeper_loop_side.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "supervisor/keeper/keeper_handoff.h"

/* A whole number, all of `text`, at most `max`. */
static bool whole(const char *text, unsigned long max, unsigned long *value)
{
	char *end;
	errno = 0;
	if (!text || *text < '0' || *text > '9')
		return false;
	*value = strtoul(text, &end, 10);
	return !errno && !*end && *value <= max;
}

static void close_on_exec(void *context, uint32_t slot, unsigned role, int fd)
{
	(void)context, (void)slot, (void)role;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
}

int keeper_loop_side_take(struct keeper_loop_side *side, char *error, size_t error_size)
{
	side->channel = -1;
	side->restores = 0;
	fd_holder_init(&side->given);
	const char *channel = getenv(KEEPER_FD_ENV), *fds = getenv(KEEPER_FDS_ENV),
		   *restores = getenv(KEEPER_RESTORES_ENV);
	int result = 0;
	unsigned long channel_number = 0, restore_count = 0;
	if (!channel && !fds && !restores)
		return 0;
	if (!whole(channel, INT_MAX, &channel_number) || fcntl((int)channel_number, F_GETFD) < 0) {
		snprintf(error, error_size, "%s: \"%s\" is not an open fd", KEEPER_FD_ENV,
			 channel ? channel : "");
		result = -EINVAL;
	} else if (!whole(restores, UINT_MAX, &restore_count)) {
		snprintf(error, error_size, "%s: \"%s\" is not a whole number", KEEPER_RESTORES_ENV,
			 restores ? restores : "");
		result = -EINVAL;
	} else {
		result = keeper_fds_parse(fds ? fds : "", &side->given, error, error_size);
	}
	unsetenv(KEEPER_FD_ENV);
	unsetenv(KEEPER_FDS_ENV);
	unsetenv(KEEPER_RESTORES_ENV);
	if (result < 0)
		return result;
	side->channel = (int)channel_number;
	side->restores = (unsigned)restore_count;
	fcntl(side->channel, F_SETFD, FD_CLOEXEC);
	fd_holder_visit(&side->given, close_on_exec, NULL);
	return 0;
}

unsigned keeper_loop_side_restores(const struct keeper_loop_side *side)
{
	return side->restores;
}

void keeper_loop_side_free(struct keeper_loop_side *side)
{
	fd_holder_free(&side->given);
	if (side->channel >= 0)
		close(side->channel);
	side->channel = -1;
}
