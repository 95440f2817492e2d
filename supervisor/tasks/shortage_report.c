#include "supervisor/tasks/shortage_report.h"

#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/units.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/services.h"
#include "supervisor/tasks/task.h"

/* Between two tries, or due for the next: tasks put off together retry
 * together, one after the other in the same turn of the loop, so while
 * the first of them is put off again the others are due, not delayed. */
static bool waits_for_a_resource(const struct runner *runner)
{
	return runner->resource_retry_ms && runner->state == TASK_PENDING;
}

/* The tasks that wait, and when the first of them tries again. A walk over
 * every task, made at most once a summary and once an idle turn after a
 * wait ended: cheaper than keeping a count right through stops, reloads
 * and restarts. */
static size_t count_waiting(const struct services *services, uint64_t now_ms, uint64_t *next_ms)
{
	size_t waiting = 0;
	*next_ms = UINT64_MAX;
	for (size_t g = 0; g < services->group_count; g++) {
		const struct group *group = services->groups[g];
		for (size_t t = 0; t < group->task_count; t++) {
			const struct runner *runner = &group->tasks[t]->runner;
			if (!waits_for_a_resource(runner))
				continue;
			waiting++;
			if (runner_waiting_out_delay(runner) && runner->next_start_ms > now_ms &&
			    runner->next_start_ms < *next_ms)
				*next_ms = runner->next_start_ms;
		}
	}
	return waiting;
}

/* "6s", not "6s300ms": these lines are read by people. */
static void format_seconds(uint64_t ms, char *buffer, size_t size)
{
	format_duration_ms((ms + 500) / 1000 * 1000, buffer, size);
}

static void say_summary(struct shortage_report *report, uint64_t now_ms)
{
	uint64_t next_ms;
	size_t waiting = count_waiting(report->services, now_ms, &next_ms);
	char since[32], next[32] = "";
	format_seconds(now_ms - report->summary_at_ms, since, sizeof(since));
	if (next_ms != UINT64_MAX)
		format_duration_ms(next_ms - now_ms, next, sizeof(next));
	log_message("%zu task%s wait%s for a resource (last: %s); %lu retr%s failed in the last "
		    "%s%s%s",
		    waiting, waiting == 1 ? "" : "s", waiting == 1 ? "s" : "", report->reason,
		    report->failed_since_summary, report->failed_since_summary == 1 ? "y" : "ies",
		    since, next[0] ? "; the next in " : "", next);
	report->summary_at_ms = now_ms;
	report->failed_since_summary = 0;
}

/* From the loop's idle turn after a wait ended: once a whole burst of
 * them has ended, the walk is made once. */
static void check_end(struct loop_idle *idle)
{
	struct shortage_report *report = idle->data;
	uint64_t next_ms;
	if (!report->in_burst || count_waiting(report->services, loop_now_ms(), &next_ms))
		return;
	char over[32];
	format_seconds(loop_now_ms() - report->burst_began_ms, over, sizeof(over));
	log_message("no task waits for a resource any more: %lu started after waiting, over %s "
		    "(%lu tr%s failed)",
		    report->started_in_burst, over, report->failed_in_burst,
		    report->failed_in_burst == 1 ? "y" : "ies");
	report->in_burst = false;
}

void shortage_report_init(struct shortage_report *report, struct services *services)
{
	*report = (struct shortage_report){.services = services};
	loop_idle_init(&report->end_check, check_end, report);
}

void shortage_report_free(struct shortage_report *report)
{
	if (report->services && report->services->loop)
		loop_idle_cancel(report->services->loop, &report->end_check);
}

void shortage_report_put_off(struct shortage_report *report, const char *reason, bool first,
			     uint64_t now_ms)
{
	snprintf(report->reason, sizeof(report->reason), "%s", reason);
	if (!report->in_burst) {
		report->in_burst = true;
		report->burst_began_ms = report->summary_at_ms = now_ms;
		report->failed_since_summary = report->failed_in_burst = 0;
		report->started_in_burst = 0;
	}
	report->failed_in_burst++;
	report->put_off_total++;
	/* A task's first put-off is said as its own event already. */
	if (first)
		return;
	report->failed_since_summary++;
	if (now_ms - report->summary_at_ms >= SHORTAGE_SUMMARY_MS)
		say_summary(report, now_ms);
}

void shortage_report_wait_over(struct shortage_report *report, bool started)
{
	report->started_in_burst += started;
	if (report->in_burst && report->services->loop)
		loop_idle_request(report->services->loop, &report->end_check);
}
