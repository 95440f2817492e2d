/* Rolling restarts at run time: the rules of rolling_update.h applied to a
 * group's tasks. A roll is begun by `corral restart --rolling` or by a
 * reload that replaces the instances of a task with `update: {strategy:
 * rolling}`, takes a step each time its group settles, and says what it
 * does in events ("rolling", "roll_stopped"), in status, and to whoever
 * asked (services->roll_said). The last roll of each task is kept for
 * status. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervisor/lifecycle/rolling_update.h"

struct group;
struct task;
struct json_writer;

struct instance_roll_member {
	char *name;        /* "g/web@2" */
	struct task *task; /* NULL once the roll is over */
	enum roll_phase phase;
	unsigned restarts_before; /* its restart_count when it was restarted */
	pid_t old_pid, new_pid;
};

struct instance_roll {
	struct instance_roll *next; /* the group's rolls, one a task */
	char *task;                 /* the name written with `instances:`: "web" */
	char *full_name;            /* "g/web" */
	unsigned max_unavailable;
	/* Ready instances the set keeps to count as ready meanwhile
	 * (roll_min_ready). */
	unsigned min_ready;
	bool by_reload; /* else requested (corral restart --rolling) */
	enum roll_outcome outcome;
	struct instance_roll_member *members; /* in instance order */
	size_t member_count;
	char said[480]; /* how it ended; "" while it goes on */
};

/* A roll of `tasks` (the instances of `task`, in order) begins: it takes
 * its first step when the group settles next, never within this call,
 * so that whoever asked can follow it first. Refused (NULL, `error`)
 * while another roll of the task goes on. */
struct instance_roll *instance_roll_begin(struct group *group, const char *task,
					  struct task **tasks, size_t count,
					  unsigned max_unavailable, bool by_reload, char *error,
					  size_t error_size);

/* Every roll of the group under way takes a step (group_settle), and a
 * stopped one is forgotten once its set recovered: every instance running
 * and ready, none left on an old definition. */
void instance_rolls_advance(struct group *group, uint64_t now_ms);

/* The task's roll under way, or its last one; NULL for none. */
const struct instance_roll *instance_roll_of(const struct group *group, const char *task);

/* Whether `task`, an instance, is one of a roll under way whose set has
 * at least its min_ready instances ready now: its own readiness is then
 * excused (ready_rule.h's roll_covered), since the set serves. */
bool instance_roll_covers(const struct task *task);

/* Whether a roll of the task goes on. */
bool instance_roll_going(const struct group *group, const char *task);

/* A reload changed the task's instances (`why`): a roll under way stops
 * there, said as any stop is. */
void instance_roll_abort(struct group *group, const char *task, const char *why);

/* A reload or corral scale added, removed or replaced the task's
 * instances: its last roll, over already, says nothing true of them any
 * more and is forgotten. */
void instance_roll_forget(struct group *group, const char *task);

/* The roll as status shows it: {"state", "by", "max_unavailable",
 * "replaced", "total", "instances": [{"task", "phase"}], "message"}. */
void instance_roll_write(struct json_writer *out, const struct instance_roll *roll);

/* The group is freed. */
void instance_rolls_free(struct group *group);
