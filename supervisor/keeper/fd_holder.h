/* The fds the keeper holds for the loop process, so that its death drops
 * none of them (docs/architecture.md, "corral outlives its own death"):
 * each under a key, (slot, role). A slot is a task's record (its pidfd,
 * its output pipes' read ends, its notify socket) or corral's own slot 0
 * (the listening sockets, the state memfds, the binary). A new fd under a
 * key replaces the one held there, which is closed: a task's restart
 * sends its new pidfd and nothing else.
 *
 * The keeper only holds them: it never reads, writes or polls one. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The roles of a task slot's fds: at most FD_HOLDER_ROLES, each a bit of
 * a mask in the keeper's messages (keeper_channel.h). */
enum held_task_role {
	HELD_PIDFD = 0,
	HELD_OUTPUT = 1,       /* the output pipe's read end (both streams, or stdout) */
	HELD_ERROR_OUTPUT = 2, /* stderr's, with log.streams: separate */
	HELD_NOTIFY = 3,       /* its NOTIFY_SOCKET */
	HELD_REAPER_STATUS = 4,
};

/* The roles of slot 0, corral's own. */
#define FD_HOLDER_CORRAL_SLOT 0
enum held_corral_role {
	HELD_CONTROL_LISTENER = 0,
	HELD_HTTP_LISTENER = 1,
	HELD_STATE = 2, /* the state's memfds begin here, one role each */
};
#define FD_HOLDER_ROLES 8

struct fd_holder_slot {
	int fds[FD_HOLDER_ROLES]; /* -1: none */
};

struct fd_holder {
	struct fd_holder_slot *slots;
	size_t slot_count;
	size_t held; /* fds held, all slots together */
};

void fd_holder_init(struct fd_holder *holder);
/* Closes every fd held. */
void fd_holder_free(struct fd_holder *holder);

/* Holds `fd` (the holder owns it now) under (slot, role); the fd held
 * there before is closed. 0, or -EINVAL for a role out of range (`fd` is
 * closed). */
int fd_holder_hold(struct fd_holder *holder, uint32_t slot, unsigned role, int fd);
/* Closes the fd under (slot, role), if any. */
void fd_holder_drop(struct fd_holder *holder, uint32_t slot, unsigned role);
/* The fd under (slot, role), -1 when none. */
int fd_holder_get(const struct fd_holder *holder, uint32_t slot, unsigned role);

/* Calls `visit` with every fd held and its key, by slot, then role: what
 * the keeper hands a new loop process. */
void fd_holder_visit(const struct fd_holder *holder,
		     void (*visit)(void *context, uint32_t slot, unsigned role, int fd),
		     void *context);
