/* Sorting and filtering for corral top. The sort is stable (ties keep the
 * config's order), so that equal rows do not swap places every second. */
#include "cli/top/top_view.h"

#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

const char *top_sort_name(enum top_sort sort)
{
	static const char *const names[TOP_SORT_COUNT] = {"config", "name",     "cpu",
							  "memory", "restarts", "uptime"};
	return sort < TOP_SORT_COUNT ? names[sort] : "?";
}

static void add_line(struct top_lines *lines, bool is_group, size_t index)
{
	if (lines->count == lines->capacity) {
		lines->capacity = lines->capacity ? lines->capacity * 2 : 64;
		lines->lines = xreallocarray(lines->lines, lines->capacity, sizeof(*lines->lines));
	}
	lines->lines[lines->count++] = (struct top_line){.is_group = is_group, .index = index};
}

static bool matches(const struct top_task *task, const char *filter)
{
	return !filter || !*filter || strcasestr(task->target, filter) ||
	       strcasestr(task->state, filter);
}

/* qsort_r's context: the model and the order asked for. */
struct sort_context {
	const struct top_model *model;
	enum top_sort sort;
	bool reverse;
};

static int compare_figures(double a, double b)
{
	return (a < b) - (a > b); /* largest first */
}

static int compare_tasks(const void *left, const void *right, void *argument)
{
	const struct sort_context *context = argument;
	const struct top_task *a = &context->model->tasks[((const struct top_line *)left)->index];
	const struct top_task *b = &context->model->tasks[((const struct top_line *)right)->index];
	int order = 0;
	switch (context->sort) {
	case TOP_SORT_NAME:
		order = strcmp(a->target, b->target);
		break;
	case TOP_SORT_CPU:
		order = compare_figures(a->cpu_percent, b->cpu_percent);
		break;
	case TOP_SORT_MEMORY:
		order = compare_figures((double)a->memory_bytes, (double)b->memory_bytes);
		break;
	case TOP_SORT_RESTARTS:
		order = compare_figures((double)a->restarts, (double)b->restarts);
		break;
	case TOP_SORT_UPTIME:
		order = compare_figures((double)a->uptime_ms, (double)b->uptime_ms);
		break;
	case TOP_SORT_CONFIG:
	case TOP_SORT_COUNT:
		break;
	}
	if (context->reverse)
		order = -order;
	/* Stable: qsort is not, the config's order breaks ties. */
	return order ? order : (a->order > b->order) - (a->order < b->order);
}

void top_view_lines(const struct top_model *model, enum top_sort sort, bool reverse,
		    const char *filter, struct top_lines *lines)
{
	lines->count = 0;
	if (sort == TOP_SORT_CONFIG && !reverse) {
		for (size_t g = 0; g < model->group_count; g++) {
			const struct top_group *group = &model->groups[g];
			size_t header = lines->count;
			bool any = false;
			add_line(lines, true, g);
			for (size_t t = group->first_task;
			     t < group->first_task + group->task_count; t++)
				if (matches(&model->tasks[t], filter)) {
					add_line(lines, false, t);
					any = true;
				}
			/* A group with no task (scaled to 0) shows without a
			 * filter; with one, only if a task of it matches. */
			if (!any && filter && *filter)
				lines->count = header;
		}
		return;
	}
	for (size_t t = 0; t < model->task_count; t++)
		if (matches(&model->tasks[t], filter))
			add_line(lines, false, t);
	struct sort_context context = {.model = model, .sort = sort, .reverse = reverse};
	qsort_r(lines->lines, lines->count, sizeof(*lines->lines), compare_tasks, &context);
}

void top_lines_free(struct top_lines *lines)
{
	free(lines->lines);
	*lines = (struct top_lines){0};
}

static const char *line_key(const struct top_model *model, const struct top_line *line)
{
	return line->is_group ? model->groups[line->index].name : model->tasks[line->index].target;
}

size_t top_lines_find(const struct top_lines *lines, const struct top_model *model,
		      const struct top_model *old_model, const struct top_line *line,
		      size_t fallback)
{
	if (line && old_model &&
	    line->index < (line->is_group ? old_model->group_count : old_model->task_count)) {
		const char *key = line_key(old_model, line);
		for (size_t l = 0; l < lines->count; l++)
			if (lines->lines[l].is_group == line->is_group &&
			    strcmp(line_key(model, &lines->lines[l]), key) == 0)
				return l;
	}
	if (lines->count == 0)
		return 0;
	return fallback < lines->count ? fallback : lines->count - 1;
}
