/* corral scale: each pair checked against what runs, then one config made
 * from the running one with the new counts (config_copy.h), applied as a
 * reload of it would be (reload_apply_scaled): the last instances stop
 * (the highest numbers, each as `corral stop` stops it), new ones are
 * received and start through their gate and their `after:`. The count
 * holds until the next reload, which goes back to the config's. */
#include "supervisor/scale.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/xmalloc.h"
#include "config/load/config_copy.h"
#include "supervisor/reload.h"

/* One pair, checked. */
struct scale_step {
	struct group *group;
	const char *task; /* the name written with `instances:` */
	unsigned from, to;
	unsigned configured;             /* what the config says */
	const struct task_config *model; /* what a new instance is made from */
};

static json_t *refusal(const char *format, ...) __attribute__((format(printf, 1, 2)));
static json_t *refusal(const char *format, ...)
{
	char message[768];
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(message, sizeof(message), format, arguments);
	va_end(arguments);
	return json_pack("{s:b, s:s}", "ok", 0, "error", message);
}

static struct group *group_named(struct supervisor *supervisor, const char *name, size_t length)
{
	for (size_t g = 0; g < supervisor->group_count; g++) {
		struct group *group = supervisor->groups[g];
		if (!group->removed && strlen(group->config->name) == length &&
		    strncmp(group->config->name, name, length) == 0)
			return group;
	}
	return NULL;
}

/* The instance number of a task of the set, else -1. */
static long instance_in(const struct task *task, const char *set)
{
	return task->config->instance_of && strcmp(task->config->instance_of, set) == 0
		   ? (long)task->config->instance
		   : -1;
}

/* The new instances' probe targets, when they name the instance, can be
 * made (`port: $((65534 + CORRAL_INSTANCE))` has room for two): a refusal
 * naming the first that cannot, or NULL. */
static json_t *check_new_targets(const struct scale_step *step)
{
	for (unsigned number = step->from; number < step->to; number++) {
		char error[512];
		if (instance_targets_check(step->model, number, error, sizeof(error)) < 0)
			return refusal("%s/%s@%u cannot be made: %s", step->group->config->name,
				       step->task, number, error);
	}
	return NULL;
}

/* The pair `target`=`count` against what runs: 0 with `step`, or a
 * refusal (the reply) naming what is wrong. */
static json_t *check_pair(struct supervisor *supervisor, const char *target, unsigned count,
			  struct scale_step *step)
{
	const char *slash = strchr(target, '/');
	struct group *group = group_named(supervisor, target, (size_t)(slash - target));
	if (!group)
		return refusal("%s: no group \"%.*s\"", target, (int)(slash - target), target);
	const char *set = slash + 1;
	*step = (struct scale_step){.group = group, .task = set, .to = count};
	bool named_alone = false;
	for (size_t t = 0; t < group->task_count; t++) {
		const struct task *task = group->tasks[t];
		named_alone |= strcmp(task->config->name, set) == 0;
		long number = instance_in(task, set);
		if (number < 0)
			continue;
		if (task->removed) {
			/* Still stopping after a scale down: its name and cgroup
			 * are taken until it is gone. */
			if ((unsigned long)number < count)
				return refusal(
				    "%s is still stopping after an earlier scale down or "
				    "reload: scale up again once it is gone",
				    task->config->full_name);
			continue;
		}
		step->from++;
		if (!step->model)
			step->model = task->next_config ? task->next_config : task->config;
	}
	const struct zero_set *zero = zero_sets_find(&group->zero_sets, set);
	if (!step->from && zero)
		step->model = &zero->model;
	if (!step->from && !zero) {
		if (named_alone)
			return refusal(
			    "%s has no instances: scale takes a task written with "
			    "instances: N (instances: 1 makes it %s@0, one instance that "
			    "can be scaled)",
			    target, set);
		return refusal("no task %s in group %s", target, group->config->name);
	}
	if (supervisor->shutting_down)
		return refusal("corral is shutting down: nothing can be started any more");
	if (group->stop_mode == GROUP_STOPPING || group->finished)
		return refusal("group %s is %s: use `corral restart --all %s` to run it again",
			       group->config->name, group->finished ? "finished" : "stopping",
			       group->config->name);
	if (instance_roll_going(group, set))
		return refusal("%s: a rolling restart goes on: scale once it is over (corral "
			       "status %s)",
			       target, target);
	json_t *refused = check_new_targets(step);
	if (refused)
		return refused;
	unsigned now;
	group_instance_counts(group, set, &step->configured, &now);
	return NULL;
}

