/* sd_notify through the keeper: under systemd the keeper is the unit's
 * MainPID, and with `NotifyAccess=main` systemd takes messages from it
 * alone. So the loop is given a notify socket of the keeper's (abstract,
 * "@corral-keeper-PID") and the keeper passes on what the loop process
 * sends there, and nothing from anyone else (the sender's pid, from
 * SCM_CREDENTIALS, must be the loop's), to corral's own NOTIFY_SOCKET.
 * A task cannot pass for corral: it is never the loop. */
#pragma once

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

struct keeper_notify {
	int relay;  /* the keeper's socket the loop sends to; -1: no parent to tell */
	int parent; /* a socket to corral's NOTIFY_SOCKET */
	struct sockaddr_un address;
	socklen_t address_length;
};

/* With NOTIFY_SOCKET in the environment: the relay made, and the
 * environment (the loop's, inherited) pointed at it; WATCHDOG_PID, which
 * names the keeper, goes (the loop pings through the keeper). 0, or
 * -errno (then there is no relay and the environment is as it was). */
int keeper_notify_open(struct keeper_notify *notify);
/* Passes on every message waiting from `loop`; others are dropped. */
void keeper_notify_pass(struct keeper_notify *notify, pid_t loop);
void keeper_notify_close(struct keeper_notify *notify);
