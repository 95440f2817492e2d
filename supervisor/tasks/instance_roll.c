#include "supervisor/tasks/instance_roll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_writer.h"
#include "base/xmalloc.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task.h"
#include "supervisor/tasks/task_dependencies.h"

static struct instance_roll **find_slot(struct group *group, const char *task)
{
	struct instance_roll **slot = &group->rolls;
	while (*slot && strcmp((*slot)->task, task) != 0)
		slot = &(*slot)->next;
	return slot;
}

const struct instance_roll *instance_roll_of(const struct group *group, const char *task)
{
	return *find_slot((struct group *)group, task);
}

bool instance_roll_going(const struct group *group, const char *task)
{
	const struct instance_roll *roll = instance_roll_of(group, task);
	return roll && roll->outcome == ROLL_GOING;
}

bool instance_roll_covers(const struct task *task)
{
	if (!task->config->instance_of || !task->group)
		return false;
	const struct instance_roll *roll = instance_roll_of(task->group, task->config->instance_of);
	if (!roll || roll->outcome != ROLL_GOING)
		return false;
	unsigned ready = 0;
	bool member = false;
	for (size_t i = 0; i < roll->member_count; i++) {
		const struct task *other = roll->members[i].task;
		if (!other || other->removed)
			continue;
		member |= other == task;
		ready += other->runner.state == TASK_RUNNING && runner_shown_ready(&other->runner);
	}
	return member && ready >= roll->min_ready;
}

static void roll_free(struct instance_roll *roll)
{
	for (size_t i = 0; i < roll->member_count; i++) {
		if (roll->members[i].task)
			roll->members[i].task->rolling = false;
		free(roll->members[i].name);
	}
	free(roll->members);
	free(roll->task);
	free(roll->full_name);
	free(roll);
}

void instance_rolls_free(struct group *group)
{
	/* Whoever follows one still going hears how it ended. */
	for (struct instance_roll *roll = group->rolls; roll; roll = roll->next)
		instance_roll_abort(group, roll->task, "its group is gone");
	while (group->rolls) {
		struct instance_roll *next = group->rolls->next;
		roll_free(group->rolls);
		group->rolls = next;
	}
}

static void count_phases(const struct instance_roll *roll, size_t counts[])
{
	for (size_t i = 0; i < roll->member_count; i++)
		counts[roll->members[i].phase]++;
}

/* Said to whoever follows the roll, and nowhere else. */
static void tell(struct group *group, const struct instance_roll *roll, struct json_writer *line,
		 bool last)
{
	size_t length;
	char *text = jw_take_line(line, &length, NULL);
	if (group->services->roll_said)
		group->services->roll_said(group->services, roll, text, length, last);
	free(text);
}

static void note(struct group *group, const struct instance_roll *roll, const char *event,
		 const char *message)
{
	event_log_task(group->services->events, roll->full_name, event, message, 0);
}

/* ", " between the names of the members in `phase`, into `buffer`. */
static void list_members(const struct instance_roll *roll, enum roll_phase phase, char *buffer,
			 size_t size)
{
	size_t used = 0;
	buffer[0] = '\0';
	for (size_t i = 0; i < roll->member_count && used < size; i++)
		if (roll->members[i].phase == phase)
			used += (size_t)snprintf(buffer + used, size - used, "%s%s",
						 used ? ", " : "", roll->members[i].name);
}

/* Over: its members' tasks are its no more, and whoever asked is told. */
static void finish(struct group *group, struct instance_roll *roll, enum roll_outcome outcome)
{
	roll->outcome = outcome;
	for (size_t i = 0; i < roll->member_count; i++) {
		struct task *task = roll->members[i].task;
		if (!task)
			continue;
		task->rolling = false;
		/* Not reached: it keeps its old definition too, across its own
		 * restarts, as the old ReplicaSet's pods do when a rollout
		 * stalls; the next reload replaces it again. */
		if (roll->by_reload && roll->members[i].phase == ROLL_LEFT)
			task->next_config = NULL;
		roll->members[i].task = NULL;
	}
	size_t counts[ROLL_LEFT + 1] = {0};
	count_phases(roll, counts);
	note(group, roll,
	     task_event_type_name(outcome == ROLL_DONE ? TASK_EVENT_ROLLING
						       : TASK_EVENT_ROLL_STOPPED),
	     roll->said);
	struct json_writer line;
	jw_init(&line, 512);
	jw_object_open(&line);
	jw_field_bool(&line, "ok", outcome == ROLL_DONE);
	jw_field_bool(&line, "done", true);
	jw_field_cstring(&line, "task", roll->full_name);
	jw_field_int(&line, "replaced", (int64_t)counts[ROLL_REPLACED]);
	jw_field_int(&line, "total", (int64_t)roll->member_count);
	jw_field_cstring(&line, "message", roll->said);
	if (outcome != ROLL_DONE)
		jw_field_cstring(&line, "error", roll->said);
	jw_object_close(&line);
	tell(group, roll, &line, true);
}

