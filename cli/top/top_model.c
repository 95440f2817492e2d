/* The model of corral top, from one status reply. Any field may be
 * missing or of another type (the reply comes from another program): the
 * cell then reads "?" and nothing else is assumed. */
#include "cli/top/top_model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "cli/status_table.h"

/* Two readings closer than this are taken for the same one served twice
 * (age_ms is whole milliseconds, and so is the reply's time): the CPU %
 * of the last real difference stays. */
#define SAME_READING_MS 100

static void copy_text(char *buffer, size_t size, const char *text)
{
	snprintf(buffer, size, "%s", text ? text : "?");
}

static int64_t integer_or_none(const struct jv *value)
{
	return jv_is_integer(value) && jv_integer(value) >= 0 ? jv_integer(value) : TOP_NONE;
}

static const struct jv *usage_field(const struct jv *task, const char *name)
{
	const struct jv *usage = jv_get(task, "usage");
	return jv_is_object(usage) ? jv_get(usage, name) : NULL;
}

static bool is_running(const struct top_task *task)
{
	return strcmp(task->state, "running") == 0;
}

/* As `corral status` says it: "-" for a task that declares no readiness
 * (started means ready) or has no process. */
static void fill_ready(struct top_task *task, const struct jv *object)
{
	const struct jv *kind = jv_get(object, "readiness_kind");
	const struct jv *ready = jv_get(object, "ready");
	if (!is_running(task) || !kind || jv_is_null(kind))
		copy_text(task->ready, sizeof(task->ready), "-");
	else if (!jv_is_boolean(ready))
		copy_text(task->ready, sizeof(task->ready), "?");
	else
		copy_text(task->ready, sizeof(task->ready), jv_is_true(ready) ? "yes" : "no");
}

/* "ok", "fail 2/3" (2 failures in a row, 3 restart it), "starting" before
 * the probe's first run ends, "-" without a probe or a process. */
static void fill_health(struct top_task *task, const struct jv *object)
{
	const struct jv *probes = jv_get(object, "probes");
	const struct jv *health = jv_is_object(probes) ? jv_get(probes, "health") : NULL;
	if (!is_running(task) || !jv_is_object(health)) {
		copy_text(task->health, sizeof(task->health), "-");
		return;
	}
	const struct jv *failures = jv_get(health, "consecutive_failures");
	const struct jv *limit = jv_get(health, "failures_to_restart");
	if (!jv_is_integer(failures))
		copy_text(task->health, sizeof(task->health), "?");
	else if (jv_integer(failures) > 0 && jv_is_integer(limit))
		snprintf(task->health, sizeof(task->health), "fail %" PRId64 "/%" PRId64,
			 jv_integer(failures), jv_integer(limit));
	else if (jv_integer(failures) > 0)
		copy_text(task->health, sizeof(task->health), "fail");
	else
		copy_text(task->health, sizeof(task->health),
			  jv_is_true(jv_get(health, "passed")) ? "ok" : "starting");
}

static void fill_next(struct top_task *task, const struct jv *object)
{
	task->next_ms = integer_or_none(jv_get(object, "next_restart_in_ms"));
	task->next_is_run = false;
	if (task->next_ms == TOP_NONE) {
		task->next_ms = integer_or_none(jv_get(object, "next_run_in_ms"));
		task->next_is_run = task->next_ms != TOP_NONE;
	}
}

static void fill_usage(struct top_task *task, const struct jv *object, int64_t now_ms)
{
	task->cpu_usec = integer_or_none(usage_field(object, "cpu_usec"));
	task->memory_bytes = integer_or_none(usage_field(object, "memory_bytes"));
	task->memory_limit_bytes = integer_or_none(usage_field(object, "memory_limit_bytes"));
	int64_t age_ms = integer_or_none(usage_field(object, "age_ms"));
	task->read_at_ms = age_ms == TOP_NONE ? TOP_NONE : now_ms - age_ms;
	task->cpu_percent = TOP_NONE;
}

static void fill_task(struct top_task *task, const struct jv *object, const char *group,
		      int64_t now_ms)
{
	const char *target = jv_string(jv_get(object, "task"));
	const char *name = jv_string(jv_get(object, "name"));
	task->target = target ? xstrdup(target) : xasprintf("%s/%s", group, name ? name : "?");
	const char *slash = strchr(task->target, '/');
	task->name = slash ? slash + 1 : task->target;
	copy_text(task->stage, sizeof(task->stage), jv_string(jv_get(object, "stage")));
	copy_text(task->state, sizeof(task->state), jv_string(jv_get(object, "state")));
	fill_ready(task, object);
	fill_health(task, object);
	const struct jv *last_exit = jv_get(object, "last_exit");
	copy_text(task->last_exit, sizeof(task->last_exit),
		  jv_is_object(last_exit) ? jv_string(jv_get(last_exit, "description")) : "-");
	task->pid = integer_or_none(jv_get(object, "pid"));
	task->restarts = integer_or_none(jv_get(object, "restarts"));
	task->uptime_ms = integer_or_none(jv_get(object, "uptime_ms"));
	fill_next(task, object);
	fill_usage(task, object, now_ms);
}

