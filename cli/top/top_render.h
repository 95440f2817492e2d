/* Draws corral top's state into a screen buffer (top_screen.h): the
 * header, the column titles, the task list, the output pane, the status
 * line and the keys line. Pure: tested at 80x24 on canned replies. */
#pragma once

#include "cli/top/top_screen.h"
#include "cli/top/top_state.h"

/* Draws `state` into `screen` (cleared first); moves state->scroll so
 * that the selection shows. */
void top_render(struct top_state *state, struct top_screen *screen);