static void finish_done(struct group *group, struct instance_roll *roll)
{
	size_t counts[ROLL_LEFT + 1] = {0};
	count_phases(roll, counts);
	char skipped[256] = "";
	if (counts[ROLL_SKIPPED]) {
		char names[200];
		list_members(roll, ROLL_SKIPPED, names, sizeof(names));
		snprintf(skipped, sizeof(skipped), "; not running, left as they were: %s", names);
	}
	snprintf(roll->said, sizeof(roll->said),
		 "rolling restart done: %zu of %zu instance%s replaced, %u at a time%s",
		 counts[ROLL_REPLACED], roll->member_count, roll->member_count == 1 ? "" : "s",
		 roll->max_unavailable, skipped);
	finish(group, roll, ROLL_DONE);
}

/* The roll stopped at `member`, whose new run failed for `why`. */
static void finish_stopped(struct group *group, struct instance_roll *roll,
			   const struct instance_roll_member *member, const char *why)
{
	char replaced[160], left[160], under_way[160];
	list_members(roll, ROLL_REPLACED, replaced, sizeof(replaced));
	list_members(roll, ROLL_LEFT, left, sizeof(left));
	list_members(roll, ROLL_REPLACING, under_way, sizeof(under_way));
	int used = snprintf(roll->said, sizeof(roll->said), "rolling restart stopped at %s: %s",
			    member->name, why);
	size_t at = used > 0 ? (size_t)used : 0;
	if (at < sizeof(roll->said) && replaced[0])
		at += (size_t)snprintf(roll->said + at, sizeof(roll->said) - at, "; replaced: %s",
				       replaced);
	if (at < sizeof(roll->said) && under_way[0])
		at += (size_t)snprintf(roll->said + at, sizeof(roll->said) - at,
				       "; still being replaced: %s", under_way);
	if (at < sizeof(roll->said) && left[0])
		snprintf(roll->said + at, sizeof(roll->said) - at,
			 "; left on their old process: %s", left);
	finish(group, roll, ROLL_STOPPED);
}

/* Why the new run of `task` failed: "not ready within 2s", "exited with
 * code 3; restarting in 1s (restart 2 of 3)". */
static void describe_failure(const struct task *task, char *buffer, size_t size)
{
	const struct runner *runner = &task->runner;
	const char *failure = runner_failure(runner);
	if (runner->stop_intent == RUNNER_STOP_NOT_READY || failure[0]) {
		snprintf(buffer, size, "%s", failure[0] ? failure : "not ready in time");
		return;
	}
	char exit[64];
	task_exit_describe(&runner->last_exit, exit, sizeof(exit));
	const char *decision = runner_decision(runner);
	snprintf(buffer, size, "%s%s%s", exit, decision ? "; " : "", decision ? decision : "");
}

/* A member's new run became ready: its `restart: true` dependents take
 * this run for the one they started with (a roll keeps the service up,
 * so they are not restarted). */
static void member_replaced(struct group *group, struct instance_roll *roll,
			    struct instance_roll_member *member)
{
	struct task *task = member->task;
	member->phase = ROLL_REPLACED;
	member->new_pid = task_command_pid(task);
	task->rolling = false;
	task_dependencies_keep_dependents(task);
	char message[TASK_EVENT_MESSAGE_MAX + 64];
	snprintf(message, sizeof(message), "%s replaced: pid %d -> %d, ready", member->name,
		 (int)member->old_pid, (int)member->new_pid);
	note(group, roll, task_event_type_name(TASK_EVENT_ROLLING), message);
	struct json_writer line;
	jw_init(&line, 256);
	jw_object_open(&line);
	jw_field_bool(&line, "ok", true);
	jw_field_cstring(&line, "instance", member->name);
	jw_field_cstring(&line, "phase", roll_phase_name(ROLL_REPLACED));
	jw_field_int(&line, "old_pid", member->old_pid);
	jw_field_int(&line, "pid", member->new_pid);
	jw_field_cstring(&line, "message", message);
	jw_object_close(&line);
	tell(group, roll, &line, false);
}

