/* A unit's command lines (systemd.service(5), "Command lines"): ExecStart=
 * with its prefixes, ExecStartPre=/Post= and ExecStopPost= as one-shot
 * tasks, ExecStop= as a prekill hook, ExecReload= as `corral signal`. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/text_buffer.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "cli/import/import_names.h"
#include "cli/import/import_systemd.h"
#include "cli/import/shell_words.h"
#include "cli/import/systemd_values.h"
#include "cli/import/systemd_words.h"

/* One Exec*= line: its prefixes (systemd.service(5), table "Special
 * executable prefixes") and its words. */
struct exec_line {
	bool ignore_failure; /* - */
	bool argv0;          /* @: the second word is argv[0] */
	bool literal;        /* : no $VARIABLE expansion */
	bool privileged;     /* + full privileges: no sandbox, no User= */
	bool keep_root;      /* ! or !!: the sandbox, without User= */
	char **argv;
	bool expands; /* a $NAME or ${NAME} to expand from the environment */
};

static bool word_expands(const char *word)
{
	for (const char *p = strchr(word, '$'); p; p = strchr(p + 1, '$'))
		if (p[1] == '{' || isalpha((unsigned char)p[1]) || p[1] == '_')
			return true;
	return false;
}

static int exec_parse(struct systemd_unit *unit, const struct unit_setting *setting,
		      struct exec_line *line)
{
	memset(line, 0, sizeof(*line));
	char *value = unit_value(unit, setting);
	const char *p = value;
	for (;; p++) {
		if (*p == '-')
			line->ignore_failure = true;
		else if (*p == '@')
			line->argv0 = true;
		else if (*p == ':')
			line->literal = true;
		else if (*p == '+')
			line->privileged = true;
		else if (*p == '!')
			line->keep_root = true;
		else
			break;
	}
	const char *why = NULL;
	line->argv = systemd_words(p, &why);
	free(value);
	if (!line->argv || !line->argv[0]) {
		unit_drop(unit, setting, "%s", why ? why : "no command");
		string_vector_free(line->argv);
		line->argv = NULL;
		return -1;
	}
	if (line->argv0) {
		if (line->argv[1]) {
			unit_drop(unit, setting,
				  "the @ prefix gives the program the argv[0] \"%s\"; corral runs "
				  "it with its path as argv[0]",
				  line->argv[1]);
			free(line->argv[1]);
			memmove(&line->argv[1], &line->argv[2],
				sizeof(char *) * (string_vector_length(&line->argv[2]) + 1));
		}
	}
	for (size_t i = 0; line->argv[i] && !line->literal; i++)
		if (word_expands(line->argv[i]))
			line->expands = true;
	return 0;
}

static void exec_free(struct exec_line *line)
{
	string_vector_free(line->argv);
	line->argv = NULL;
}

/* The command of one line: its words, or a shell that expands the
 * environment as systemd does ($NAME split into words, ${NAME} one word)
 * and, for `or_success`, ignores its failure. */
static struct ytree_node *command_node(const struct exec_line *line, bool or_success)
{
	if (!line->expands && !or_success)
		return ytree_string_list(line->argv);
	struct text_buffer script;
	text_buffer_init(&script, 128);
	if (!or_success)
		text_buffer_put_literal(&script, "exec ");
	shell_words_put(&script, line->argv, line->expands);
	if (or_success)
		text_buffer_put_literal(&script, " || exit 0");
	text_buffer_put_char(&script, '\0');
	size_t length;
	char *text = text_buffer_take(&script, &length, NULL);
	struct ytree_node *command = ytree_list();
	ytree_append(command, ytree_string("/bin/sh"));
	ytree_append(command, ytree_string("-c"));
	ytree_append(command, ytree_string(text));
	free(text);
	return command;
}

static void comment_expansion(struct ytree_node *task, const struct exec_line *line)
{
	if (line->expands)
		ytree_comment(task, "command",
			      "$VARIABLES are expanded by /bin/sh from the task's environment, as "
			      "systemd expands them");
}

/* A one-shot task of the unit's group for an ExecStartPre=, ExecStartPost=
 * or ExecStopPost= line. */
