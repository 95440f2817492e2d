/* The lifecycle coordinator of one group, with Nomad's semantics.
 *
 * Pure logic: task states in, stage gates out. No fds, no clock, no
 * allocation. The group feeds it the states of all its tasks after every
 * change; the runners of a stage may start only while its gate is open. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/model/config.h"

enum coordinator_state {
	COORDINATOR_INIT,
	COORDINATOR_PRESTART,
	COORDINATOR_MAIN,
	COORDINATOR_POSTSTART,
	COORDINATOR_WAIT_ALLOC, /* Nomad's name; shown as "running" */
	COORDINATOR_POSTSTOP,
};

/* What the coordinator needs to know of a task. A task that is starting (or
 * waiting to be restarted) is pending here, as in Nomad. */
enum coordinator_task_state {
	COORD_TASK_PENDING,
	COORD_TASK_RUNNING,
	COORD_TASK_DEAD,
};

struct coordinator_task {
	enum lifecycle_stage stage;
	enum coordinator_task_state state;
	bool failed; /* meaningful when dead: failed for good */
};

struct coordinator {
	enum coordinator_state state;
	bool gate_open[STAGE_COUNT];
};

/* State init, every gate closed. */
void coordinator_init(struct coordinator *coordinator);

/* Feeds the current state of every task of the group (all of them, in any
 * order) and moves through as many states as they allow. Returns true when
 * the coordinator state changed. */
bool coordinator_update(struct coordinator *coordinator, const struct coordinator_task *tasks,
			size_t task_count);

/* One transition at most: returns true when the state changed. Callers that
 * report every state passed through (the event log) loop over it. */
bool coordinator_step(struct coordinator *coordinator, const struct coordinator_task *tasks,
		      size_t task_count);

/* Back to init with every gate closed, for a restart of the whole group.
 * The next update leaves init once every task is pending again. */
void coordinator_restart(struct coordinator *coordinator);

/* A group whose state was not kept (a restore that found its tasks'
 * records but not the group's): the furthest state whose gates let one
 * of its tasks start, never back to init once one has (as Nomad's
 * Restore). Init when every task is pending. The next update moves on. */
void coordinator_resume(struct coordinator *coordinator, const struct coordinator_task *tasks,
			size_t task_count);

bool coordinator_gate_open(const struct coordinator *coordinator, enum lifecycle_stage stage);

/* True when the gate of `stage` is open now or opens in a later state of the
 * current run, so a task of that stage that starts now will not wait
 * forever. Used to refuse a ForceRestart that only a group restart allows. */
bool coordinator_gate_reachable(const struct coordinator *coordinator, enum lifecycle_stage stage);

/* "init", "prestart", "main", "poststart", "running", "poststop": the
 * names users see (status, events, /metrics); Nomad's wait_alloc is
 * "running". */
const char *coordinator_state_name(enum coordinator_state state);
