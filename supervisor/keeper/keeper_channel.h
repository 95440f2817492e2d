/* The messages between the loop process and its keeper, on a
 * SOCK_SEQPACKET socketpair (one message, one record of it, its fds
 * attached with SCM_RIGHTS):
 *
 *   loop -> keeper  RECORD: the state of `slot` (the bytes after the
 *                   header and the fds' numbers) and the fds it names;
 *                   none of either: the slot is forgotten (kept_records.h)
 *   loop -> keeper  UNSETTLED: the record of `slot` is not what its task
 *                   does now (it is starting, being stopped...): a
 *                   restore takes it back as a crash
 *   keeper -> loop  REAPED: the keeper reaped `pid`, a child of its own
 *                   (a task taken back after a restore), with `status`;
 *                   `slot` numbers it (1, 2, ... in the keeper's life)
 *   loop -> keeper  SEEN: the loop acted on every REAPED up to number
 *                   `slot`, and the records that say so are sent before
 *                   it. Until then the keeper holds a REAPED and sends it
 *                   again to the next loop: a loop killed between reading
 *                   an exit and recording it loses no exit.
 *
 * docs/decisions.md, "corral outlives its own death". */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervisor/keeper/kept_records.h"

enum keeper_message_kind {
	KEEPER_RECORD = 1,
	KEEPER_REAPED = 3,
	KEEPER_UNSETTLED = 4,
	KEEPER_SEEN = 5,
};

struct keeper_message {
	uint32_t kind;     /* enum keeper_message_kind */
	uint32_t slot;     /* RECORD, UNSETTLED: the record's; REAPED, SEEN: a number */
	uint32_t fd_count; /* RECORD: fds attached, their numbers follow the header */
	uint32_t length;   /* RECORD: bytes of state after the numbers */
	int32_t pid;       /* REAPED */
	int32_t status;    /* REAPED: waitpid's status */
};

/* The largest message: header, numbers, state. */
#define KEEPER_MESSAGE_MAX                                                                         \
	(sizeof(struct keeper_message) + KEPT_RECORD_FDS_MAX * sizeof(int) + KEPT_RECORD_BYTES_MAX)

/* Sends `message` without waiting (-EAGAIN: the other end's socket is
 * full); for RECORD, with `numbers` and `fds` (message->fd_count
 * of each) and `bytes` (message->length). 0, or -errno (-EMSGSIZE for a
 * record over the limits). */
int keeper_channel_send(int socket, const struct keeper_message *message, const int *numbers,
			const int *fds, const void *bytes);

/* A message received: the header, and for RECORD its numbers, fds
 * (close-on-exec) and bytes, which point into `buffer`. */
struct keeper_received {
	struct keeper_message message;
	const int *numbers;
	int fds[KEPT_RECORD_FDS_MAX];
	const char *bytes;
};

/* Receives one message into `buffer` (KEEPER_MESSAGE_MAX bytes): 0,
 * -EAGAIN when none waits, -EPIPE when the other end is gone, -EPROTO
 * for a message that is not whole or whose fds do not match it (any fd
 * that came is closed), or -errno. */
int keeper_channel_receive(int socket, void *buffer, struct keeper_received *received);

/* A RECORD received, put into `records` (which owns its fds then); an
 * UNSETTLED marks its record. */
void keeper_channel_apply(struct kept_records *records, const struct keeper_received *received);
