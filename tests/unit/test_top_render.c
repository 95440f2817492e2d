/* corral top drawn into a screen buffer at 80x24 from canned replies, and
 * the bytes that bring the terminal from one screen to the next. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/top/top_render.h"
#include "top_replies.h"

/* Row `row` of `screen` as a string, trailing blanks cut. */
static const char *row_text(const struct top_screen *screen, int row)
{
	static char text[512];
	int length = screen->columns;
	memcpy(text, top_screen_row(screen, row), (size_t)length);
	while (length > 0 && text[length - 1] == ' ')
		length--;
	text[length] = '\0';
	return text;
}

static void state_with_two_replies(struct top_state *state)
{
	struct top_model model;
	*state = (struct top_state){0};
	top_model_from(&model, TOP_REPLY(1000000), 5000, NULL);
	top_state_set_model(state, &model);
	top_model_from(&model, TOP_REPLY(1250000), 6000, &state->model);
	top_state_set_model(state, &model);
}

static void test_80x24(void **unused)
{
	struct top_state state;
	struct top_screen screen;
	state_with_two_replies(&state);
	top_screen_init(&screen, 24, 80);
	top_render(&state, &screen);
	assert_string_equal(row_text(&screen, 0),
			    "3 tasks, 2 running, 1 dead  sort config               "
			    "corral 0.1.0 pid 1 up 1h2m");
	assert_int_equal(screen.attr[79], TOP_DIM);
	assert_string_equal(row_text(&screen, 1), "TASK         STATE    READY HEALTH   "
						  "RESTARTS  CPU%     MEM UPTIME     NEXT");
	assert_string_equal(row_text(&screen, 2), "web  group running");
	assert_string_equal(row_text(&screen, 3), "  app        running  yes   fail 2/3        "
						  "1  25.0   10.0M   1m1s        -");
	assert_string_equal(row_text(&screen, 4), "  worker     running  yes   fail 2/3        "
						  "8   0.0  300.0M   1m1s        -");
	assert_string_equal(row_text(&screen, 5), "db  group main, stopping");
	assert_string_equal(row_text(&screen, 6), "  store      dead     -     -               "
						  "0     -       -      -       2s");
	assert_string_equal(row_text(&screen, 7), "");
	assert_string_equal(row_text(&screen, 23),
			    "q quit / filter o sort l output r restart s stop S start K signal");
	/* The titles, the selected line and the keys line stand out. */
	assert_int_equal(screen.attr[1 * 80], TOP_REVERSE);
	assert_int_equal(screen.attr[2 * 80 + 79], TOP_REVERSE); /* web, selected */
	assert_int_equal(screen.attr[3 * 80], TOP_PLAIN);
	assert_int_equal(screen.attr[23 * 80], TOP_REVERSE);
	top_screen_free(&screen);
	top_state_free(&state);
}

/* With the pane open, the list keeps half the rows and the pane shows its
 * newest lines. */
static void test_pane(void **unused)
{
	struct top_state state;
	struct top_screen screen;
	state_with_two_replies(&state);
	top_pane_open(&state.pane, "web/app");
	for (int i = 1; i <= 30; i++) {
		char line[32];
		snprintf(line, sizeof(line), "tick\t%d", i);
		top_pane_add(&state.pane, line, strlen(line));
	}
	top_screen_init(&screen, 24, 80);
	top_render(&state, &screen);
	int height = top_state_list_height(&state, 24, 80);
	assert_int_equal(height, 10);
	assert_string_equal(row_text(&screen, 12), "output of web/app  (Esc: close)");
	assert_string_equal(row_text(&screen, 13), "tick    22");
	assert_string_equal(row_text(&screen, 21), "tick    30");
	top_screen_free(&screen);
	top_state_free(&state);
}

/* The pane keeps the newest TOP_PANE_LINES lines. */
static void test_pane_keeps_the_newest_lines(void **unused)
{
	struct top_pane pane = {0};
	top_pane_open(&pane, "web/app");
	for (int i = 1; i <= TOP_PANE_LINES + 44; i++) {
		char line[32];
		snprintf(line, sizeof(line), "line %d", i);
		top_pane_add(&pane, line, strlen(line));
	}
	assert_int_equal(pane.count, TOP_PANE_LINES);
	assert_string_equal(top_pane_line(&pane, 0), "line 45");
	assert_string_equal(top_pane_line(&pane, TOP_PANE_LINES - 1), "line 300");
	assert_null(top_pane_line(&pane, TOP_PANE_LINES));
	/* A NUL in a line (corral sends \u0000) shows as '?'. */
	top_pane_add(&pane, "a\0b", 3);
	assert_string_equal(top_pane_line(&pane, TOP_PANE_LINES - 1), "a?b");
	top_pane_close(&pane);
	assert_false(top_pane_is_open(&pane));
}

