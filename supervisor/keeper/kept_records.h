/* What the keeper holds for the loop process (docs/decisions.md,
 * "corral outlives its own death"): records, each under a slot (corral's
 * own parts, a group, a task). A record is the bytes of its state (a
 * small hand-over document, upgrade/handover.h) and the fds that state
 * names, each with the number it has in the loop. The loop sends a whole
 * record, bytes and fds in one message, each time its state changes; the
 * new record replaces the old one, whose fds are closed. So the keeper
 * always holds a state and the very fds it names, as of one moment.
 *
 * When a loop dies, the next one is given every held fd at the number
 * the dead loop had (so the states' fd numbers are right as they are)
 * and the records in a memfd. Two records naming one number: the older
 * one's fd was closed by the loop and its number given to the newer;
 * the older record loses that fd and is marked stale (its state is not
 * taken back as it is: the restore handles it as a crash).
 *
 * The keeper never reads, writes or polls a held fd. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many fds in one record, and bytes in its state. */
#define KEPT_RECORD_FDS_MAX 16
/* A task's state with what its reader keeps in memory at the most (two
 * 64 KiB batches held for a full stdout, two cut lines) fits; the
 * message stays under the socket's default send buffer (net.core.wmem_max,
 * 208 KiB), which the loop cannot raise without CAP_NET_ADMIN. */
#define KEPT_RECORD_BYTES_MAX (160 * 1024)

struct kept_record {
	uint32_t slot;
	bool stale;     /* a newer record took one of its fd numbers */
	bool unsettled; /* its task is no longer in the state it says */
	char *bytes;    /* the state */
	size_t length;
	size_t fd_count;
	int numbers[KEPT_RECORD_FDS_MAX]; /* each fd's number in the loop */
	int fds[KEPT_RECORD_FDS_MAX];     /* the keeper's own; -1 once lost */
};

struct kept_records {
	struct kept_record *items;
	size_t count, capacity;
};

void kept_records_init(struct kept_records *records);
/* Closes every fd held. */
void kept_records_free(struct kept_records *records);

/* The record under `slot` replaced by `bytes` and `fds` (the holder owns
 * the fds now; `numbers` are theirs in the loop). No bytes and no fds:
 * the slot is forgotten. */
void kept_records_put(struct kept_records *records, uint32_t slot, const void *bytes, size_t length,
		      const int *numbers, const int *fds, size_t fd_count);
void kept_records_mark_unsettled(struct kept_records *records, uint32_t slot);
const struct kept_record *kept_records_find(const struct kept_records *records, uint32_t slot);
size_t kept_records_fd_count(const struct kept_records *records);

/* ---- what a new loop is given (keeper_handoff.c) ---- */

/* The records as a memfd (not close-on-exec), read by
 * kept_records_read: its fd, or -errno.
 *
 *     "CRREC1\0\0", count (u32), then per record: slot (u32), flags
 *     (u32: 1 stale, 2 unsettled), fd count (u32), length (u32), the numbers (i32 each), the
 *     bytes */
int kept_records_to_memfd(const struct kept_records *records);
/* `fd` read back into `records` (its fds are the numbers; nothing is
 * closed or opened, not even when it is refused). 0, or -EINVAL with
 * `error`: not whole, or a slot or a number named twice. */
int kept_records_read(int fd, struct kept_records *records, char *error, size_t error_size);
/* In the new loop's child before the exec: every held fd moved to its
 * number (whatever is at a number is replaced), none close-on-exec;
 * every other fd of the process is kept clear of those numbers by
 * moving `*others` (count `other_count`) above them first. 0, or -errno. */
int kept_records_place(struct kept_records *records, int **others, size_t other_count);
