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

static void close_on_exec(struct kept_records *records)
{
	for (size_t i = 0; i < records->count; i++)
		for (size_t f = 0; f < records->items[i].fd_count; f++)
			if (records->items[i].fds[f] >= 0)
				fcntl(records->items[i].fds[f], F_SETFD, FD_CLOEXEC);
}

int keeper_loop_side_take(struct keeper_loop_side *side, char *error, size_t error_size)
{
	*side = (struct keeper_loop_side){.channel = -1};
	kept_records_init(&side->restored);
	const char *channel = getenv(KEEPER_FD_ENV), *restore = getenv(KEEPER_RESTORE_ENV),
		   *restores = getenv(KEEPER_RESTORES_ENV);
	int result = 0;
	unsigned long channel_number = 0, restore_count = 0, restore_fd = 0;
	if (!channel && !restore && !restores)
		return 0;
	if (!whole(channel, INT_MAX, &channel_number) || fcntl((int)channel_number, F_GETFD) < 0) {
		snprintf(error, error_size, "%s: \"%s\" is not an open fd", KEEPER_FD_ENV,
			 channel ? channel : "");
		result = -EINVAL;
	} else if (!whole(restores, UINT_MAX, &restore_count)) {
		snprintf(error, error_size, "%s: \"%s\" is not a whole number", KEEPER_RESTORES_ENV,
			 restores ? restores : "");
		result = -EINVAL;
	} else if (restore &&
		   (!whole(restore, INT_MAX, &restore_fd) || fcntl((int)restore_fd, F_GETFD) < 0)) {
		snprintf(error, error_size, "%s: \"%s\" is not an open fd", KEEPER_RESTORE_ENV,
			 restore);
		result = -EINVAL;
	} else if (restore) {
		result = kept_records_read((int)restore_fd, &side->restored, error, error_size);
		close((int)restore_fd);
		side->restoring = result == 0;
	}
	unsetenv(KEEPER_FD_ENV);
	unsetenv(KEEPER_RESTORE_ENV);
	unsetenv(KEEPER_RESTORES_ENV);
	if (result < 0)
		return result;
	side->channel = (int)channel_number;
	side->restores = (unsigned)restore_count;
	fcntl(side->channel, F_SETFD, FD_CLOEXEC);
	close_on_exec(&side->restored);
	return 0;
}

unsigned keeper_loop_side_restores(const struct keeper_loop_side *side)
{
	return side->restores;
}

void keeper_loop_side_end_restore(struct keeper_loop_side *side, bool (*taken)(void *, int),
				  void *context)
{
	struct kept_records *records = &side->restored;
	for (size_t i = 0; i < records->count; i++)
		for (size_t f = 0; f < records->items[i].fd_count; f++) {
			int *fd = &records->items[i].fds[f];
			if (*fd >= 0 && !taken(context, *fd))
				close(*fd);
			*fd = -1;
		}
	kept_records_free(records);
	side->restoring = false;
}

void keeper_loop_side_free(struct keeper_loop_side *side)
{
	/* Never used: its fds are not ours to close any more. */
	for (size_t i = 0; i < side->restored.count; i++)
		for (size_t f = 0; f < side->restored.items[i].fd_count; f++)
			side->restored.items[i].fds[f] = -1;
	kept_records_free(&side->restored);
	if (side->channel >= 0)
		close(side->channel);
	side->channel = -1;
}
