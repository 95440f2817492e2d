/* corral top's sorting, filtering, keys and selection on canned replies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/top/top_input.h"
#include "cli/top/top_keys.h"
#include "cli/top/top_state.h"
#include "cli/top/top_view.h"
#include "top_replies.h"

/* The lines as "web" (a group) or "web/app" (a task), joined by spaces. */
static void lines_text(const struct top_model *model, const struct top_lines *lines, char *out,
		       size_t size)
{
	out[0] = '\0';
	for (size_t l = 0; l < lines->count; l++) {
		const struct top_line *line = &lines->lines[l];
		snprintf(out + strlen(out), size - strlen(out), "%s%s", l ? " " : "",
			 line->is_group ? model->groups[line->index].name
					: model->tasks[line->index].target);
	}
}

static void assert_lines(const struct top_model *model, enum top_sort sort, bool reverse,
			 const char *filter, const char *expected)
{
	struct top_lines lines = {0};
	char text[256];
	top_view_lines(model, sort, reverse, filter, &lines);
	lines_text(model, &lines, text, sizeof(text));
	assert_string_equal(text, expected);
	top_lines_free(&lines);
}

static void test_sorts(void **unused)
{
	struct top_model first, model;
	top_model_from(&first, TOP_REPLY(1000000), 5000, NULL);
	top_model_from(&model, TOP_REPLY(1250000), 6000, &first);
	assert_lines(&model, TOP_SORT_CONFIG, false, NULL, "web web/app web/worker db db/store");
	assert_lines(&model, TOP_SORT_NAME, false, NULL, "db/store web/app web/worker");
	assert_lines(&model, TOP_SORT_NAME, true, NULL, "web/worker web/app db/store");
	/* Largest first; no figure (db/store) last. */
	assert_lines(&model, TOP_SORT_CPU, false, NULL, "web/app web/worker db/store");
	assert_lines(&model, TOP_SORT_MEMORY, false, NULL, "web/worker web/app db/store");
	assert_lines(&model, TOP_SORT_RESTARTS, false, NULL, "web/worker web/app db/store");
	assert_string_equal(top_sort_name(TOP_SORT_RESTARTS), "restarts");
	top_model_free(&first);
	top_model_free(&model);
}

static void test_filter(void **unused)
{
	struct top_model model;
	top_model_from(&model, TOP_REPLY(1000000), 5000, NULL);
	/* By name, in any case; a group line only with a task under it. */
	assert_lines(&model, TOP_SORT_CONFIG, false, "WORK", "web web/worker");
	/* By state. */
	assert_lines(&model, TOP_SORT_CONFIG, false, "dead", "db db/store");
	assert_lines(&model, TOP_SORT_NAME, false, "web/", "web/app web/worker");
	assert_lines(&model, TOP_SORT_CONFIG, false, "nothing", "");
	top_model_free(&model);
}

static void press(struct top_state *state, const char *keys)
{
	for (size_t at = 0, length = strlen(keys); at < length;) {
		int key;
		at += top_key_decode(keys + at, length - at, &key);
		assert_int_equal(top_input_key(state, key, 10), TOP_ACTION_NONE);
	}
}

/* The selection stays on its task through sorts, filters and a new reply
 * that moves it. */
static void test_selection_follows_its_task(void **unused)
{
	struct top_state state = {0};
	struct top_model model;
	top_model_from(&model, TOP_REPLY(1000000), 5000, NULL);
	top_state_set_model(&state, &model);
	press(&state, "jj"); /* web, web/app, web/worker */
	assert_string_equal(top_state_selected_target(&state), "web/worker");
	press(&state, "M"); /* by memory: worker first */
	assert_int_equal(state.selected, 0);
	assert_string_equal(top_state_selected_target(&state), "web/worker");
	press(&state, "/sto");
	assert_int_equal(state.mode, TOP_MODE_FILTER);
	assert_string_equal(state.filter, "sto");
	assert_string_equal(top_state_selected_target(&state), "db/store");
	press(&state, "\033"); /* Esc while typing: the filter before */
	assert_string_equal(state.filter, "");
	assert_string_equal(top_state_selected_target(&state), "db/store");
	top_model_from(&model, TOP_REPLY(1100000), 6000, &state.model);
	top_state_set_model(&state, &model);
	assert_string_equal(top_state_selected_target(&state), "db/store");
	/* Home, End and the arrows as the terminal sends them. */
	press(&state, "\033[H");
	assert_int_equal(state.selected, 0);
	press(&state, "\033[F");
	assert_int_equal(state.selected, 2);
	press(&state, "\033[A\033OA");
	assert_int_equal(state.selected, 0);
	press(&state, "\033[6~");
	assert_int_equal(state.selected, 2);
	top_state_free(&state);
}

