/* The lifecycle coordinator of one group: Nomad's state machine
 * (client/allocrunner/tasklifecycle/coordinator.go), without channels.
 *
 * Every decision is made from a census of the tasks by stage, taken afresh
 * on each update, so the coordinator keeps no memory of the tasks: the
 * caller may feed them in any order and a group restart needs no cleanup. */
#include "supervisor/lifecycle/coordinator.h"

#include <assert.h>

/* How many tasks of one stage are in each state. */
struct stage_census {
	size_t total;
	size_t pending;
	size_t running;
	size_t dead;
	size_t dead_failed;
};

struct group_census {
	struct stage_census stage[STAGE_COUNT];
};

/* The gates each state leaves open when it is entered; every other gate is
 * closed. Exactly Nomad's enterStateLocked(). */
static const bool gates_of_state[][STAGE_COUNT] = {
    [COORDINATOR_INIT] = {false},
    [COORDINATOR_PRESTART] =
	{
	    [STAGE_PRESTART_EPHEMERAL] = true,
	    [STAGE_PRESTART_SIDECAR] = true,
	},
    [COORDINATOR_MAIN] =
	{
	    [STAGE_PRESTART_SIDECAR] = true,
	    [STAGE_MAIN] = true,
	},
    [COORDINATOR_POSTSTART] =
	{
	    [STAGE_PRESTART_SIDECAR] = true,
	    [STAGE_MAIN] = true,
	    [STAGE_POSTSTART_EPHEMERAL] = true,
	    [STAGE_POSTSTART_SIDECAR] = true,
	},
    /* Poststart ephemeral tasks are done by now: a dead one stays dead. */
    [COORDINATOR_WAIT_ALLOC] =
	{
	    [STAGE_PRESTART_SIDECAR] = true,
	    [STAGE_MAIN] = true,
	    [STAGE_POSTSTART_SIDECAR] = true,
	},
    [COORDINATOR_POSTSTOP] = {[STAGE_POSTSTOP] = true},
};

#define COORDINATOR_STATE_COUNT (sizeof(gates_of_state) / sizeof(gates_of_state[0]))

static bool state_is_valid(enum coordinator_state state)
{
	return (unsigned)state < COORDINATOR_STATE_COUNT;
}

static bool stage_is_valid(enum lifecycle_stage stage)
{
	return (unsigned)stage < STAGE_COUNT;
}

static void take_census(struct group_census *census, const struct coordinator_task *tasks,
			size_t task_count)
{
	*census = (struct group_census){0};
	for (size_t i = 0; i < task_count; i++) {
		const struct coordinator_task *task = &tasks[i];

		assert(stage_is_valid(task->stage));
		if (!stage_is_valid(task->stage))
			continue; /* a caller bug; never index out of bounds for it */

		struct stage_census *stage = &census->stage[task->stage];

		stage->total++;
		switch (task->state) {
		case COORD_TASK_PENDING:
			stage->pending++;
			break;
		case COORD_TASK_RUNNING:
			stage->running++;
			break;
		case COORD_TASK_DEAD:
			stage->dead++;
			if (task->failed)
				stage->dead_failed++;
			break;
		}
	}
}

static bool stage_all_dead(const struct stage_census *stage)
{
	return stage->dead == stage->total;
}

/* Nomad's isAllocDone: every task but the poststop ones is dead. True for a
 * group of poststop tasks only, which therefore goes straight to poststop. */
static bool group_is_done(const struct group_census *census)
{
	for (int stage = 0; stage < STAGE_COUNT; stage++) {
		if (stage != STAGE_POSTSTOP && !stage_all_dead(&census->stage[stage]))
			return false;
	}
	return true;
}

/* Every task, poststop included, is pending: after a group restart, nothing
 * of the previous run is still alive to race with the new one. */
static bool init_is_done(const struct group_census *census)
{
	for (int stage = 0; stage < STAGE_COUNT; stage++) {
		if (census->stage[stage].pending != census->stage[stage].total)
			return false;
	}
	return true;
}

/* Ephemeral prestart tasks have all succeeded and sidecars all run; true
 * without prestart tasks. A failed ephemeral task keeps the group here until
 * it is restarted or the group is done. */
static bool prestart_is_done(const struct group_census *census)
{
	const struct stage_census *ephemeral = &census->stage[STAGE_PRESTART_EPHEMERAL];
	const struct stage_census *sidecar = &census->stage[STAGE_PRESTART_SIDECAR];

	return stage_all_dead(ephemeral) && ephemeral->dead_failed == 0 &&
	       sidecar->running == sidecar->total;
}

/* Every main task has at least been started (none is pending); true without
 * main tasks. */
static bool main_is_done(const struct group_census *census)
{
	return census->stage[STAGE_MAIN].pending == 0;
}

/* Every ephemeral poststart task has exited, however it went; true without
 * any. Poststart sidecars are not waited for. */
