#include "supervisor/tasks/task_outside_wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "supervisor/probes/probe.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task.h"

#define LAST_FAILURE_MAX 160

struct outside_target {
	struct task *task;
	const struct wait_target *config;
	struct probe probe;
	bool passed;
	char last_failure[LAST_FAILURE_MAX];
};

struct outside_wait {
	size_t count;
	struct outside_target targets[];
};

static void on_result(void *context, bool passed, const char *why)
{
	struct outside_target *target = context;
	struct task *task = target->task;
	if (!passed) {
		snprintf(target->last_failure, sizeof(target->last_failure), "%s", why);
		return;
	}
	target->passed = true;
	probe_stop(&target->probe);
	log_message("%s: wait_for %s: reached", task->config->full_name, target->config->text);
	/* The settle that follows may start it (task_dependencies_allow_start). */
	group_mark_dirty(task->group);
}

void outside_wait_begin(struct task *task)
{
	const struct task_config *config = task->config;
	if (!config->wait_for_count || task->outside)
		return;
	struct outside_wait *wait =
	    xcalloc(1, sizeof(*wait) + config->wait_for_count * sizeof(wait->targets[0]));
	wait->count = config->wait_for_count;
	task->outside = wait;
	for (size_t i = 0; i < wait->count; i++) {
		struct outside_target *target = &wait->targets[i];
		target->task = task;
		target->config = &config->wait_for[i];
		probe_init(&target->probe, &target->config->probe, config, &task->plan,
			   &task->services->probes, on_result, target);
		target->probe.outside = true;
	}
	/* After every probe is made: a first check may pass at once. */
	for (size_t i = 0; i < wait->count; i++)
		probe_start(&wait->targets[i].probe);
}

void outside_wait_end(struct task *task)
{
	struct outside_wait *wait = task->outside;
	if (!wait)
		return;
	for (size_t i = 0; i < wait->count; i++)
		probe_free(&wait->targets[i].probe);
	free(wait);
	task->outside = NULL;
}

bool outside_wait_passed(const struct task *task)
{
	if (!task->config->wait_for_count)
		return true;
	const struct outside_wait *wait = task->outside;
	if (!wait)
		return false;
	for (size_t i = 0; i < wait->count; i++)
		if (!wait->targets[i].passed)
			return false;
	return true;
}

/* The target `index` of the config still holds the task back. */
static bool still_waited_for(const struct task *task, size_t index)
{
	const struct outside_wait *wait = task->outside;
	return !wait || !wait->targets[index].passed;
}

uint64_t outside_wait_next_deadline(const struct task *task, uint64_t began_ms)
{
	uint64_t next = 0;
	for (size_t i = 0; i < task->config->wait_for_count; i++) {
		uint64_t timeout_ms = task->config->wait_for[i].timeout_ms;
		if (!timeout_ms || !still_waited_for(task, i))
			continue;
		if (!next || began_ms + timeout_ms < next)
			next = began_ms + timeout_ms;
	}
	return next;
}

static const char *last_failure_of(const struct task *task, size_t index)
{
	const struct outside_wait *wait = task->outside;
	return wait && wait->targets[index].last_failure[0] ? wait->targets[index].last_failure
							    : NULL;
}

bool outside_wait_timed_out(const struct task *task, uint64_t began_ms, uint64_t now_ms,
			    char *error, size_t error_size)
{
	for (size_t i = 0; i < task->config->wait_for_count; i++) {
		const struct wait_target *config = &task->config->wait_for[i];
		if (!config->timeout_ms || !still_waited_for(task, i) ||
		    now_ms - began_ms < config->timeout_ms)
			continue;
		char timeout[32];
		format_duration_ms(config->timeout_ms, timeout, sizeof(timeout));
		const char *last = last_failure_of(task, i);
		snprintf(error, error_size,
			 "%s not reached within %s (%s: wait_for[%zu].timeout%s%s)", config->text,
			 timeout, task->config->full_name, config->index, last ? "; last: " : "",
			 last ? last : "");
		return true;
	}
	return false;
}

bool outside_wait_describe(const struct task *task, char *buffer, size_t size)
{
	for (size_t i = 0; i < task->config->wait_for_count; i++) {
		if (!still_waited_for(task, i))
			continue;
		const struct wait_target *config = &task->config->wait_for[i];
		const char *last = last_failure_of(task, i);
		char timeout[32] = "";
		if (config->timeout_ms)
			format_duration_ms(config->timeout_ms, timeout, sizeof(timeout));
		snprintf(buffer, size, "waits for %s%s%s%s%s%s%s", config->text,
			 timeout[0] || last ? " (" : "", timeout[0] ? "at most " : "", timeout,
			 timeout[0] && last ? "; " : "", last ? "last: " : "", last ? last : "");
		if (timeout[0] || last) {
			size_t used = strlen(buffer);
			if (used + 1 < size) {
				buffer[used] = ')';
				buffer[used + 1] = '\0';
			}
		}
		return true;
	}
	return false;
}
