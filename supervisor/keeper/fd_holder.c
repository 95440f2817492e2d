#include "supervisor/keeper/fd_holder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xmalloc.h"

void fd_holder_init(struct fd_holder *holder)
{
	memset(holder, 0, sizeof(*holder));
}

void fd_holder_free(struct fd_holder *holder)
{
	for (size_t s = 0; s < holder->slot_count; s++)
		for (unsigned r = 0; r < FD_HOLDER_ROLES; r++)
			if (holder->slots[s].fds[r] >= 0)
				close(holder->slots[s].fds[r]);
	free(holder->slots);
	fd_holder_init(holder);
}

/* Slots up to `slot`, each with no fd. */
static void grow(struct fd_holder *holder, uint32_t slot)
{
	if (slot < holder->slot_count)
		return;
	size_t count = (size_t)slot + 1;
	if (count < holder->slot_count * 2)
		count = holder->slot_count * 2;
	holder->slots = xreallocarray(holder->slots, count, sizeof(*holder->slots));
	for (size_t s = holder->slot_count; s < count; s++)
		for (unsigned r = 0; r < FD_HOLDER_ROLES; r++)
			holder->slots[s].fds[r] = -1;
	holder->slot_count = count;
}

int fd_holder_hold(struct fd_holder *holder, uint32_t slot, unsigned role, int fd)
{
	if (role >= FD_HOLDER_ROLES) {
		close(fd);
		return -EINVAL;
	}
	fd_holder_drop(holder, slot, role);
	grow(holder, slot);
	holder->slots[slot].fds[role] = fd;
	holder->held++;
	return 0;
}

void fd_holder_drop(struct fd_holder *holder, uint32_t slot, unsigned role)
{
	if (slot >= holder->slot_count || role >= FD_HOLDER_ROLES ||
	    holder->slots[slot].fds[role] < 0)
		return;
	close(holder->slots[slot].fds[role]);
	holder->slots[slot].fds[role] = -1;
	holder->held--;
}

int fd_holder_get(const struct fd_holder *holder, uint32_t slot, unsigned role)
{
	if (slot >= holder->slot_count || role >= FD_HOLDER_ROLES)
		return -1;
	return holder->slots[slot].fds[role];
}

void fd_holder_visit(const struct fd_holder *holder,
		     void (*visit)(void *context, uint32_t slot, unsigned role, int fd),
		     void *context)
{
	for (size_t s = 0; s < holder->slot_count; s++)
		for (unsigned r = 0; r < FD_HOLDER_ROLES; r++)
			if (holder->slots[s].fds[r] >= 0)
				visit(context, (uint32_t)s, r, holder->slots[s].fds[r]);
}