static bool poststart_is_done(const struct group_census *census)
{
	return stage_all_dead(&census->stage[STAGE_POSTSTART_EPHEMERAL]);
}

/* Nomad's nextStateLocked(): one step, which the caller repeats until the
 * state is stable. */
static enum coordinator_state next_state(enum coordinator_state current,
					 const struct group_census *census)
{
	if (group_is_done(census))
		return COORDINATOR_POSTSTOP;

	switch (current) {
	case COORDINATOR_INIT:
		return init_is_done(census) ? COORDINATOR_PRESTART : current;
	case COORDINATOR_PRESTART:
		return prestart_is_done(census) ? COORDINATOR_MAIN : current;
	case COORDINATOR_MAIN:
		return main_is_done(census) ? COORDINATOR_POSTSTART : current;
	case COORDINATOR_POSTSTART:
		return poststart_is_done(census) ? COORDINATOR_WAIT_ALLOC : current;
	case COORDINATOR_WAIT_ALLOC:
		/* Left only through group_is_done() above. */
		return current;
	case COORDINATOR_POSTSTOP:
		return current;
	}
	return current;
}

static void enter_state(struct coordinator *coordinator, enum coordinator_state state)
{
	coordinator->state = state;
	for (int stage = 0; stage < STAGE_COUNT; stage++)
		coordinator->gate_open[stage] = gates_of_state[state][stage];
}

void coordinator_init(struct coordinator *coordinator)
{
	enter_state(coordinator, COORDINATOR_INIT);
}

bool coordinator_step(struct coordinator *coordinator, const struct coordinator_task *tasks,
		      size_t task_count)
{
	struct group_census census;
	take_census(&census, tasks, task_count);
	enum coordinator_state next = next_state(coordinator->state, &census);
	if (next == coordinator->state)
		return false;
	enter_state(coordinator, next);
	return true;
}

bool coordinator_update(struct coordinator *coordinator, const struct coordinator_task *tasks,
			size_t task_count)
{
	enum coordinator_state initial = coordinator->state;

	/* Several states may pass at once, e.g. init -> prestart -> main for a
	 * group without prestart tasks. States only move forward, so this ends
	 * within COORDINATOR_STATE_COUNT steps. */
	while (coordinator_step(coordinator, tasks, task_count))
		;
	return coordinator->state != initial;
}

void coordinator_resume(struct coordinator *coordinator, const struct coordinator_task *tasks,
			size_t task_count)
{
	struct group_census census;
	take_census(&census, tasks, task_count);
	/* A task that has started says its gate was open: the group got at
	 * least to the first state (in the order states come) that opens
	 * it. The furthest of those. */
	static const enum coordinator_state order[] = {COORDINATOR_PRESTART, COORDINATOR_MAIN,
						       COORDINATOR_POSTSTART, COORDINATOR_POSTSTOP};
	size_t furthest = 0; /* 0: init; else order[furthest - 1] */
	for (int stage = 0; stage < STAGE_COUNT; stage++) {
		const struct stage_census *counted = &census.stage[stage];
		if (counted->total == counted->pending)
			continue;
		size_t first = 0;
		while (first < sizeof(order) / sizeof(order[0]) &&
		       !gates_of_state[order[first]][stage])
			first++;
		if (first + 1 > furthest)
			furthest = first + 1;
	}
	enter_state(coordinator, furthest ? order[furthest - 1] : COORDINATOR_INIT);
}

void coordinator_restart(struct coordinator *coordinator)
{
	enter_state(coordinator, COORDINATOR_INIT);
}

bool coordinator_gate_open(const struct coordinator *coordinator, enum lifecycle_stage stage)
{
	return stage_is_valid(stage) && coordinator->gate_open[stage];
}

bool coordinator_gate_reachable(const struct coordinator *coordinator, enum lifecycle_stage stage)
{
	if (!stage_is_valid(stage))
		return false;
	if (coordinator->gate_open[stage])
		return true;
	if (!state_is_valid(coordinator->state))
		return false;
	/* States only move forward (until a group restart), so only the ones
	 * after the current state can still open the gate. Poststop is after
	 * every other state, so its gate is always reachable. */
	for (unsigned later = coordinator->state + 1; later < COORDINATOR_STATE_COUNT; later++) {
		if (gates_of_state[later][stage])
			return true;
	}
	return false;
}

const char *coordinator_state_name(enum coordinator_state state)
{
	switch (state) {
	case COORDINATOR_INIT:
		return "init";
	case COORDINATOR_PRESTART:
		return "prestart";
	case COORDINATOR_MAIN:
		return "main";
	case COORDINATOR_POSTSTART:
		return "poststart";
	case COORDINATOR_WAIT_ALLOC:
		/* Nomad's wait_alloc is its allocation runner's word; a user
		 * knows a group whose every stage started as running. */
		return "running";
	case COORDINATOR_POSTSTOP:
		return "poststop";
	}
	return "unknown";
}
