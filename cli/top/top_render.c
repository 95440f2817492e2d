/* The layout of corral top. At 80 columns every column fits, the task
 * name taking what is left (16 cells); a wider terminal gives the name
 * room up to its longest, then adds the last exit. */
#include "cli/top/top_render.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/units.h"
#include "cli/status_table.h"
#include "cli/top/top_input.h"

#define TASK_MIN_WIDTH 12
#define TASK_MAX_WIDTH 48
#define LAST_EXIT_MIN  12
#define TOO_SMALL_ROWS 6
#define GROUP_INDENT   "  "
#define INDENT_WIDTH   2

enum column {
	COLUMN_STATE,
	COLUMN_READY,
	COLUMN_HEALTH,
	COLUMN_RESTARTS,
	COLUMN_CPU,
	COLUMN_MEMORY,
	COLUMN_UPTIME,
	COLUMN_NEXT,
	COLUMN_COUNT,
};

static const struct {
	const char *title;
	int width;
	bool right; /* figures line up on the right */
} columns[COLUMN_COUNT] = {
    [COLUMN_STATE] = {"STATE", 8, false},   [COLUMN_READY] = {"READY", 5, false},
    [COLUMN_HEALTH] = {"HEALTH", 8, false}, [COLUMN_RESTARTS] = {"RESTARTS", 8, true},
    [COLUMN_CPU] = {"CPU%", 5, true},       [COLUMN_MEMORY] = {"MEM", 7, true},
    [COLUMN_UPTIME] = {"UPTIME", 6, true},  [COLUMN_NEXT] = {"NEXT", 8, true},
};

/* Where each column starts, for one screen width. */
struct layout {
	int task_width;
	int start[COLUMN_COUNT];
	int last_exit_start, last_exit_width; /* width 0: not shown */
	bool indent; /* task lines under group lines: names within the group */
};

static int name_width(const struct top_state *state, bool indent)
{
	int widest = 0;
	for (size_t l = 0; l < state->lines.count; l++) {
		const struct top_line *line = &state->lines.lines[l];
		int width = line->is_group ? 0
			    : indent
				? INDENT_WIDTH + (int)strlen(state->model.tasks[line->index].name)
				: (int)strlen(state->model.tasks[line->index].target);
		if (width > widest)
			widest = width;
	}
	return widest;
}

static struct layout plan_layout(const struct top_state *state, int screen_columns)
{
	struct layout layout = {.indent = state->sort == TOP_SORT_CONFIG && !state->reverse};
	int fixed = 0;
	for (int c = 0; c < COLUMN_COUNT; c++)
		fixed += columns[c].width + 1;
	int room = screen_columns - fixed;
	int wanted = name_width(state, layout.indent);
	wanted = wanted < TASK_MIN_WIDTH   ? TASK_MIN_WIDTH
		 : wanted > TASK_MAX_WIDTH ? TASK_MAX_WIDTH
					   : wanted;
	layout.task_width = room < TASK_MIN_WIDTH ? TASK_MIN_WIDTH : room < wanted ? room : wanted;
	int at = layout.task_width + 1;
	for (int c = 0; c < COLUMN_COUNT; c++) {
		layout.start[c] = at;
		at += columns[c].width + 1;
	}
	if (screen_columns - at >= LAST_EXIT_MIN) {
		layout.last_exit_start = at + 1;
		layout.last_exit_width = screen_columns - at - 1;
	}
	return layout;
}

static void put_cell(struct top_screen *screen, int row, const struct layout *layout, int column,
		     const char *text)
{
	if (columns[column].right)
		top_screen_put_right(screen, row, layout->start[column], columns[column].width,
				     text, TOP_PLAIN);
	else
		top_screen_put(screen, row, layout->start[column], columns[column].width, text,
			       TOP_PLAIN);
}

static void format_duration_cell(int64_t ms, char *buffer, size_t size)
{
	if (ms == TOP_NONE)
		snprintf(buffer, size, "-");
	else
		status_duration_format((uint64_t)ms, buffer, size);
}

static void draw_titles(struct top_screen *screen, int row, const struct layout *layout)
{
	top_screen_put(screen, row, 0, layout->task_width, "TASK", TOP_REVERSE);
	for (int c = 0; c < COLUMN_COUNT; c++)
		put_cell(screen, row, layout, c, columns[c].title);
	if (layout->last_exit_width)
		top_screen_put(screen, row, layout->last_exit_start, layout->last_exit_width,
			       "LAST EXIT", TOP_PLAIN);
	top_screen_row_attribute(screen, row, TOP_REVERSE);
}

