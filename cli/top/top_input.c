/* Keys of corral top: j/k and the arrows move, PgUp/PgDn a page, Home/End
 * (g/G) the ends; o/O sort (P CPU, M memory, as top(1)); / filters; Enter
 * or l follows the selected task's output; r, s, S and K restart, stop,
 * start and signal it; q (or ^C) quits. */
#include "cli/top/top_input.h"

#include <stdbool.h>
#include <string.h>

#include "cli/top/top_keys.h"

#define CONTROL(letter) ((letter)&0x1f)
#define BACKSPACE       127

static void move_selection(struct top_state *state, long by)
{
	if (state->lines.count == 0)
		return;
	long last = (long)state->lines.count - 1;
	long to = (long)state->selected + by;
	state->selected = (size_t)(to < 0 ? 0 : to > last ? last : to);
}

/* Typing into a prompt: printable bytes, Backspace; true when `key` was
 * one of those. */
static bool edit_text(char *text, size_t size, int key)
{
	size_t length = strlen(text);
	if ((key == BACKSPACE || key == CONTROL('H')) && length > 0) {
		text[length - 1] = '\0';
		return true;
	}
	if (key >= 0x20 && key < 0x7f && length + 1 < size) {
		text[length] = (char)key;
		text[length + 1] = '\0';
		return true;
	}
	return false;
}

/* The filter applies as it is typed; Enter keeps it, Esc puts back the
 * one before. */
static enum top_action filter_key(struct top_state *state, int key)
{
	if (key == '\r' || key == '\n') {
		state->mode = TOP_MODE_NORMAL;
	} else if (key == TOP_KEY_ESCAPE) {
		memcpy(state->filter, state->filter_before, sizeof(state->filter));
		state->mode = TOP_MODE_NORMAL;
		top_state_relines(state);
	} else if (edit_text(state->filter, sizeof(state->filter), key)) {
		top_state_relines(state);
	}
	return TOP_ACTION_NONE;
}

static enum top_action signal_key(struct top_state *state, int key)
{
	if (key == '\r' || key == '\n') {
		state->mode = TOP_MODE_NORMAL;
		return state->input[0] ? TOP_ACTION_SIGNAL : TOP_ACTION_NONE;
	}
	if (key == TOP_KEY_ESCAPE)
		state->mode = TOP_MODE_NORMAL;
	else
		edit_text(state->input, sizeof(state->input), key);
	return TOP_ACTION_NONE;
}

static void set_sort(struct top_state *state, enum top_sort sort, bool reverse)
{
	state->sort = sort;
	state->reverse = reverse;
	top_state_relines(state);
	top_state_say(state, false, "sorted by %s%s", top_sort_name(sort),
		      reverse ? ", reversed" : "");
}

/* The keys that move; true when `key` was one. */
static bool movement_key(struct top_state *state, int key, int height)
{
	long page = height > 1 ? height - 1 : 1;
	switch (key) {
	case 'j':
	case TOP_KEY_DOWN:
		move_selection(state, 1);
		return true;
	case 'k':
	case TOP_KEY_UP:
		move_selection(state, -1);
		return true;
	case TOP_KEY_PAGE_DOWN:
	case CONTROL('F'):
	case ' ':
		move_selection(state, page);
		return true;
	case TOP_KEY_PAGE_UP:
	case CONTROL('B'):
		move_selection(state, -page);
		return true;
	case TOP_KEY_HOME:
	case 'g':
		state->selected = 0;
		return true;
	case TOP_KEY_END:
	case 'G':
		move_selection(state, (long)state->lines.count);
		return true;
	default:
		return false;
	}
}

/* The pane shows the selected line's output, live: Enter closes it. On
 * another line, or once its stream ended (corral went away), Enter
 * follows the selected line anew. */
static bool following_selected(const struct top_state *state)
{
	const char *target = top_state_selected_target(state);
	return top_pane_is_open(&state->pane) && !state->pane.ended && target &&
	       strcmp(target, state->pane.target) == 0;
}

static enum top_action task_key(struct top_state *state, int key)
{
	switch (key) {
	case 'r':
		return TOP_ACTION_RESTART;
	case 's':
		return TOP_ACTION_STOP;
	case 'S':
		return TOP_ACTION_START;
	case 'K':
		state->mode = TOP_MODE_SIGNAL;
		memcpy(state->input, "TERM", sizeof("TERM"));
		return TOP_ACTION_NONE;
	case '\r':
	case '\n':
	case 'l':
		return following_selected(state) ? TOP_ACTION_UNFOLLOW : TOP_ACTION_FOLLOW;
	default:
		return TOP_ACTION_NONE;
	}
}

enum top_action top_input_key(struct top_state *state, int key, int height)
{
	if (state->mode == TOP_MODE_FILTER)
		return filter_key(state, key);
	if (state->mode == TOP_MODE_SIGNAL)
		return signal_key(state, key);
	if (movement_key(state, key, height))
		return TOP_ACTION_NONE;
	switch (key) {
	case 'q':
	case CONTROL('C'):
		return TOP_ACTION_QUIT;
	case CONTROL('L'):
		return TOP_ACTION_REDRAW;
	case '/':
		/* A new filter each time, as less(1) and k9s do; Esc
		 * while typing puts back the one before. */
		memcpy(state->filter_before, state->filter, sizeof(state->filter));
		state->filter[0] = '\0';
		state->mode = TOP_MODE_FILTER;
		top_state_relines(state);
		return TOP_ACTION_NONE;
	case 'o':
		set_sort(state, (state->sort + 1) % TOP_SORT_COUNT, false);
		return TOP_ACTION_NONE;
	case 'O':
		set_sort(state, state->sort, !state->reverse);
		return TOP_ACTION_NONE;
	case 'P':
		set_sort(state, TOP_SORT_CPU, false);
		return TOP_ACTION_NONE;
	case 'M':
		set_sort(state, TOP_SORT_MEMORY, false);
		return TOP_ACTION_NONE;
	case TOP_KEY_ESCAPE:
		if (top_pane_is_open(&state->pane))
			return TOP_ACTION_UNFOLLOW;
		if (state->filter[0]) {
			state->filter[0] = '\0';
			top_state_relines(state);
		}
		return TOP_ACTION_NONE;
	default:
		return task_key(state, key);
	}
}

const char *top_input_hint(const struct top_state *state, int columns)
{
	switch (state->mode) {
	case TOP_MODE_FILTER:
		return "type to filter by name or state  Enter: keep  Esc: undo  Backspace";
	case TOP_MODE_SIGNAL:
		return "signal name (TERM, HUP, USR1, KILL...)  Enter: send  Esc: cancel";
	default:
		break;
	}
	if (columns >= 100)
		return "q quit  j/k move  / filter  o/O sort (P cpu, M mem)  Enter/l output  "
		       "r restart  s stop  S start  K signal";
	return "q quit / filter o sort l output r restart s stop S start K signal";
}