const struct top_task *top_model_find(const struct top_model *model, const char *target,
				      size_t hint)
{
	if (hint < model->task_count && strcmp(model->tasks[hint].target, target) == 0)
		return &model->tasks[hint];
	for (size_t t = 0; t < model->task_count; t++)
		if (strcmp(model->tasks[t].target, target) == 0)
			return &model->tasks[t];
	return NULL;
}

/* The CPU % from the reading of the reply before: the time the task's
 * processes ran over the time between the readings. A CPU time that went
 * down is another run's (a new cgroup): no figure until the next. */
static void compute_cpu_percent(struct top_task *task, const struct top_task *before)
{
	if (!before || task->cpu_usec == TOP_NONE || before->cpu_usec == TOP_NONE ||
	    task->read_at_ms == TOP_NONE || before->read_at_ms == TOP_NONE ||
	    task->cpu_usec < before->cpu_usec)
		return;
	int64_t elapsed_ms = task->read_at_ms - before->read_at_ms;
	if (elapsed_ms < SAME_READING_MS) {
		/* The same reading (or nearly): keep the older one as the
		 * base, so that the next real one is measured against it. */
		task->cpu_usec = before->cpu_usec;
		task->read_at_ms = before->read_at_ms;
		task->cpu_percent = before->cpu_percent;
		return;
	}
	task->cpu_percent = (double)(task->cpu_usec - before->cpu_usec) / 10.0 / (double)elapsed_ms;
}

static void fill_corral(struct top_model *model, const struct jv *reply)
{
	const struct jv *self = jv_get(reply, "corral");
	if (!jv_is_object(self))
		return;
	const char *version = jv_string(jv_get(self, "version"));
	int length =
	    snprintf(model->corral, sizeof(model->corral), "corral %s", version ? version : "?");
	const struct jv *pid = jv_get(self, "pid");
	if (jv_is_integer(pid) && length > 0 && (size_t)length < sizeof(model->corral))
		length += snprintf(model->corral + length, sizeof(model->corral) - (size_t)length,
				   " pid %" PRId64, jv_integer(pid));
	int64_t uptime_ms = integer_or_none(jv_get(self, "uptime_ms"));
	if (uptime_ms != TOP_NONE && length > 0 && (size_t)length < sizeof(model->corral)) {
		char up[32];
		status_duration_format((uint64_t)uptime_ms, up, sizeof(up));
		snprintf(model->corral + length, sizeof(model->corral) - (size_t)length, " up %s",
			 up);
	}
}

int top_model_build(struct top_model *model, const struct jv *reply, int64_t now_ms,
		    const struct top_model *previous)
{
	const struct jv *groups = jv_get(reply, "groups"), *group, *task;
	size_t g, t, task_count = 0;

	*model = (struct top_model){0};
	if (!jv_is_array(groups))
		return -1;
	jv_array_foreach(groups, g, group)
	{
		task_count += jv_array_size(jv_get(group, "tasks"));
	}
	model->groups = xcalloc(jv_array_size(groups) + 1, sizeof(*model->groups));
	model->tasks = xcalloc(task_count + 1, sizeof(*model->tasks));
	fill_corral(model, reply);
	jv_array_foreach(groups, g, group)
	{
		struct top_group *into = &model->groups[model->group_count++];
		const char *name = jv_string(jv_get(group, "name"));
		into->name = xstrdup(name ? name : "?");
		copy_text(into->state, sizeof(into->state), jv_string(jv_get(group, "state")));
		into->stopping = jv_is_true(jv_get(group, "stopping"));
		into->finished = jv_is_true(jv_get(group, "finished"));
		into->first_task = model->task_count;
		jv_array_foreach(jv_get(group, "tasks"), t, task)
		{
			if (!jv_is_object(task))
				continue;
			struct top_task *row = &model->tasks[model->task_count];
			fill_task(row, task, into->name, now_ms);
			row->group = g;
			row->order = model->task_count++;
			if (previous)
				compute_cpu_percent(
				    row, top_model_find(previous, row->target, row->order));
			model->running += is_running(row);
			model->dead += strcmp(row->state, "dead") == 0;
		}
		into->task_count = model->task_count - into->first_task;
	}
	return 0;
}

void top_model_free(struct top_model *model)
{
	for (size_t g = 0; g < model->group_count; g++)
		free(model->groups[g].name);
	for (size_t t = 0; t < model->task_count; t++)
		free(model->tasks[t].target);
	free(model->groups);
	free(model->tasks);
	*model = (struct top_model){0};
}