static void draw_task(struct top_screen *screen, int row, const struct layout *layout,
		      const struct top_task *task)
{
	char cell[64];
	if (layout->indent) {
		top_screen_put(screen, row, 0, INDENT_WIDTH, GROUP_INDENT, TOP_PLAIN);
		top_screen_put(screen, row, INDENT_WIDTH, layout->task_width - INDENT_WIDTH,
			       task->name, TOP_PLAIN);
	} else {
		top_screen_put(screen, row, 0, layout->task_width, task->target, TOP_PLAIN);
	}
	put_cell(screen, row, layout, COLUMN_STATE, task->state);
	put_cell(screen, row, layout, COLUMN_READY, task->ready);
	put_cell(screen, row, layout, COLUMN_HEALTH, task->health);
	if (task->restarts == TOP_NONE)
		snprintf(cell, sizeof(cell), "?");
	else
		snprintf(cell, sizeof(cell), "%" PRId64, task->restarts);
	put_cell(screen, row, layout, COLUMN_RESTARTS, cell);
	if (task->cpu_percent < 0)
		snprintf(cell, sizeof(cell), "-");
	else
		snprintf(cell, sizeof(cell), task->cpu_percent < 100 ? "%.1f" : "%.0f",
			 task->cpu_percent);
	put_cell(screen, row, layout, COLUMN_CPU, cell);
	if (task->memory_bytes == TOP_NONE)
		snprintf(cell, sizeof(cell), "-");
	else
		format_size_bytes((uint64_t)task->memory_bytes, cell, sizeof(cell));
	put_cell(screen, row, layout, COLUMN_MEMORY, cell);
	format_duration_cell(task->uptime_ms, cell, sizeof(cell));
	put_cell(screen, row, layout, COLUMN_UPTIME, cell);
	char duration[32];
	format_duration_cell(task->next_ms, duration, sizeof(duration));
	snprintf(cell, sizeof(cell), "%s%s", task->next_is_run ? "run " : "", duration);
	put_cell(screen, row, layout, COLUMN_NEXT, cell);
	if (layout->last_exit_width)
		top_screen_put(screen, row, layout->last_exit_start, layout->last_exit_width,
			       task->last_exit, TOP_PLAIN);
}

/* "web  running" and what else is true of the group ("stopping",
 * "finished"), the name in bold. */
static void draw_group(struct top_screen *screen, int row, const struct top_group *group)
{
	char text[96];
	int at = top_screen_put(screen, row, 0, -1, group->name, TOP_BOLD);
	snprintf(text, sizeof(text), "  group %s%s%s", group->state,
		 group->stopping ? ", stopping" : "", group->finished ? ", finished" : "");
	top_screen_put(screen, row, at, -1, text, TOP_PLAIN);
}

/* "3 tasks, 3 running, 0 dead  sort cpu  filter web", and corral itself
 * on the right when it fits. */
static void draw_header(struct top_screen *screen, const struct top_state *state)
{
	char text[384];
	const struct top_model *model = &state->model;
	if (!state->have_model) {
		top_screen_put(screen, 0, 0, -1, "corral top: waiting for corral's first reply",
			       TOP_PLAIN);
		return;
	}
	int length = snprintf(text, sizeof(text), "%zu tasks, %zu running, %zu dead  sort %s%s",
			      model->task_count, model->running, model->dead,
			      top_sort_name(state->sort), state->reverse ? " (reversed)" : "");
	if (state->filter[0] && length > 0 && (size_t)length < sizeof(text))
		length += snprintf(text + length, sizeof(text) - (size_t)length, "  filter %s",
				   state->filter);
	int used = top_screen_put(screen, 0, 0, -1, text, TOP_PLAIN);
	int identity = (int)strlen(model->corral);
	if (identity && used + 2 + identity <= screen->columns)
		top_screen_put_right(screen, 0, 0, screen->columns, model->corral, TOP_DIM);
}

/* Where the selection is, "12/1000", at the right end of the keys line
 * once the list does not fit. */
