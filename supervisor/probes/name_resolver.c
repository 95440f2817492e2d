#include "supervisor/probes/name_resolver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "base/xmalloc.h"
#include "supervisor/probes/resolver_library.h"

/* c-ares keeps a socket or two per name server. */
#define RESOLVER_SOCKETS_MAX 16
/* A server that does not answer is asked again after this long, twice:
 * a wait_for target is asked every interval anyway. */
#define RESOLVER_TRY_TIMEOUT_MS 1000
#define RESOLVER_TRIES          2

struct name_lookup {
	struct name_resolver *resolver;
	name_lookup_done done;
	void *context;
	bool cancelled; /* c-ares still has it: its callback frees it */
	bool answered;  /* the answer waits for `delivery` */
	struct loop_idle delivery;
	struct sockaddr_storage addresses[NAME_LOOKUP_ADDRESSES_MAX];
	size_t count;
	char error[160];
};

struct name_resolver {
	const struct resolver_library *ares;
	ares_channel channel;
	struct loop *loop;
	struct loop_watch sockets[RESOLVER_SOCKETS_MAX];
	struct loop_timer timeout;
};

static void arm_timeout(struct name_resolver *resolver)
{
	struct timeval wait;
	if (!resolver->ares->ares_timeout(resolver->channel, NULL, &wait)) {
		loop_timer_cancel(resolver->loop, &resolver->timeout);
		return;
	}
	uint64_t ms = (uint64_t)wait.tv_sec * 1000 + (uint64_t)wait.tv_usec / 1000;
	loop_timer_arm(resolver->loop, &resolver->timeout, loop_now_ms() + ms);
}

static void on_timeout(struct loop_timer *timer)
{
	struct name_resolver *resolver = timer->data;
	resolver->ares->ares_process_fd(resolver->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	arm_timeout(resolver);
}

static void on_socket(struct loop_watch *watch, uint32_t events)
{
	struct name_resolver *resolver = watch->data;
	int fd = watch->fd;
	resolver->ares->ares_process_fd(
	    resolver->channel, events & (EPOLLIN | EPOLLERR | EPOLLHUP) ? fd : ARES_SOCKET_BAD,
	    events & EPOLLOUT ? fd : ARES_SOCKET_BAD);
	arm_timeout(resolver);
}

/* c-ares says which of its sockets it wants to hear about. */
static void on_socket_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct name_resolver *resolver = data;
	struct loop_watch *watch = NULL, *free_slot = NULL;
	for (size_t i = 0; i < RESOLVER_SOCKETS_MAX; i++) {
		if (resolver->sockets[i].fd == fd)
			watch = &resolver->sockets[i];
		else if (resolver->sockets[i].fd < 0 && !free_slot)
			free_slot = &resolver->sockets[i];
	}
	uint32_t events = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);
	if (!events) {
		if (watch) {
			loop_watch_remove(resolver->loop, watch);
			watch->fd = -1;
		}
		return;
	}
	if (watch) {
		loop_watch_modify(resolver->loop, watch, events);
		return;
	}
	if (!free_slot)
		return; /* not heard: the query times out and is said to fail */
	free_slot->fd = fd;
	if (loop_watch_add(resolver->loop, free_slot, events) < 0)
		free_slot->fd = -1;
}

struct name_resolver *name_resolver_create(struct loop *loop, char *error, size_t error_size)
{
	const struct resolver_library *ares = resolver_library_load(error, error_size);
	if (!ares)
		return NULL;
	int status = ares->ares_library_init(ARES_LIB_INIT_ALL);
	if (status != ARES_SUCCESS) {
		snprintf(error, error_size, "c-ares: %s", ares->ares_strerror(status));
		return NULL;
	}
	struct name_resolver *resolver = xcalloc(1, sizeof(*resolver));
	resolver->ares = ares;
	resolver->loop = loop;
	for (size_t i = 0; i < RESOLVER_SOCKETS_MAX; i++)
		resolver->sockets[i] =
		    (struct loop_watch){.fd = -1, .callback = on_socket, .data = resolver};
	loop_timer_init(&resolver->timeout, on_timeout, resolver);
	struct ares_options options = {
	    .sock_state_cb = on_socket_state,
	    .sock_state_cb_data = resolver,
	    .timeout = RESOLVER_TRY_TIMEOUT_MS,
	    .tries = RESOLVER_TRIES,
	};
	status =
	    ares->ares_init_options(&resolver->channel, &options,
				    ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES);
	if (status != ARES_SUCCESS) {
		snprintf(error, error_size, "c-ares: %s", ares->ares_strerror(status));
		free(resolver);
		return NULL;
	}
	return resolver;
}

static void deliver(struct loop_idle *idle)
{
	struct name_lookup *lookup = idle->data;
	lookup->done(lookup->context, lookup->addresses, lookup->count,
		     lookup->count ? NULL : lookup->error);
	free(lookup);
}

static void on_answer(void *data, int status, int timeouts, struct ares_addrinfo *result)
{
	(void)timeouts;
	struct name_lookup *lookup = data;
	const struct resolver_library *ares = lookup->resolver->ares;
	if (lookup->cancelled) {
		if (result)
			ares->ares_freeaddrinfo(result);
		free(lookup);
		return;
	}
	if (status == ARES_SUCCESS && result) {
		for (struct ares_addrinfo_node *node = result->nodes;
		     node && lookup->count < NAME_LOOKUP_ADDRESSES_MAX; node = node->ai_next) {
			if (node->ai_addrlen > sizeof(lookup->addresses[0]))
				continue;
			memcpy(&lookup->addresses[lookup->count++], node->ai_addr,
			       node->ai_addrlen);
		}
	}
	if (!lookup->count)
		snprintf(lookup->error, sizeof(lookup->error), "%s",
			 status == ARES_SUCCESS ? "no address" : ares->ares_strerror(status));
	if (result)
		ares->ares_freeaddrinfo(result);
	/* From the loop, not from c-ares (which may answer at once, from
	 * /etc/hosts, inside name_lookup_start). */
	lookup->answered = true;
	loop_idle_request(lookup->resolver->loop, &lookup->delivery);
}

struct name_lookup *name_lookup_start(struct name_resolver *resolver, const char *host,
				      uint16_t port, name_lookup_done done, void *context)
{
	struct name_lookup *lookup = xcalloc(1, sizeof(*lookup));
	lookup->resolver = resolver;
	lookup->done = done;
	lookup->context = context;
	loop_idle_init(&lookup->delivery, deliver, lookup);
	char service[8];
	snprintf(service, sizeof(service), "%u", (unsigned)port);
	struct ares_addrinfo_hints hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	resolver->ares->ares_getaddrinfo(resolver->channel, host, service, &hints, on_answer,
					 lookup);
	arm_timeout(resolver);
	return lookup;
}

void name_lookup_cancel(struct name_lookup *lookup)
{
	if (lookup->answered) {
		loop_idle_cancel(lookup->resolver->loop, &lookup->delivery);
		free(lookup);
		return;
	}
	lookup->cancelled = true;
}

void name_resolver_free(struct name_resolver *resolver)
{
	if (!resolver)
		return;
	/* Each lookup still under way is answered ARES_EDESTRUCTION, and
	 * one not delivered yet is dropped with its idle request. */
	resolver->ares->ares_destroy(resolver->channel);
	for (size_t i = 0; i < RESOLVER_SOCKETS_MAX; i++)
		if (resolver->sockets[i].fd >= 0)
			loop_watch_remove(resolver->loop, &resolver->sockets[i]);
	loop_timer_cancel(resolver->loop, &resolver->timeout);
	free(resolver);
}