/* A message longer than a row goes on over a second, taken from the
 * list. */
static void test_long_message(void **unused)
{
	struct top_state state;
	struct top_screen screen;
	state_with_two_replies(&state);
	top_state_say(&state, true, "%s",
		      "db/store is dead (killed by SIGTERM, stopped by corral): only a running "
		      "task can be restarted; use restart --force to run it again");
	top_screen_init(&screen, 24, 80);
	top_render(&state, &screen);
	assert_int_equal(top_state_list_height(&state, 24, 80), 19);
	assert_string_equal(row_text(&screen, 21), "db/store is dead (killed by SIGTERM, stopped "
						   "by corral): only a running task can");
	assert_string_equal(row_text(&screen, 22),
			    " be restarted; use restart --force to run it again");
	assert_int_equal(screen.attr[22 * 80], TOP_BOLD);
	top_screen_free(&screen);
	top_state_free(&state);
}

/* 1000 tasks in 20 rows: the selection moved to the end scrolls the list,
 * the position shows at the end of the keys line. */
static void test_scrolls_to_the_selection(void **unused)
{
	size_t size = 64 + 1000 * 400;
	char *text = malloc(size);
	size_t length =
	    (size_t)snprintf(text, size, "{\"groups\": [{\"name\": \"g\", \"tasks\": [");
	for (int t = 0; t < 1000; t++)
		length += (size_t)snprintf(text + length, size - length,
					   "%s{\"task\": \"g/t%04d\", \"state\": \"running\"}",
					   t ? ", " : "", t);
	snprintf(text + length, size - length, "]}]}");
	struct top_state state = {0};
	struct top_model model;
	top_model_from(&model, text, 0, NULL);
	top_state_set_model(&state, &model);
	state.selected = state.lines.count - 1; /* End */
	struct top_screen screen;
	top_screen_init(&screen, 24, 80);
	top_render(&state, &screen);
	assert_string_equal(row_text(&screen, 23), "q quit / filter o sort l output r restart s "
						   "stop S start K signal      1001/1001");
	assert_string_equal(row_text(&screen, 1), "TASK         STATE    READY HEALTH   "
						  "RESTARTS  CPU%     MEM UPTIME     NEXT");
	assert_true(strncmp(row_text(&screen, 21), "  t0999", 7) == 0);
	assert_true(strncmp(row_text(&screen, 2), "  t0980", 7) == 0);
	top_screen_free(&screen);
	top_state_free(&state);
	free(text);
}

/* Only the rows that changed are written, each from its first column. */
static void test_diff_writes_changed_rows(void **unused)
{
	struct top_screen old, new;
	struct top_output output = {0};
	top_screen_init(&old, 3, 10);
	top_screen_init(&new, 3, 10);
	top_screen_put(&new, 1, 2, -1, "hi\tthere", TOP_PLAIN);
	assert_int_equal(top_screen_diff(&old, &new, &output), 1);
	top_output_append(&output, "", 1);
	assert_string_equal(output.data, "\033[2;1H\033[0m  hi?there");
	output.length = 0;
	top_screen_put(&new, 2, 0, 2, "ab", TOP_REVERSE);
	/* No old screen (the first, or after a resize): every row. */
	assert_int_equal(top_screen_diff(NULL, &new, &output), 3);
	output.length = 0;
	assert_int_equal(top_screen_diff(&new, &new, &output), 0);
	assert_int_equal(output.length, 0);
	top_screen_diff(&old, &new, &output);
	top_output_append(&output, "", 1);
	assert_true(strstr(output.data, "\033[3;1H\033[0m\033[0;7mab\033[0m        ") != NULL);
	top_output_free(&output);
	top_screen_free(&old);
	top_screen_free(&new);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_80x24),
	    cmocka_unit_test(test_pane),
	    cmocka_unit_test(test_long_message),
	    cmocka_unit_test(test_pane_keeps_the_newest_lines),
	    cmocka_unit_test(test_scrolls_to_the_selection),
	    cmocka_unit_test(test_diff_writes_changed_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