/* "scaled from 3 to 5 instances (the config says 3): g/web@3, g/web@4
 * start". */
static void describe(const struct scale_step *step, char *buffer, size_t size)
{
	const char *group = step->group->config->name;
	int used = snprintf(buffer, size, "scaled from %u to %u instance%s (the config says %u)",
			    step->from, step->to, step->to == 1 ? "" : "s", step->configured);
	if (step->to == step->from || used < 0 || (size_t)used >= size)
		return;
	size_t at = (size_t)used;
	unsigned low = step->to > step->from ? step->from : step->to;
	unsigned high = step->to > step->from ? step->to : step->from;
	for (unsigned number = low; number < high && at < size; number++) {
		/* Stopped from the highest down; started from the lowest up. */
		unsigned shown = step->to > step->from ? number : high - 1 - (number - low);
		at += (size_t)snprintf(buffer + at, size - at, "%s%s/%s@%u",
				       number == low ? ": " : ", ", group, step->task, shown);
	}
	if (at < size)
		snprintf(buffer + at, size - at, " %s", step->to > step->from ? "start" : "stop");
}

json_t *scale_run(struct supervisor *supervisor, const struct control_request *request)
{
	struct scale_step steps[CONTROL_SCALE_MAX];
	struct instance_count changes[CONTROL_SCALE_MAX];
	size_t change_count = 0;
	for (size_t i = 0; i < request->count_count; i++) {
		json_t *refused = check_pair(supervisor, request->counts[i].target,
					     request->counts[i].count, &steps[i]);
		if (refused)
			return refused;
		if (steps[i].to != steps[i].from)
			changes[change_count++] =
			    (struct instance_count){steps[i].group->config->name, steps[i].task,
						    steps[i].to, steps[i].model};
	}
	if (change_count) {
		/* Sets going to 0 keep their definition: copied before the
		 * instances that hold it go. */
		struct zero_sets leaving = {0};
		for (size_t i = 0; i < request->count_count; i++)
			if (steps[i].to == 0 && steps[i].from > 0)
				zero_sets_add(&leaving, steps[i].task, steps[i].model,
					      steps[i].configured);
		char error[512];
		struct config *config =
		    config_with_instances(supervisor->config, changes, change_count);
		if (reload_apply_scaled(supervisor, config, error, sizeof(error)) < 0) {
			zero_sets_clear(&leaving);
			return refusal("scale refused, nothing changed: %s", error);
		}
		for (size_t i = 0; i < request->count_count; i++) {
			struct zero_sets *sets = &steps[i].group->zero_sets;
			const struct zero_set *kept = zero_sets_find(&leaving, steps[i].task);
			if (kept)
				zero_sets_add(sets, kept->task, &kept->model, kept->configured);
			else if (steps[i].to > 0)
				zero_sets_remove(sets, steps[i].task);
		}
		zero_sets_clear(&leaving);
	}
	json_t *tasks = json_array();
	char message[1024] = "";
	size_t used = 0;
	for (size_t i = 0; i < request->count_count; i++) {
		const struct scale_step *step = &steps[i];
		char said[512];
		describe(step, said, sizeof(said));
		if (step->to != step->from)
			event_log_task(&supervisor->events, request->counts[i].target,
				       task_event_type_name(TASK_EVENT_SCALED), said, 0);
		if (step->to == step->from)
			snprintf(said, sizeof(said), "%u instance%s, unchanged", step->to,
				 step->to == 1 ? "" : "s");
		if (used < sizeof(message))
			used += (size_t)snprintf(message + used, sizeof(message) - used, "%s%s: %s",
						 i ? "; " : "", request->counts[i].target, said);
		json_array_append_new(tasks,
				      json_pack("{s:s, s:i, s:i, s:i}", "task",
						request->counts[i].target, "from", step->from, "to",
						step->to, "configured", step->configured));
	}
	return json_pack("{s:b, s:s, s:o}", "ok", 1, "message", message, "tasks", tasks);
}
