/* Which lines corral top shows, in which order: the model's tasks sorted
 * and filtered. In the config's order each group has a line of its own
 * above its tasks; sorted by a figure the tasks mix, so there is none. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cli/top/top_model.h"

enum top_sort {
	TOP_SORT_CONFIG, /* groups and tasks as the reply lists them */
	TOP_SORT_NAME,
	TOP_SORT_CPU,
	TOP_SORT_MEMORY,
	TOP_SORT_RESTARTS,
	TOP_SORT_UPTIME,
	TOP_SORT_COUNT,
};

/* "config", "name", "cpu", "memory", "restarts", "uptime". */
const char *top_sort_name(enum top_sort sort);

struct top_line {
	bool is_group;
	size_t index; /* in model.groups or model.tasks */
};

struct top_lines {
	struct top_line *lines;
	size_t count, capacity;
};

/* Fills `lines` (emptied first) with what `model` shows sorted by `sort`
 * (the figures largest first, names A to Z; `reverse` turns it round) and
 * holding `filter`: the tasks whose "group/task" or state has it, in any
 * case ("" or NULL: all). A group line comes when any of its tasks does. */
void top_view_lines(const struct top_model *model, enum top_sort sort, bool reverse,
		    const char *filter, struct top_lines *lines);
void top_lines_free(struct top_lines *lines);

/* The line that shows the same thing as `line` of `old_model` (a task
 * by its target, a group by its name) in `lines` of `model`; `fallback`
 * (clamped) when it is gone. Keeps the selection on its task as
 * refreshes, sorts and filters move it. */
size_t top_lines_find(const struct top_lines *lines, const struct top_model *model,
		      const struct top_model *old_model, const struct top_line *line,
		      size_t fallback);
