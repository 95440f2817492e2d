/* Spare network namespaces for mode none: see network_spares.h. */
#include "supervisor/tasks/network_spares.h"

#include <unistd.h>

/* One namespace per idle moment (about 0.5 ms of corral's time): a task's
 * exit that comes meanwhile waits no longer than that. */
static void refill(struct loop_idle *idle)
{
	struct network_spares *spares = idle->data;
	struct network_failure failure;
	int fd;

	if (spares->count >= NETWORK_SPARES_SIZE)
		return;
	/* Not said here: the next take makes its namespace itself and fails
	 * that start with the reason, naming the task. */
	if (network_namespace_create_loopback(spares->host, &fd, &failure) < 0)
		return;
	spares->fds[spares->count++] = fd;
	if (spares->count < NETWORK_SPARES_SIZE)
		loop_idle_request(spares->loop, &spares->refill);
}

void network_spares_init(struct network_spares *spares, struct loop *loop,
			 struct network_host *host)
{
	*spares = (struct network_spares){.loop = loop, .host = host};
	loop_idle_init(&spares->refill, refill, spares);
}

int network_spares_take(struct network_spares *spares, int *netns_fd,
			struct network_failure *failure)
{
	if (spares->count > 0) {
		*netns_fd = spares->fds[--spares->count];
		spares->fds[spares->count] = -1;
	} else {
		int result = network_namespace_create_loopback(spares->host, netns_fd, failure);
		if (result < 0)
			return result;
	}
	loop_idle_request(spares->loop, &spares->refill);
	return 0;
}

void network_spares_close(struct network_spares *spares)
{
	if (spares->loop)
		loop_idle_cancel(spares->loop, &spares->refill);
	while (spares->count > 0)
		close(spares->fds[--spares->count]);
}