/* Its turn came: restarted, or left as it is when it does not run. */
static void replace_member(struct instance_roll_member *member, uint64_t now_ms)
{
	struct task *task = member->task;
	struct runner *runner = &task->runner;
	bool alive = runner->state == TASK_RUNNING || runner->state == TASK_STARTING;
	member->phase = ROLL_SKIPPED;
	if (task->removed || !alive || runner->stop_intent != RUNNER_STOP_NONE)
		return;
	member->restarts_before = runner->restart_count;
	member->old_pid = task_command_pid(task);
	/* Not the group's restart: that one stops `restart: true` dependents
	 * first, and a roll keeps the service up. */
	if (runner_restart(runner, now_ms) != RUNNER_REQUEST_DONE)
		return;
	member->phase = ROLL_REPLACING;
	task->rolling = true;
}

/* The members' phases, as the rules of rolling_update.h take them. */
static void phases_of(const struct instance_roll *roll, enum roll_phase *phases)
{
	for (size_t i = 0; i < roll->member_count; i++)
		phases[i] = roll->members[i].phase;
}

/* One step; the roll may be over after it. */
static void advance(struct group *group, struct instance_roll *roll, uint64_t now_ms)
{
	enum roll_phase phases[roll->member_count ? roll->member_count : 1];
	for (size_t i = 0; i < roll->member_count; i++) {
		struct instance_roll_member *member = &roll->members[i];
		if (member->phase != ROLL_REPLACING)
			continue;
		struct task *task = member->task;
		enum roll_seen seen = task->removed
					  ? ROLL_SEEN_GONE
					  : roll_observe(&task->runner, member->restarts_before);
		char error[320];
		switch (seen) {
		case ROLL_SEEN_NOTHING:
			continue;
		case ROLL_SEEN_READY:
			member_replaced(group, roll, member);
			continue;
		case ROLL_SEEN_FAILED:
			describe_failure(task, error, sizeof(error));
			break;
		case ROLL_SEEN_GONE:
			snprintf(error, sizeof(error),
				 "it was stopped or restarted by someone else meanwhile (%s)",
				 task->removed ? "removed" : runner_shown_state(&task->runner));
			break;
		}
		task->rolling = false;
		phases_of(roll, phases);
		roll_stop_at(phases, roll->member_count, i);
		for (size_t j = 0; j < roll->member_count; j++)
			roll->members[j].phase = phases[j];
		finish_stopped(group, roll, member, error);
		return;
	}
	for (;;) {
		phases_of(roll, phases);
		size_t next = roll_next(phases, roll->member_count, roll->max_unavailable);
		if (next == SIZE_MAX)
			break;
		replace_member(&roll->members[next], now_ms);
	}
	phases_of(roll, phases);
	if (roll_outcome_of(phases, roll->member_count) == ROLL_DONE)
		finish_done(group, roll);
}

/* A stopped roll whose set is whole again: every instance runs and is
 * ready (the one it stopped at, retried by its restart policy, included),
 * and none was left on an old definition by a reload's roll (those are
 * still to be replaced, as its message says). Its "stopped at" would say
 * something no longer true of the set. */
static bool recovered(const struct group *group, const struct instance_roll *roll)
{
	if (roll->outcome != ROLL_STOPPED)
		return false;
	for (size_t i = 0; i < roll->member_count; i++)
		if (roll->by_reload && roll->members[i].phase == ROLL_LEFT)
			return false;
	size_t instances = 0;
	for (size_t i = 0; i < group->task_count; i++) {
		const struct task *task = group->tasks[i];
		const char *set = task->config->instance_of;
		if (!set || task->removed || strcmp(set, roll->task) != 0)
			continue;
		instances++;
		if (task->runner.state != TASK_RUNNING || !runner_shown_ready(&task->runner))
			return false;
	}
	return instances > 0;
}

void instance_rolls_advance(struct group *group, uint64_t now_ms)
{
	for (struct instance_roll **slot = &group->rolls; *slot;) {
		struct instance_roll *roll = *slot;
		if (roll->outcome == ROLL_GOING)
			advance(group, roll, now_ms);
		if (!recovered(group, roll)) {
			slot = &roll->next;
			continue;
		}
		note(group, roll, task_event_type_name(TASK_EVENT_ROLLING),
		     "every instance runs and is ready again: the stopped rolling restart is "
		     "cleared from status");
		*slot = roll->next;
		roll_free(roll);
	}
}