static void test_actions(void **unused)
{
	struct top_state state = {0};
	struct top_model model;
	top_model_from(&model, TOP_REPLY(1000000), 5000, NULL);
	top_state_set_model(&state, &model);
	assert_int_equal(top_input_key(&state, 'r', 10), TOP_ACTION_RESTART);
	assert_int_equal(top_input_key(&state, 's', 10), TOP_ACTION_STOP);
	assert_int_equal(top_input_key(&state, 'S', 10), TOP_ACTION_START);
	assert_int_equal(top_input_key(&state, 'l', 10), TOP_ACTION_FOLLOW);
	/* Following the selected line, Enter closes the pane; on another
	 * line, or once the stream ended, it follows the selected one. */
	top_pane_open(&state.pane, top_state_selected_target(&state));
	assert_int_equal(top_input_key(&state, '\r', 10), TOP_ACTION_UNFOLLOW);
	top_pane_set_ended(&state.pane, "corral closed the stream");
	assert_int_equal(top_input_key(&state, '\r', 10), TOP_ACTION_FOLLOW);
	top_pane_open(&state.pane, top_state_selected_target(&state));
	press(&state, "j");
	assert_int_equal(top_input_key(&state, 'l', 10), TOP_ACTION_FOLLOW);
	assert_int_equal(top_input_key(&state, 'q', 10), TOP_ACTION_QUIT);
	assert_int_equal(top_input_key(&state, 3, 10), TOP_ACTION_QUIT); /* ^C */
	/* K asks for a signal, TERM offered; typed over, sent with Enter. */
	assert_int_equal(top_input_key(&state, 'K', 10), TOP_ACTION_NONE);
	assert_string_equal(state.input, "TERM");
	press(&state, "\177\177\177\177HUP");
	assert_int_equal(top_input_key(&state, '\r', 10), TOP_ACTION_SIGNAL);
	assert_string_equal(state.input, "HUP");
	assert_int_equal(state.mode, TOP_MODE_NORMAL);
	top_state_free(&state);
}

static void test_key_decoding(void **unused)
{
	int key;
	assert_int_equal(top_key_decode("q", 1, &key), 1);
	assert_int_equal(key, 'q');
	assert_int_equal(top_key_decode("\033", 1, &key), 1);
	assert_int_equal(key, TOP_KEY_ESCAPE);
	assert_int_equal(top_key_decode("\033[5~x", 5, &key), 4);
	assert_int_equal(key, TOP_KEY_PAGE_UP);
	assert_int_equal(top_key_decode("\033[1;2B", 6, &key), 6); /* Shift+Down */
	assert_int_equal(key, TOP_KEY_DOWN);
	assert_int_equal(top_key_decode("\033[4~", 4, &key), 4);
	assert_int_equal(key, TOP_KEY_END);
	assert_int_equal(top_key_decode("\033[200~", 6, &key), 6); /* bracketed paste */
	assert_int_equal(key, TOP_KEY_NONE);
	assert_int_equal(top_key_decode("\033j", 2, &key), 1); /* Esc, then j */
	assert_int_equal(key, TOP_KEY_ESCAPE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sorts),
	    cmocka_unit_test(test_filter),
	    cmocka_unit_test(test_selection_follows_its_task),
	    cmocka_unit_test(test_actions),
	    cmocka_unit_test(test_key_decoding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
