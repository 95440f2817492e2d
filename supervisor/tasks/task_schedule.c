/* A scheduled task (config `schedule:`): one loop timer, armed for its next
 * time, so nothing wakes corral between runs. Times are wall-clock (a cron
 * expression in a time zone, or every interval); the timer itself is the
 * loop's monotonic one, armed for the distance to that time. A timer that
 * fires late (the machine slept, corral was stopped) finds the time
 * missed, and `missed:` says whether one run makes up for it. */
#include "supervisor/tasks/task_schedule.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/units.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task.h"

/* A run this late is a missed one (a timer is never this late otherwise). */
#define MISSED_AFTER_MS 60000

/* The cron expression's first time after `after`, in the schedule's time
 * zone: TZ is set for localtime_r and mktime, which read it, then put back
 * (corral has one thread). -1: none. */
static time_t cron_time_after(const struct schedule_config *schedule, time_t after)
{
	const char *saved = getenv("TZ");
	char *kept = saved ? strdup(saved) : NULL;
	if (schedule->time_zone) {
		setenv("TZ", schedule->time_zone, 1);
		tzset();
	}
	struct tm local, next;
	time_t result = (time_t)-1;
	if (localtime_r(&after, &local) && cron_next(&schedule->cron, &local, &next))
		result = mktime(&next);
	if (schedule->time_zone) {
		if (kept)
			setenv("TZ", kept, 1);
		else
			unsetenv("TZ");
		tzset();
	}
	free(kept);
	return result;
}

/* The first time after `after_ms` (wall clock): the earlier of the cron
 * expression's and the interval's (counted from `from_ms`); 0: none. */
static uint64_t next_time_ms(const struct schedule_config *schedule, uint64_t after_ms,
			     uint64_t from_ms)
{
	uint64_t next = 0;
	if (schedule->every_ms) {
		next = from_ms + schedule->every_ms;
		while (next <= after_ms)
			next += schedule->every_ms;
	}
	if (schedule->has_cron) {
		time_t at = cron_time_after(schedule, (time_t)(after_ms / 1000));
		if (at != (time_t)-1 && (!next || (uint64_t)at * 1000 < next))
			next = (uint64_t)at * 1000;
	}
	return next;
}

static void arm(struct task *task, uint64_t now_ms)
{
	const struct schedule_config *schedule = &task->config->schedule;
	uint64_t from = task->schedule_due_ms ? task->schedule_due_ms : now_ms;
	task->schedule_due_ms = next_time_ms(schedule, now_ms, from);
	if (!task->schedule_due_ms)
		return; /* a cron expression that never matches (30 February) */
	loop_timer_arm(task->services->loop, &task->schedule_timer,
		       loop_now_ms() + (task->schedule_due_ms - now_ms));
}

static void say(struct task *task, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void say(struct task *task, const char *format, ...)
{
	char message[TASK_EVENT_MESSAGE_MAX];
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(message, sizeof(message), format, arguments);
	va_end(arguments);
	task_note_event(task, TASK_EVENT_SCHEDULED, message);
}

static void run_now(struct task *task, uint64_t now_ms, bool late)
{
	const char *why = late ? "a missed time, made up for" : "its time came";
	struct runner *runner = &task->runner;
	bool going = runner->state == TASK_STARTING || runner->state == TASK_RUNNING;
	if (going && task->config->schedule.concurrency == SCHEDULE_SKIP) {
		say(task, "run skipped: the previous one is still running (concurrency: %s)",
		    "skip");
		return;
	}
	/* A run, not a restart: the runner counts it apart and says it as
	 * "run N of its schedule". */
	group_run_scheduled_task(task->group, task, why, now_ms);
}

static void on_schedule(struct loop_timer *timer)
{
	struct task *task = timer->data;
	if (task->group->stop_mode == GROUP_STOPPING || task->removed)
		return; /* no more runs, nor times */
	uint64_t now = wall_clock_ms();
	bool late = now > task->schedule_due_ms + MISSED_AFTER_MS;
	if (late && task->config->schedule.missed == SCHEDULE_MISSED_SKIP) {
		char due[32];
		format_duration_ms(now - task->schedule_due_ms, due, sizeof(due));
		say(task, "run skipped: its time passed %s ago (missed: skip)", due);
	} else {
		run_now(task, loop_now_ms(), late);
	}
	arm(task, now);
}

void task_schedule_open(struct task *task)
{
	loop_timer_init(&task->schedule_timer, on_schedule, task);
	task->schedule_due_ms = 0;
	if (task->config->schedule.set)
		arm(task, wall_clock_ms());
}

void task_schedule_close(struct task *task)
{
	loop_timer_cancel(task->services->loop, &task->schedule_timer);
}

bool task_schedule_next(const struct task *task, uint64_t *due_ms, uint64_t *in_ms)
{
	if (!task->config->schedule.set || !task->schedule_due_ms ||
	    task->group->stop_mode == GROUP_STOPPING)
		return false;
	uint64_t now = wall_clock_ms();
	*due_ms = task->schedule_due_ms;
	*in_ms = task->schedule_due_ms > now ? task->schedule_due_ms - now : 0;
	return true;
}

const char *task_schedule_shown_state(const struct task *task)
{
	uint64_t due_ms, in_ms;
	if (task->runner.state == TASK_DEAD && task_schedule_next(task, &due_ms, &in_ms))
		return "waiting";
	return runner_shown_state(&task->runner);
}
