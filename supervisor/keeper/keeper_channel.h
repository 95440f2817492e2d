/* The messages between the loop process and its keeper, on a
 * SOCK_SEQPACKET socketpair (one message, one record of it, its fds
 * attached with SCM_RIGHTS):
 *
 *   loop -> keeper  HOLD: hold these fds under (slot, role) for the roles
 *                   in `roles` (in role order), drop those in `drop`
 *                   (one sendmsg per change: a task's start, its end)
 *   loop -> keeper  PING: the loop turns (the keeper's watchdog)
 *   keeper -> loop  REAPED: the keeper reaped `pid`, a child of its own
 *                   (a task taken back after a restore), with `status`
 *
 * docs/architecture.md, "corral outlives its own death". */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervisor/keeper/fd_holder.h"

enum keeper_message_kind {
	KEEPER_HOLD = 1,
	KEEPER_PING = 2,
	KEEPER_REAPED = 3,
};

struct keeper_message {
	uint32_t kind; /* enum keeper_message_kind */
	uint32_t slot;
	uint32_t roles; /* HOLD: a bit per role whose fd is attached */
	uint32_t drop;  /* HOLD: a bit per role whose fd is closed */
	int32_t pid;    /* REAPED */
	int32_t status; /* REAPED: waitpid's status */
};

/* Sends `message` with `fds` (one per bit of message->roles, in role
 * order; none for other kinds). 0, or -errno. */
int keeper_channel_send(int socket, const struct keeper_message *message, const int *fds);

/* Receives one message and its fds (close-on-exec) into `fds`, at most
 * FD_HOLDER_ROLES: 0, -EAGAIN when none waits, -EPIPE when the other end
 * is gone, -EPROTO for a message of another size or fds that do not
 * match its roles (any fd that came is closed), or -errno. */
int keeper_channel_receive(int socket, struct keeper_message *message, int *fds, size_t *fd_count);

/* A HOLD message and its fds applied to `holder` (which owns the fds
 * now). */
void keeper_channel_apply(struct fd_holder *holder, const struct keeper_message *message,
			  const int *fds);
