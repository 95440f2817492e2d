/* corral import's readers of other tools' syntaxes: systemd's words,
 * specifiers and time spans, the shell quoting of expanded commands,
 * Python's %-formatting, shlex and key=value lists as supervisord applies
 * them, and systemd's syscall groups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/text_buffer.h"
#include "base/xmalloc.h"
#include "cli/import/python_text.h"
#include "cli/import/shell_words.h"
#include "cli/import/systemd_syscall_groups.h"
#include "cli/import/systemd_values.h"
#include "cli/import/systemd_words.h"
#include "cli/import/unit_file.h"
#include "cli/import/yaml_tree.h"

/* The words joined by '|', for one comparison. */
static char *joined(char **words)
{
	static char text[512];
	text[0] = '\0';
	for (size_t i = 0; words && words[i]; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%s", i ? "|" : "",
			 words[i]);
	string_vector_free(words);
	return text;
}

static void test_systemd_words_quotes_and_escapes(void **state)
{
	(void)state;
	const char *why = NULL;
	assert_string_equal(
	    joined(systemd_words("/bin/echo  \"a b\" 'c d'  e\\tf \"\\x41\\101\"", &why)),
	    "/bin/echo|a b|c d|e\tf|AA");
	assert_string_equal(joined(systemd_words("a\"b c\"d \\s", &why)), "ab cd| ");
	assert_null(systemd_words("\"open", &why));
	assert_string_equal(why, "unterminated quote");
}

static void test_systemd_timespans(void **state)
{
	(void)state;
	uint64_t ms;
	bool infinite;
	assert_int_equal(systemd_timespan_ms("90", &ms, &infinite), 0);
	assert_int_equal(ms, 90000);
	assert_int_equal(systemd_timespan_ms("1min 30s", &ms, &infinite), 0);
	assert_int_equal(ms, 90000);
	assert_int_equal(systemd_timespan_ms("2h5min", &ms, &infinite), 0);
	assert_int_equal(ms, 7500000);
	assert_int_equal(systemd_timespan_ms("100ms", &ms, &infinite), 0);
	assert_int_equal(ms, 100);
	assert_int_equal(systemd_timespan_ms("infinity", &ms, &infinite), 0);
	assert_true(infinite);
	assert_int_equal(systemd_timespan_ms("5 parsecs", &ms, &infinite), -1);
	/* what strtod() would take and systemd does not (fuzz_import_text) */
	assert_int_equal(systemd_timespan_ms("infinitys", &ms, &infinite), -1);
	assert_int_equal(systemd_timespan_ms("1e400s", &ms, &infinite), -1);
	assert_int_equal(systemd_timespan_ms("1.5s", &ms, &infinite), 0);
	assert_int_equal(ms, 1500);
	uint64_t bytes;
	assert_int_equal(systemd_size_bytes("512M", &bytes, &infinite), 0);
	assert_int_equal(bytes, 512ULL << 20);
	assert_int_equal(systemd_size_bytes("50%", &bytes, &infinite), -1);
	assert_int_equal(systemd_size_bytes("99999999999999999999G", &bytes, &infinite), -1);
}

static void test_specifiers_of_an_instance(void **state)
{
	(void)state;
	struct unit_file unit = {.name = "app@web-1.service", .prefix = "app", .instance = "web-1"};
	char unknown[8];
	char *value =
	    unit_specifiers(&unit, "%n %N %p %i %I %t/%i %% %m", NULL, unknown, sizeof(unknown));
	assert_string_equal(value, "app@web-1.service app@web-1 app web-1 web/1 /run/web-1 % %m");
	assert_string_equal(unknown, "%m");
	free(value);
}

static char *shell(char **words, bool expand)
{
	static char text[512];
	struct text_buffer out;
	text_buffer_init(&out, 64);
	shell_words_put(&out, words, expand);
	snprintf(text, sizeof(text), "%.*s", (int)out.length, out.text);
	free(out.text);
	return text;
}

