/* Whether a new control connection is let in: a cap on connections in
 * all, a cap per user, and room kept for root and corral's own user, so
 * that idle or hoarded connections never lock the operator out (issue 27,
 * item 10). Pure: counts in, a verdict out. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Connections in all: what corral's fd budget counts on. */
#define CONTROL_CONNECTIONS_MAX 1024
/* Of those, kept for root and corral's own user: other users (members of
 * the control group, tasks with control rights) share the rest. */
#define CONTROL_CONNECTIONS_RESERVED 64

struct control_admission_limits {
	size_t total;
	size_t reserved_for_owners;
	size_t per_user; /* for users other than the owners */
};

struct control_admission_counts {
	size_t total;
	/* Connections of the same uid that are not the owners' (a root task
	 * with control rights is not an owner, and does not count as one). */
	size_t of_this_user;
	/* One connection at least is idle: no request being answered, no
	 * stream followed. */
	bool any_idle;
};

enum control_admission {
	CONTROL_ADMIT,
	/* An owner, and every connection taken: the connection idle the
	 * longest is closed to make room. */
	CONTROL_ADMIT_AFTER_CLOSING_IDLE,
	CONTROL_REFUSE_FULL,
	CONTROL_REFUSE_USER_LIMIT,
};

enum control_admission control_admission_decide(const struct control_admission_limits *limits,
						const struct control_admission_counts *counts,
						bool owner);
