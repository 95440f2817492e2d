/* What each key does in corral top. Moving, sorting, filtering and the
 * prompts change the state here; what needs corral (a restart, following
 * output) comes back as an action for the caller, which owns the socket. */
#pragma once

#include "cli/top/top_state.h"

enum top_action {
	TOP_ACTION_NONE,
	TOP_ACTION_QUIT,
	TOP_ACTION_REDRAW,   /* ^L: write every row again */
	TOP_ACTION_RESTART,  /* the selected task (a group: all its tasks) */
	TOP_ACTION_STOP,     /* the selected task */
	TOP_ACTION_START,    /* the selected task */
	TOP_ACTION_SIGNAL,   /* the selected task, state->input the signal */
	TOP_ACTION_FOLLOW,   /* open the pane on the selected line's output */
	TOP_ACTION_UNFOLLOW, /* close the pane */
};

/* Applies `key` (top_keys.h) to `state`, whose list shows `height` rows
 * (a page). */
enum top_action top_input_key(struct top_state *state, int key, int height);

/* The keys line at the bottom, for a screen `columns` wide. */
const char *top_input_hint(const struct top_state *state, int columns);
