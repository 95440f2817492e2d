/* What every task and group of a running corral shares: passed down
 * explicitly rather than kept in globals. */
#pragma once

#include "isolation/spawn.h"
#include "supervisor/event_log.h"
#include "supervisor/loop.h"
#include "supervisor/output_sink.h"

struct task;

struct services {
	struct loop *loop;
	struct output_sink *sink;
	struct event_log *events;
	struct spawn_slots *spawn_slots; /* the low fds every spawn goes through */
	/* Called once for each task that fails for good. */
	void (*task_failed_for_good)(struct services *services, struct task *task);
};
