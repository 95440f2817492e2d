/* What corral top shows and where the user is in it: the model, the
 * lines of the view, the selection and scroll, the sort and filter, a
 * prompt being typed, the status line and the output pane. Kept apart
 * from the terminal and the socket, so that keys and rendering are tested
 * on canned replies. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cli/top/top_model.h"
#include "cli/top/top_pane.h"
#include "cli/top/top_view.h"

enum top_mode {
	TOP_MODE_NORMAL,
	TOP_MODE_FILTER, /* typing after '/' */
	TOP_MODE_SIGNAL, /* typing a signal name after 'K' */
};

#define TOP_INPUT_MAX 64

struct top_state {
	struct top_model model;
	struct top_lines lines;
	enum top_sort sort;
	bool reverse;
	char filter[TOP_INPUT_MAX];
	char filter_before[TOP_INPUT_MAX]; /* restored by Esc while typing */
	enum top_mode mode;
	char input[TOP_INPUT_MAX]; /* the signal name being typed */
	size_t selected;           /* index in lines */
	size_t scroll;             /* the first line shown */
	char message[256];         /* the status line: corral's last word */
	bool message_is_error;
	struct top_pane pane;
	bool have_model; /* a reply came (else: "connecting") */
};

void top_state_free(struct top_state *state);

/* Takes `model` (the state owns it now), keeping the selection on the
 * task it was on. */
void top_state_set_model(struct top_state *state, struct top_model *model);
/* After the sort or the filter changed: the lines again, the selection
 * kept on its task. */
void top_state_relines(struct top_state *state);

/* The selected line; NULL when there are none. */
const struct top_line *top_state_selected(const struct top_state *state);
/* What the selected line names in requests: "group/task", or "group" for
 * a group line; NULL when none is selected. */
const char *top_state_selected_target(const struct top_state *state);

/* Moves the scroll so that the selection shows in `height` rows. */
void top_state_scroll_into_view(struct top_state *state, size_t height);

/* Rows of the task list for a terminal of `rows` by `columns` (the pane
 * takes half of what is left when open). */
int top_state_list_height(const struct top_state *state, int rows, int columns);
/* Rows of the status line: up to 3 for a message longer than the screen
 * is wide (corral's refusals say why, and the why is at their end). */
int top_state_status_rows(const struct top_state *state, int columns);

void top_state_say(struct top_state *state, bool is_error, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
