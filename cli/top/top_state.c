/* corral top's state. */
#include "cli/top/top_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Rows that are not the list: the header, the column titles, the status
 * line and the keys line. */
#define FIXED_ROWS 4
/* A refusal of corral's says what to do instead at its end: up to three
 * rows of 80 columns keep all of it. */
#define STATUS_ROWS_MAX 3

void top_state_free(struct top_state *state)
{
	top_model_free(&state->model);
	top_lines_free(&state->lines);
	top_pane_close(&state->pane);
}

const struct top_line *top_state_selected(const struct top_state *state)
{
	return state->selected < state->lines.count ? &state->lines.lines[state->selected] : NULL;
}

const char *top_state_selected_target(const struct top_state *state)
{
	const struct top_line *line = top_state_selected(state);
	if (!line)
		return NULL;
	return line->is_group ? state->model.groups[line->index].name
			      : state->model.tasks[line->index].target;
}

/* The lines of `state->model` again; `old_model` is what the selection
 * indexed into (the same model after a sort or filter). */
static void relines(struct top_state *state, const struct top_model *old_model)
{
	const struct top_line *selected = top_state_selected(state);
	struct top_line was = selected ? *selected : (struct top_line){0};
	struct top_lines lines = {0};
	top_view_lines(&state->model, state->sort, state->reverse, state->filter, &lines);
	state->selected = top_lines_find(&lines, &state->model, old_model, selected ? &was : NULL,
					 state->selected);
	top_lines_free(&state->lines);
	state->lines = lines;
}

void top_state_set_model(struct top_state *state, struct top_model *model)
{
	struct top_model old = state->model;
	state->model = *model;
	*model = (struct top_model){0};
	relines(state, &old);
	top_model_free(&old);
	state->have_model = true;
}

void top_state_relines(struct top_state *state)
{
	relines(state, &state->model);
}

void top_state_scroll_into_view(struct top_state *state, size_t height)
{
	if (height == 0)
		return;
	if (state->selected < state->scroll)
		state->scroll = state->selected;
	else if (state->selected >= state->scroll + height)
		state->scroll = state->selected - height + 1;
	/* No blank rows below the last line while lines are hidden above. */
	if (state->lines.count >= height && state->scroll > state->lines.count - height)
		state->scroll = state->lines.count - height;
	if (state->lines.count < height)
		state->scroll = 0;
}

int top_state_status_rows(const struct top_state *state, int columns)
{
	if (state->mode != TOP_MODE_NORMAL || columns <= 0)
		return 1;
	size_t rows = (strlen(state->message) + (size_t)columns - 1) / (size_t)columns;
	return rows < 1 ? 1 : rows > STATUS_ROWS_MAX ? STATUS_ROWS_MAX : (int)rows;
}

int top_state_list_height(const struct top_state *state, int rows, int columns)
{
	int height = rows - FIXED_ROWS - (top_state_status_rows(state, columns) - 1);
	if (top_pane_is_open(&state->pane))
		height -= height / 2; /* the pane: its title and half the rest */
	return height > 0 ? height : 0;
}

void top_state_say(struct top_state *state, bool is_error, const char *format, ...)
{
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(state->message, sizeof(state->message), format, arguments);
	va_end(arguments);
	state->message_is_error = is_error;
}