static void add_helper_task(struct systemd_unit *unit, const struct unit_setting *setting,
			    const char *stage, const char *base, size_t number)
{
	struct exec_line line;
	if (exec_parse(unit, setting, &line) < 0)
		return;
	char *name = number > 1 ? xasprintf("%s-%zu", base, number) : xstrdup(base);
	struct ytree_node *task = ytree_set(systemd_tasks(unit), name, ytree_map());
	ytree_comment(systemd_tasks(unit), name, "%s (%s:%u)", setting_text(setting), setting->file,
		      setting->line);
	ytree_set(task, "command", command_node(&line, line.ignore_failure));
	comment_expansion(task, &line);
	if (line.ignore_failure)
		ytree_comment(task, "command",
			      "the - prefix: a failure is ignored, as systemd does");
	struct ytree_node *lifecycle = ytree_set(task, "lifecycle", ytree_map());
	lifecycle->flow = true;
	ytree_set(lifecycle, "hook", ytree_plain(stage));
	if (unit->user && !line.privileged && !line.keep_root)
		ytree_set(task, "user",
			  unit->group_name ? ytree_plainf("\"%s:%s\"", unit->user, unit->group_name)
					   : ytree_string(unit->user));
	if (line.privileged || line.keep_root)
		ytree_comment(task, "command", "the %s prefix: runs as root%s",
			      line.privileged ? "+" : "!",
			      line.privileged ? ", without the unit's sandbox" : "");
	unit->helpers =
	    xreallocarray(unit->helpers, unit->helper_count + 1, sizeof(*unit->helpers));
	unit->helpers[unit->helper_count++] =
	    (struct systemd_helper){.name = xstrdup(name), .privileged = line.privileged};
	free(name);
	exec_free(&line);
}

void import_helpers(struct systemd_unit *unit, const char *key, const char *stage, const char *base,
		    const char *note)
{
	size_t count;
	struct unit_setting **lines = unit_list(&unit->file, "Service", key, &count);
	for (size_t i = 0; i < count; i++)
		add_helper_task(unit, lines[i], stage, base, i + 1);
	if (count && note) {
		char *last = count > 1 ? xasprintf("%s-%zu", base, count) : xstrdup(base);
		ytree_comment(systemd_tasks(unit), last, "%s", note);
		free(last);
	}
	free(lines);
}

void import_exec_start(struct systemd_unit *unit)
{
	size_t count;
	struct unit_setting **lines = unit_list(&unit->file, "Service", "ExecStart", &count);
	if (!count) {
		import_error(unit->report, unit->file.path, 0,
			     "%s has no ExecStart=: there is nothing to run", unit->file.name);
		free(lines);
		return;
	}
	if (count > 1 && !unit->oneshot) {
		for (size_t i = 1; i < count; i++)
			unit_drop(unit, lines[i],
				  "only Type=oneshot units may have several ExecStart= lines");
		count = 1;
	}
	if (count == 1) {
		struct exec_line line;
		if (exec_parse(unit, lines[0], &line) == 0) {
			ytree_set(unit->task, "command", command_node(&line, false));
			comment_expansion(unit->task, &line);
			unit->privileged_main = line.privileged;
			if (line.ignore_failure) {
				struct ytree_node *restart = ytree_child_map(unit->task, "restart");
				struct ytree_node *codes =
				    ytree_set(restart, "success_exit", ytree_list());
				for (int code = 1; code <= 255; code++)
					ytree_append(codes, ytree_plainf("%d", code));
				ytree_comment(restart, "success_exit",
					      "ExecStart=-: every exit code counts as success");
			}
			if (line.privileged || line.keep_root)
				ytree_comment(unit->task, "command", "ExecStart=%s: runs as root%s",
					      line.privileged ? "+" : "!",
					      line.privileged ? ", without the unit's sandbox"
							      : "");
			exec_free(&line);
		}
		free(lines);
		return;
	}
	/* A oneshot's lines run one after the other; the first failure
	 * (unless -) ends the run, as systemd runs them. */
	struct text_buffer script;
	text_buffer_init(&script, 256);
	text_buffer_put_literal(&script, "set -e");
	for (size_t i = 0; i < count; i++) {
		struct exec_line line;
		if (exec_parse(unit, lines[i], &line) < 0)
			continue;
		text_buffer_put_literal(&script, "; ");
		shell_words_put(&script, line.argv, line.expands);
		if (line.ignore_failure)
			text_buffer_put_literal(&script, " || true");
		exec_free(&line);
	}
	text_buffer_put_char(&script, '\0');
	size_t length;
	char *text = text_buffer_take(&script, &length, NULL);
	struct ytree_node *command = ytree_set(unit->task, "command", ytree_list());
	ytree_append(command, ytree_string("/bin/sh"));
	ytree_append(command, ytree_string("-c"));
	ytree_append(command, ytree_string(text));
	ytree_comment(unit->task, "command", "the %zu ExecStart= lines, one after the other",
		      count);
	free(text);
	free(lines);
}