static void test_shell_words_expand_as_systemd(void **state)
{
	(void)state;
	char *words[] = {"/bin/prog", "$ARGS", "--conf=${CONF}", "it's", "$$HOME", "", NULL};
	assert_string_equal(shell(words, true),
			    "'/bin/prog' $ARGS '--conf='\"${CONF}\" 'it'\\''s' '$HOME' ''");
	assert_string_equal(shell(words, false),
			    "'/bin/prog' '$ARGS' '--conf=${CONF}' 'it'\\''s' '$$HOME' ''");
}

static void test_python_expansions(void **state)
{
	(void)state;
	struct python_name names[] = {{"program_name", "web", false},
				      {"process_num", "7", true},
				      {"ENV_HOME", "/root", false}};
	char missing[64];
	char *text = python_expand("%(program_name)s_%(process_num)02d %(ENV_HOME)s 100%%", names,
				   3, missing, sizeof(missing));
	assert_string_equal(text, "web_07 /root 100%");
	free(text);
	assert_null(python_expand("%(nope)s", names, 3, missing, sizeof(missing)));
	assert_string_equal(missing, "%(nope)s");
	assert_null(python_expand("%(program_name)d", names, 3, missing, sizeof(missing)));
}

static void test_python_shlex(void **state)
{
	(void)state;
	const char *why = NULL;
	assert_string_equal(
	    joined(python_shlex_split("sh -c 'echo \"a b\"' x\\ y \"q\\\"z\"", &why)),
	    "sh|-c|echo \"a b\"|x y|q\"z");
	assert_null(python_shlex_split("echo 'open", &why));
}

static char pairs[256];

static void add_pair(void *context, const char *key, const char *value)
{
	(void)context;
	snprintf(pairs + strlen(pairs), sizeof(pairs) - strlen(pairs), "[%s=%s]", key, value);
}

static void test_supervisord_environment_lists(void **state)
{
	(void)state;
	const char *why = NULL;
	pairs[0] = '\0';
	assert_int_equal(python_key_value_pairs("A=\"1\",B=2, C='x, y',PATH=/usr/bin:/bin",
						add_pair, NULL, &why),
			 0);
	assert_string_equal(pairs, "[A=1][B=2][C=x, y][PATH=/usr/bin:/bin]");
	pairs[0] = '\0';
	assert_int_equal(python_key_value_pairs("A=1,B", add_pair, NULL, &why), -1);
}

static void test_syscall_groups_nest_and_subtract(void **state)
{
	(void)state;
	struct syscall_set set = {0};
	assert_true(syscall_set_apply(&set, "@system-service", false));
	assert_true(syscall_set_has(&set, "read"));      /* @basic-io, nested */
	assert_true(syscall_set_has(&set, "setresuid")); /* @setuid */
	assert_false(syscall_set_has(&set, "mount"));
	assert_true(syscall_set_apply(&set, "@setuid", true));
	assert_false(syscall_set_has(&set, "setresuid"));
	assert_false(syscall_set_apply(&set, "@no-such-group", false));
	syscall_set_free(&set);
}

static void test_yaml_quotes_what_yaml_would_misread(void **state)
{
	(void)state;
	struct ytree_node *root = ytree_map();
	struct ytree_node *list = ytree_set(root, "values", ytree_list());
	const char *values[] = {"plain", "yes", "0007", "-c", "a: b", "", "x#y", "@z", NULL};
	for (size_t i = 0; values[i]; i++)
		ytree_append(list, ytree_string(values[i]));
	ytree_comment(root, "values", "a comment");
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	ytree_write(root, out);
	fclose(out);
	assert_string_equal(
	    text, "# a comment\nvalues: [plain, \"yes\", \"0007\", \"-c\", \"a: b\", \"\", "
		  "\"x#y\", \"@z\"]\n");
	free(text);
	ytree_free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_systemd_words_quotes_and_escapes),
	    cmocka_unit_test(test_systemd_timespans),
	    cmocka_unit_test(test_specifiers_of_an_instance),
	    cmocka_unit_test(test_shell_words_expand_as_systemd),
	    cmocka_unit_test(test_python_expansions),
	    cmocka_unit_test(test_python_shlex),
	    cmocka_unit_test(test_supervisord_environment_lists),
	    cmocka_unit_test(test_syscall_groups_nest_and_subtract),
	    cmocka_unit_test(test_yaml_quotes_what_yaml_would_misread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
