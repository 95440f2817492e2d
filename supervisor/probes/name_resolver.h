/* Host names resolved from corral's loop without ever blocking it, with
 * c-ares (resolver_library.h): for the outside targets of `wait_for`
 * (db:5432, http://auth:8080/healthz). One channel for the whole corral,
 * made at the first lookup; it reads /etc/hosts and /etc/resolv.conf
 * (search domains and ndots included, as a Kubernetes pod's name lookups
 * need). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/loop.h"

#define NAME_LOOKUP_ADDRESSES_MAX 8

struct name_resolver;
struct name_lookup;

/* The addresses found (with `port` set), in the resolver's order, or none
 * and `error` ("db: Domain name not found"). Called once, from the loop,
 * never from within name_lookup_start. */
typedef void (*name_lookup_done)(void *context, const struct sockaddr_storage *addresses,
				 size_t count, const char *error);

/* NULL with the reason in `error` (c-ares cannot be loaded or set up). */
struct name_resolver *name_resolver_create(struct loop *loop, char *error, size_t error_size);
/* Lookups still under way are dropped: their `done` is not called. */
void name_resolver_free(struct name_resolver *resolver);

struct name_lookup *name_lookup_start(struct name_resolver *resolver, const char *host,
				      uint16_t port, name_lookup_done done, void *context);
/* Its `done` will not be called. */
void name_lookup_cancel(struct name_lookup *lookup);