struct instance_roll *instance_roll_begin(struct group *group, const char *task,
					  struct task **tasks, size_t count,
					  unsigned max_unavailable, bool by_reload, char *error,
					  size_t error_size)
{
	struct instance_roll **slot = find_slot(group, task);
	if (*slot && (*slot)->outcome == ROLL_GOING) {
		size_t counts[ROLL_LEFT + 1] = {0};
		count_phases(*slot, counts);
		snprintf(error, error_size,
			 "%s: a rolling restart goes on (%zu of %zu replaced): wait for it, or see "
			 "corral status %s",
			 (*slot)->full_name, counts[ROLL_REPLACED], (*slot)->member_count,
			 (*slot)->full_name);
		return NULL;
	}
	struct instance_roll *roll = xcalloc(1, sizeof(*roll));
	roll->task = xstrdup(task);
	roll->full_name = xasprintf("%s/%s", group->config->name, task);
	roll->max_unavailable = max_unavailable ? max_unavailable : 1;
	const struct update_config *update = count ? &tasks[0]->config->update : NULL;
	roll->min_ready =
	    roll_min_ready(count, roll->max_unavailable, update && update->min_ready_set,
			   update ? update->min_ready : 0);
	roll->by_reload = by_reload;
	roll->outcome = ROLL_GOING;
	roll->members = xcalloc(count + 1, sizeof(*roll->members));
	roll->member_count = count;
	for (size_t i = 0; i < count; i++)
		roll->members[i] = (struct instance_roll_member){
		    .name = xstrdup(tasks[i]->config->full_name), .task = tasks[i]};
	if (*slot) {
		roll->next = (*slot)->next;
		roll_free(*slot);
	}
	*slot = roll;
	char message[TASK_EVENT_MESSAGE_MAX];
	snprintf(message, sizeof(message), "rolling restart of %zu instance%s, %u at a time (%s)",
		 count, count == 1 ? "" : "s", roll->max_unavailable,
		 by_reload ? "a reload replaced them" : "requested");
	note(group, roll, task_event_type_name(TASK_EVENT_ROLLING), message);
	group_mark_dirty(group);
	return roll;
}

void instance_roll_abort(struct group *group, const char *task, const char *why)
{
	struct instance_roll *roll = *find_slot(group, task);
	if (!roll || roll->outcome != ROLL_GOING)
		return;
	for (size_t i = 0; i < roll->member_count; i++)
		if (roll->members[i].phase == ROLL_WAITING)
			roll->members[i].phase = ROLL_LEFT;
	snprintf(roll->said, sizeof(roll->said), "rolling restart stopped: %s", why);
	finish(group, roll, ROLL_STOPPED);
}

void instance_roll_forget(struct group *group, const char *task)
{
	struct instance_roll **slot = find_slot(group, task);
	struct instance_roll *roll = *slot;
	if (!roll || roll->outcome == ROLL_GOING)
		return;
	*slot = roll->next;
	roll_free(roll);
}

void instance_roll_write(struct json_writer *out, const struct instance_roll *roll)
{
	static const char *const states[] = {
	    [ROLL_GOING] = "rolling", [ROLL_DONE] = "done", [ROLL_STOPPED] = "stopped"};
	size_t counts[ROLL_LEFT + 1] = {0};
	count_phases(roll, counts);
	jw_object_open(out);
	jw_field_cstring(out, "state", states[roll->outcome]);
	jw_field_cstring(out, "by", roll->by_reload ? "reload" : "request");
	jw_field_int(out, "max_unavailable", roll->max_unavailable);
	jw_field_int(out, "min_ready", roll->min_ready);
	jw_field_int(out, "replaced", (int64_t)counts[ROLL_REPLACED]);
	jw_field_int(out, "total", (int64_t)roll->member_count);
	jw_key(out, "instances");
	jw_array_open(out);
	for (size_t i = 0; i < roll->member_count; i++) {
		jw_object_open(out);
		jw_field_cstring(out, "task", roll->members[i].name);
		jw_field_cstring(out, "phase", roll_phase_name(roll->members[i].phase));
		jw_object_close(out);
	}
	jw_array_close(out);
	jw_field_cstring(out, "message", roll->said[0] ? roll->said : NULL);
	jw_object_close(out);
}