static void draw_position(struct top_screen *screen, const struct top_state *state, int height)
{
	if (state->lines.count <= (size_t)height)
		return;
	char text[48];
	snprintf(text, sizeof(text), " %zu/%zu", state->selected + 1, state->lines.count);
	top_screen_put_right(screen, screen->rows - 1, 0, screen->columns, text, TOP_REVERSE);
}

static void draw_list(struct top_screen *screen, struct top_state *state,
		      const struct layout *layout, int first_row, int height)
{
	top_state_scroll_into_view(state, (size_t)height);
	for (int r = 0; r < height; r++) {
		size_t index = state->scroll + (size_t)r;
		if (index >= state->lines.count)
			break;
		const struct top_line *line = &state->lines.lines[index];
		int row = first_row + r;
		if (line->is_group)
			draw_group(screen, row, &state->model.groups[line->index]);
		else
			draw_task(screen, row, layout, &state->model.tasks[line->index]);
		if (index == state->selected)
			top_screen_row_attribute(screen, row, TOP_REVERSE);
	}
	if (state->have_model && state->lines.count == 0)
		top_screen_put(screen, first_row, 0, -1,
			       state->filter[0] ? "(no task matches the filter)" : "(no tasks)",
			       TOP_DIM);
}

/* The pane: a title row, then its newest lines, the last at the bottom. */
static void draw_pane(struct top_screen *screen, const struct top_pane *pane, int first_row,
		      int height)
{
	char title[384];
	snprintf(title, sizeof(title), "output of %s%s%s  (Esc: close)", pane->target,
		 pane->ended ? ": " : "", pane->ended ? pane->ended : "");
	top_screen_put(screen, first_row, 0, -1, title, TOP_REVERSE);
	top_screen_row_attribute(screen, first_row, TOP_REVERSE);
	size_t shown = (size_t)(height - 1);
	size_t from = pane->count > shown ? pane->count - shown : 0;
	for (size_t i = from; i < pane->count; i++)
		top_screen_put(screen, first_row + 1 + (int)(i - from), 0, -1,
			       top_pane_line(pane, i), TOP_PLAIN);
	if (pane->count == 0)
		top_screen_put(screen, first_row + 1, 0, -1, "(no output yet)", TOP_DIM);
}

static void draw_status(struct top_screen *screen, const struct top_state *state, int row)
{
	char text[384];
	switch (state->mode) {
	case TOP_MODE_FILTER:
		snprintf(text, sizeof(text), "/%s_", state->filter);
		top_screen_put(screen, row, 0, -1, text, TOP_PLAIN);
		return;
	case TOP_MODE_SIGNAL:
		snprintf(text, sizeof(text), "signal %s: %s_",
			 top_state_selected_target(state) ?: "?", state->input);
		top_screen_put(screen, row, 0, -1, text, TOP_PLAIN);
		return;
	default:
		break;
	}
	/* A long message goes on over the next rows (top_state_status_rows). */
	enum top_attribute attribute = state->message_is_error ? TOP_BOLD : TOP_PLAIN;
	size_t shown = 0, length = strlen(state->message);
	for (int r = 0; r < top_state_status_rows(state, screen->columns) && shown < length; r++)
		shown += (size_t)top_screen_put(screen, row + r, 0, -1, state->message + shown,
						attribute);
}

void top_render(struct top_state *state, struct top_screen *screen)
{
	top_screen_clear(screen);
	if (screen->rows < TOO_SMALL_ROWS || screen->columns < TASK_MIN_WIDTH + 8) {
		char text[64];
		snprintf(text, sizeof(text), "corral top: %dx%d is too small", screen->columns,
			 screen->rows);
		top_screen_put(screen, 0, 0, -1, text, TOP_PLAIN);
		return;
	}
	struct layout layout = plan_layout(state, screen->columns);
	int height = top_state_list_height(state, screen->rows, screen->columns);
	int status_rows = top_state_status_rows(state, screen->columns);
	draw_header(screen, state);
	draw_titles(screen, 1, &layout);
	draw_list(screen, state, &layout, 2, height);
	if (top_pane_is_open(&state->pane))
		draw_pane(screen, &state->pane, 2 + height,
			  screen->rows - 3 - status_rows - height);
	draw_status(screen, state, screen->rows - 1 - status_rows);
	top_screen_put(screen, screen->rows - 1, 0, -1, top_input_hint(state, screen->columns),
		       TOP_REVERSE);
	top_screen_row_attribute(screen, screen->rows - 1, TOP_REVERSE);
	draw_position(screen, state, height);
}