/* ExecStop=: a prekill hook, run before the kill signal as systemd runs it,
 * with $MAINPID read from the hook's request. */
void import_exec_stop(struct systemd_unit *unit)
{
	size_t count;
	struct unit_setting **lines = unit_list(&unit->file, "Service", "ExecStop", &count);
	for (size_t i = 0; i < count; i++) {
		struct exec_line line;
		if (exec_parse(unit, lines[i], &line) < 0)
			continue;
		struct text_buffer script;
		text_buffer_init(&script, 256);
		/* The request is JSON on stdin; the response is stdout, so the
		 * command's own output goes to stderr (the task's output). */
		text_buffer_put_literal(&script,
					"MAINPID=$(sed -n 's/.*\"pid\": *\\([0-9]*\\).*/\\1/p'); "
					"export MAINPID; ");
		shell_words_put(&script, line.argv, true);
		text_buffer_put_literal(&script, " >&2 </dev/null");
		if (line.ignore_failure)
			text_buffer_put_literal(&script, " || true");
		text_buffer_put_char(&script, '\0');
		size_t length;
		char *text = text_buffer_take(&script, &length, NULL);
		struct ytree_node *hooks = ytree_get(unit->task, "hooks");
		if (!hooks) {
			hooks = ytree_set(unit->task, "hooks", ytree_list());
			hooks->flow = false;
		}
		struct ytree_node *hook = ytree_map();
		ytree_append(hooks, hook);
		char *name = count > 1 ? xasprintf("exec-stop-%zu", i + 1) : xstrdup("exec-stop");
		ytree_set(hook, "name", ytree_string(name));
		ytree_set(hook, "stage", ytree_plain("prekill"));
		struct ytree_node *exec = ytree_set(hook, "exec", ytree_list());
		ytree_append(exec, ytree_string("/bin/sh"));
		ytree_append(exec, ytree_string("-c"));
		ytree_append(exec, ytree_string(text));
		ytree_comment(hook, "name",
			      "%s: runs before the kill signal, as corral's user (systemd: as the "
			      "unit's)",
			      setting_text(lines[i]));
		free(name);
		free(text);
		exec_free(&line);
	}
	free(lines);
}

/* ExecReload=: corral reloads a task by signal. `kill -HUP $MAINPID` is
 * `corral signal`; anything else has no equivalent. */
void import_exec_reload(struct systemd_unit *unit)
{
	size_t count;
	struct unit_setting **lines = unit_list(&unit->file, "Service", "ExecReload", &count);
	for (size_t i = 0; i < count; i++) {
		struct exec_line line;
		if (exec_parse(unit, lines[i], &line) < 0)
			continue;
		size_t words = string_vector_length(line.argv);
		const char *program = strrchr(line.argv[0], '/');
		program = program ? program + 1 : line.argv[0];
		if (strcmp(program, "kill") == 0 && words == 3 && line.argv[1][0] == '-' &&
		    (strcmp(line.argv[2], "$MAINPID") == 0 ||
		     strcmp(line.argv[2], "${MAINPID}") == 0)) {
			const char *signal = line.argv[1] + 1;
			if (strncmp(signal, "s ", 2) == 0)
				signal += 2;
			ytree_comment(unit->group, "tasks",
				      "%s: reload with `corral signal %s/%s %s%s`",
				      setting_text(lines[i]), unit->name, unit->name,
				      strncasecmp(signal, "SIG", 3) == 0 ? "" : "SIG", signal);
		} else {
			unit_drop(
			    unit, lines[i],
			    "corral has no reload command for a task: run it with `corral exec "
			    "%s/%s -- ...`, or send a signal with `corral signal`",
			    unit->name, unit->name);
		}
		exec_free(&line);
	}
	free(lines);
}
