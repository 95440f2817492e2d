#include "supervisor/task_usage.h"


#include "supervisor/group.h"
#include "supervisor/task.h"

void task_usage_forget(struct task_usage *usage)
{
	usage->valid = false;
}

const struct task_cgroup_stats *task_usage_read(struct task *task, uint64_t now_ms)
{
	task_read_stats(task, &task->usage.stats);
	task->usage.read_at_ms = now_ms;
	task->usage.valid = true;
	return &task->usage.stats;
}

/* The loop's clock only goes forward, but a reading made during this
 * turn may carry a later stamp than the turn's `now`. */
static uint64_t age_of(const struct task_usage *usage, uint64_t now_ms)
{
	return now_ms > usage->read_at_ms ? now_ms - usage->read_at_ms : 0;
}

const struct task_cgroup_stats *task_usage_cached(struct task *task, uint64_t now_ms,
						  uint64_t *age_ms, bool *stale)
{
	if (!task->usage.valid || age_of(&task->usage, now_ms) > TASK_USAGE_MAX_AGE_MS) {
		*age_ms = 0;
		*stale = false;
		return task_usage_read(task, now_ms);
	}
	*age_ms = age_of(&task->usage, now_ms);
	*stale = *age_ms > TASK_USAGE_REFRESH_MS;
	return &task->usage.stats;
}

void task_usage_refresh_stale(struct group **groups, size_t group_count, uint64_t now_ms)
{
	for (size_t g = 0; g < group_count; g++)
		for (size_t t = 0; t < groups[g]->task_count; t++) {
			struct task *task = groups[g]->tasks[t];
			if (task->usage.valid && task_cgroup_exists(&task->cgroup) &&
			    age_of(&task->usage, now_ms) > TASK_USAGE_REFRESH_MS)
				task_usage_read(task, now_ms);
		}
}
