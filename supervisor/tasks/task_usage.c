#include "supervisor/tasks/task_usage.h"

#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task.h"

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

static bool needs_reading(const struct task_usage *usage, uint64_t now_ms)
{
	return !usage->valid || age_of(usage, now_ms) > TASK_USAGE_REFRESH_MS;
}

const struct task_cgroup_stats *task_usage_recent(struct task *task, uint64_t now_ms,
						  uint64_t *age_ms)
{
	if (task->usage.valid && age_of(&task->usage, now_ms) <= TASK_USAGE_FRESH_MS) {
		*age_ms = age_of(&task->usage, now_ms);
		return &task->usage.stats;
	}
	*age_ms = 0;
	return task_usage_read(task, now_ms);
}

const struct task_cgroup_stats *task_usage_cached(const struct task *task, uint64_t now_ms,
						  uint64_t *age_ms, bool *stale)
{
	*stale = needs_reading(&task->usage, now_ms);
	*age_ms = task->usage.valid ? age_of(&task->usage, now_ms) : 0;
	return task->usage.valid ? &task->usage.stats : NULL;
}

const struct task_cgroup_stats *task_usage_for_list(struct task *task, uint64_t now_ms,
						    size_t *first_reads_left, uint64_t *age_ms,
						    bool *stale)
{
	const struct task_cgroup_stats *stats = task_usage_cached(task, now_ms, age_ms, stale);
	if (stats || !*first_reads_left)
		return stats;
	(*first_reads_left)--;
	*age_ms = 0;
	*stale = false;
	return task_usage_read(task, now_ms);
}

bool task_usage_refresh_some(struct group *const *groups, size_t group_count,
			     struct task_usage_cursor *cursor, uint64_t now_ms, size_t max_reads)
{
	size_t reads = 0;
	for (; cursor->group < group_count; cursor->group++, cursor->task = 0) {
		const struct group *group = groups[cursor->group];
		for (; cursor->task < group->task_count; cursor->task++) {
			struct task *task = group->tasks[cursor->task];
			if (!task_cgroup_exists(&task->cgroup) ||
			    !needs_reading(&task->usage, now_ms))
				continue;
			if (reads == max_reads)
				return false;
			task_usage_read(task, now_ms);
			reads++;
		}
	}
	*cursor = (struct task_usage_cursor){0};
	return true;
}
