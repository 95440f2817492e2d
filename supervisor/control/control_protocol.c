/* Control requests: one JSON line in, a validated struct out (and back, for
 * the CLI). Every refusal says what is wrong and where, because the person
 * reading it may have typed the request by hand with socat. */
#include "supervisor/control/control_protocol.h"
#include "base/blank.h"

#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_text.h"
#include "base/names.h"
#include "base/suggest.h"
#include "base/units.h"
#include "config/model/config.h"
#include "config/yaml/diagnostics.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define KNOWN_COMMANDS                                                                             \
	"status, restart, stop, start, signal, logs, events, shutdown, reload, exec, inspect, "    \
	"scale, upgrade"
#define KNOWN_MODES "task, force, all, running, rolling"

/* What a command's target must be. */
enum target_kind {
	TARGET_NONE,
	TARGET_ANY, /* none, a group or a task */
	TARGET_TASK,
	TARGET_GROUP,
};

/* The optional fields, as bits, so that each command can list its own. */
enum field_bit {
	FIELD_TARGET = 1u << 0,
	FIELD_MODE = 1u << 1,
	FIELD_SIGNAL = 1u << 2,
	FIELD_FOLLOW = 1u << 3,
	FIELD_TAIL = 1u << 4,
	FIELD_PATH = 1u << 5,
	FIELD_DRY_RUN = 1u << 6,
	FIELD_RERUN_COMPLETED = 1u << 7,
	FIELD_ARGV = 1u << 8,
	FIELD_ENV = 1u << 9,
	FIELD_USER = 1u << 10,
	FIELD_CWD = 1u << 11,
	FIELD_SHOW_SECRETS = 1u << 12,
	FIELD_STDIN = 1u << 13,
	FIELD_TTY = 1u << 14,
	FIELD_WINDOW = 1u << 15, /* rows and columns */
	FIELD_MAX_UNAVAILABLE = 1u << 16,
	FIELD_COUNTS = 1u << 17,
};

struct command_info {
	const char *name;
	enum target_kind target; /* for restart: of mode task; see target_kind_of() */
	unsigned fields;
};

static const struct command_info commands[CONTROL_COMMAND_COUNT] = {
    [CONTROL_STATUS] = {"status", TARGET_ANY, FIELD_TARGET},
    [CONTROL_RESTART] = {"restart", TARGET_TASK, FIELD_TARGET | FIELD_MODE | FIELD_MAX_UNAVAILABLE},
    [CONTROL_STOP] = {"stop", TARGET_TASK, FIELD_TARGET},
    [CONTROL_START] = {"start", TARGET_TASK, FIELD_TARGET},
    [CONTROL_SIGNAL] = {"signal", TARGET_TASK, FIELD_TARGET | FIELD_SIGNAL},
    [CONTROL_LOGS] = {"logs", TARGET_ANY, FIELD_TARGET | FIELD_FOLLOW | FIELD_TAIL},
    [CONTROL_EVENTS] = {"events", TARGET_NONE, FIELD_FOLLOW | FIELD_TAIL},
    [CONTROL_SHUTDOWN] = {"shutdown", TARGET_NONE, 0},
    [CONTROL_RELOAD] = {"reload", TARGET_NONE, FIELD_PATH | FIELD_DRY_RUN | FIELD_RERUN_COMPLETED},
    [CONTROL_EXEC] = {"exec", TARGET_TASK,
		      FIELD_TARGET | FIELD_ARGV | FIELD_ENV | FIELD_USER | FIELD_CWD | FIELD_STDIN |
			  FIELD_TTY | FIELD_WINDOW},
    [CONTROL_INSPECT] = {"inspect", TARGET_TASK, FIELD_TARGET | FIELD_SHOW_SECRETS},
    [CONTROL_SCALE] = {"scale", TARGET_NONE, FIELD_COUNTS},
    [CONTROL_UPGRADE] = {"upgrade", TARGET_NONE, FIELD_PATH},
};

struct field_info {
	const char *name;
	unsigned bit; /* 0: every command has it */
	const char *only_for;
};

static const struct field_info fields[] = {
    {"version", 0, NULL},
    {"command", 0, NULL},
    {"target", FIELD_TARGET, NULL}, /* refused as "... takes no target" */
    {"mode", FIELD_MODE, "restart"},
    {"signal", FIELD_SIGNAL, "signal"},
    {"follow", FIELD_FOLLOW, "logs and events"},
    {"tail", FIELD_TAIL, "logs and events"},
    {"path", FIELD_PATH, "reload and upgrade"},
    {"dry_run", FIELD_DRY_RUN, "reload"},
    {"rerun_completed", FIELD_RERUN_COMPLETED, "reload"},
    {"argv", FIELD_ARGV, "exec"},
    {"env", FIELD_ENV, "exec"},
    {"user", FIELD_USER, "exec"},
    {"cwd", FIELD_CWD, "exec"},
    {"show_secrets", FIELD_SHOW_SECRETS, "inspect"},
    {"stdin", FIELD_STDIN, "exec"},
    {"tty", FIELD_TTY, "exec"},
    {"rows", FIELD_WINDOW, "exec"},
    {"columns", FIELD_WINDOW, "exec"},
    {"max_unavailable", FIELD_MAX_UNAVAILABLE, "restart"},
    {"counts", FIELD_COUNTS, "scale"},
};

/* The same names, as suggest_nearest() takes them. */
static const char *const field_names[] = {
    "version", "command", "target", "mode",    "signal",
    "follow",  "tail",    "path",   "dry_run", "rerun_completed",
    "argv",    "env",     "user",   "cwd",     "show_secrets",
    "stdin",   "tty",     "rows",   "columns", "max_unavailable",
    "counts"};
_Static_assert(sizeof(field_names) / sizeof(field_names[0]) == sizeof(fields) / sizeof(fields[0]),
	       "every field has its name in field_names");

static const char *const restart_mode_names[] = {
    [CONTROL_RESTART_TASK] = "task",       [CONTROL_RESTART_FORCE] = "force",
    [CONTROL_RESTART_ALL] = "all",         [CONTROL_RESTART_RUNNING] = "running",
    [CONTROL_RESTART_ROLLING] = "rolling",
};

/* How messages name what was asked: the CLI's words, since that is where
 * most requests come from ("restart --all needs a group"). */
static const char *const restart_mode_phrases[] = {
    [CONTROL_RESTART_TASK] = "restart",
    [CONTROL_RESTART_FORCE] = "restart --force",
    [CONTROL_RESTART_ALL] = "restart --all",
    [CONTROL_RESTART_RUNNING] = "restart --running",
    [CONTROL_RESTART_ROLLING] = "restart --rolling",
};

__attribute__((format(printf, 3, 4))) static int refuse(char *error, size_t error_size,
							const char *format, ...)
{
	va_list arguments;

	if (error_size) {
		va_start(arguments, format);
		vsnprintf(error, error_size, format, arguments);
		va_end(arguments);
	}
	return -1;
}

const char *control_command_name(enum control_command command)
{
	return (unsigned)command < CONTROL_COMMAND_COUNT ? commands[command].name : "unknown";
}

unsigned control_command_right(enum control_command command)
{
	static const unsigned rights[] = {
	    [CONTROL_STATUS] = CONTROL_RIGHT_STATUS,   [CONTROL_RESTART] = CONTROL_RIGHT_RESTART,
	    [CONTROL_STOP] = CONTROL_RIGHT_STOP,       [CONTROL_START] = CONTROL_RIGHT_START,
	    [CONTROL_SIGNAL] = CONTROL_RIGHT_SIGNAL,   [CONTROL_LOGS] = CONTROL_RIGHT_LOGS,
	    [CONTROL_EVENTS] = CONTROL_RIGHT_EVENTS,   [CONTROL_SHUTDOWN] = CONTROL_RIGHT_SHUTDOWN,
	    [CONTROL_RELOAD] = CONTROL_RIGHT_RELOAD,   [CONTROL_EXEC] = CONTROL_RIGHT_EXEC,
	    [CONTROL_INSPECT] = CONTROL_RIGHT_INSPECT, [CONTROL_SCALE] = CONTROL_RIGHT_SCALE,
	    [CONTROL_UPGRADE] = CONTROL_RIGHT_UPGRADE,
	};
	return (unsigned)command < ARRAY_SIZE(rights) ? rights[command] : 0;
}

const char *control_restart_mode_name(enum control_restart_mode mode)
{
	return (unsigned)mode < ARRAY_SIZE(restart_mode_names) ? restart_mode_names[mode]
							       : "unknown";
}

static const char *request_phrase(const struct control_request *request)
{
	if (request->command == CONTROL_RESTART)
		return restart_mode_phrases[request->restart_mode];
	return commands[request->command].name;
}

static enum target_kind target_kind_of(const struct control_request *request)
{
	if (request->command == CONTROL_RESTART &&
	    (request->restart_mode == CONTROL_RESTART_ALL ||
	     request->restart_mode == CONTROL_RESTART_RUNNING))
		return TARGET_GROUP;
	return commands[request->command].target;
}

/* Checks "group" or "group/task"; *is_task tells which it was. */
static int check_target_shape(const char *target, size_t length, bool *is_task, char *error,
			      size_t error_size)
{
	const char *slash = memchr(target, '/', length);
	const char *problem;

	*is_task = slash != NULL;
	if (!slash) {
		problem = name_problem(target, length);
		if (problem)
			return refuse(error, error_size, "invalid target %s: the name %s",
				      quote(target, length).text, problem);
		return 0;
	}
	size_t group_length = (size_t)(slash - target);
	const char *task = slash + 1;
	size_t task_length = length - group_length - 1;

	if (memchr(task, '/', task_length))
		return refuse(error, error_size,
			      "invalid target %s: write \"group\" or \"group/task\", with one '/'",
			      quote(target, length).text);
	problem = name_problem(target, group_length);
	if (problem)
		return refuse(error, error_size, "invalid target %s: the group name %s",
			      quote(target, length).text, problem);
	/* An instance: "web@2" (config `instances:`). */
	const char *at = memchr(task, '@', task_length);
	size_t base_length = at ? (size_t)(at - task) : task_length;
	problem = name_problem(task, base_length);
	if (problem)
		return refuse(error, error_size, "invalid target %s: the task name %s",
			      quote(target, length).text, problem);
	if (at && (at + 1 == task + task_length ||
		   strspn(at + 1, "0123456789") < task_length - base_length - 1))
		return refuse(error, error_size,
			      "invalid target %s: an instance is TASK@NUMBER (web@0)",
			      quote(target, length).text);
	return 0;
}

static int check_target(const struct control_request *request, char *error, size_t error_size)
{
	const char *phrase = request_phrase(request);
	size_t length = strnlen(request->target, sizeof(request->target));
	enum target_kind kind = target_kind_of(request);
	bool is_task;

	if (length == sizeof(request->target))
		return refuse(error, error_size, "invalid target: longer than %d characters",
			      CONTROL_TARGET_MAX);
	if (length == 0) {
		if (kind == TARGET_TASK)
			return refuse(error, error_size, "%s needs a task (group/task)", phrase);
		if (kind == TARGET_GROUP)
			return refuse(error, error_size, "%s needs a group", phrase);
		return 0;
	}
	if (kind == TARGET_NONE)
		return refuse(error, error_size, "%s takes no target", phrase);
	if (check_target_shape(request->target, length, &is_task, error, error_size) < 0)
		return -1;
	if (kind == TARGET_TASK && !is_task)
		return refuse(error, error_size, "%s needs a task (group/task), not %s", phrase,
			      quote(request->target, length).text);
	if (kind == TARGET_GROUP && is_task)
		return refuse(error, error_size, "%s needs a group, not a task: %s", phrase,
			      quote(request->target, length).text);
	if (request->command == CONTROL_RESTART &&
	    request->restart_mode == CONTROL_RESTART_ROLLING && strchr(request->target, '@'))
		return refuse(error, error_size,
			      "%s replaces every instance of a task written with instances: name "
			      "the task (group/task), not one instance: %s",
			      phrase, quote(request->target, length).text);
	return 0;
}

/* scale's pairs: each a task (not one instance), each once, 0 to
 * TASK_INSTANCES_MAX instances. */
static int check_counts(const struct control_request *request, char *error, size_t error_size)
{
	if (request->command != CONTROL_SCALE)
		return 0;
	if (request->count_count == 0)
		return refuse(error, error_size, "scale needs GROUP/TASK=N, one or more");
	if (request->count_count > CONTROL_SCALE_MAX)
		return refuse(error, error_size, "scale takes at most %d GROUP/TASK=N at once",
			      CONTROL_SCALE_MAX);
	for (size_t i = 0; i < request->count_count; i++) {
		const struct control_scale_count *pair = &request->counts[i];
		size_t length = strnlen(pair->target, sizeof(pair->target));
		bool is_task;
		if (length == sizeof(pair->target))
			return refuse(error, error_size,
				      "invalid target: longer than %d characters",
				      CONTROL_TARGET_MAX);
		if (check_target_shape(pair->target, length, &is_task, error, error_size) < 0)
			return -1;
		if (!is_task || strchr(pair->target, '@'))
			return refuse(error, error_size,
				      "scale needs a task written with instances: (group/task), "
				      "not %s",
				      quote(pair->target, length).text);
		if (pair->count > TASK_INSTANCES_MAX)
			return refuse(error, error_size, "%s=%u: at most %d instances",
				      pair->target, pair->count, TASK_INSTANCES_MAX);
		for (size_t j = 0; j < i; j++)
			if (strcmp(request->counts[j].target, pair->target) == 0)
				return refuse(error, error_size, "%s is named twice", pair->target);
	}
	return 0;
}

int control_request_validate(const struct control_request *request, char *error, size_t error_size)
{
	if ((unsigned)request->command >= CONTROL_COMMAND_COUNT)
		return refuse(error, error_size, "unknown command number %d",
			      (int)request->command);
	if (request->command == CONTROL_RESTART &&
	    (unsigned)request->restart_mode >= ARRAY_SIZE(restart_mode_names))
		return refuse(error, error_size, "unknown restart mode number %d",
			      (int)request->restart_mode);
	if (check_target(request, error, error_size) < 0 ||
	    check_counts(request, error, error_size) < 0)
		return -1;
	if (request->max_unavailable && (request->command != CONTROL_RESTART ||
					 request->restart_mode != CONTROL_RESTART_ROLLING))
		return refuse(error, error_size,
			      "\"max_unavailable\" is only for restart --rolling");
	if (request->max_unavailable > TASK_INSTANCES_MAX)
		return refuse(error, error_size, "\"max_unavailable\" must be from 1 to %d",
			      TASK_INSTANCES_MAX);
	if (request->command == CONTROL_SIGNAL &&
	    strcmp(signal_name(request->signal_number), "SIG?") == 0)
		return refuse(error, error_size,
			      "signal needs a signal, such as \"SIGHUP\" or \"HUP\"");
	return 0;
}

/* Reading the JSON object. */

static int read_version(const json_t *object, char *error, size_t error_size)
{
	const json_t *version = json_object_get(object, "version");

	if (!version)
		return refuse(error, error_size, "missing \"version\" (this corral speaks %d)",
			      CONTROL_PROTOCOL_VERSION);
	if (!json_is_integer(version))
		return refuse(error, error_size, "\"version\" must be an integer, not %s",
			      json_kind(version));
	if (json_integer_value(version) != CONTROL_PROTOCOL_VERSION)
		return refuse(error, error_size,
			      "unsupported protocol version %" JSON_INTEGER_FORMAT
			      " (this corral speaks %d)",
			      json_integer_value(version), CONTROL_PROTOCOL_VERSION);
	return 0;
}

static int read_command(const json_t *object, enum control_command *command, char *error,
			size_t error_size)
{
	const json_t *value = json_object_get(object, "command");

	if (!value)
		return refuse(error, error_size, "missing \"command\"; known: " KNOWN_COMMANDS);
	if (!json_is_string(value))
		return refuse(error, error_size, "\"command\" must be a string, not %s",
			      json_kind(value));
	for (unsigned i = 0; i < CONTROL_COMMAND_COUNT; i++) {
		if (strcmp(json_string_value(value), commands[i].name) == 0 &&
		    json_string_length(value) == strlen(commands[i].name)) {
			*command = (enum control_command)i;
			return 0;
		}
	}
	return refuse(error, error_size, "unknown command %s; known: " KNOWN_COMMANDS,
		      quote(json_string_value(value), json_string_length(value)).text);
}

/* Every field must be known, and known to this command: a misspelt
 * "folow" silently ignored would be a stream that never follows. */
static int check_fields(const json_t *object, enum control_command command, char *error,
			size_t error_size)
{
	const char *key;
	const json_t *value;

	json_object_foreach((json_t *)object, key, value)
	{
		const struct field_info *field = NULL;

		for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
			if (strcmp(key, fields[i].name) == 0)
				field = &fields[i];
		if (!field) {
			const char *nearest =
			    suggest_nearest(key, strlen(key), field_names, ARRAY_SIZE(field_names));

			if (nearest)
				return refuse(error, error_size,
					      "unknown field %s; did you mean \"%s\"?",
					      quote(key, strlen(key)).text, nearest);
			return refuse(
			    error, error_size, "unknown field %s; known: %s",
			    quote(key, strlen(key)).text,
			    "version, command, target, mode, signal, follow, tail, path, "
			    "dry_run, rerun_completed, argv, env, user, cwd, show_secrets, "
			    "stdin, tty, rows, columns, max_unavailable, counts");
		}
		if (field->bit == 0 || (commands[command].fields & field->bit))
			continue;
		if (field->bit == FIELD_TARGET)
			return refuse(error, error_size, "%s takes no target",
				      commands[command].name);
		return refuse(error, error_size, "\"%s\" is only for %s", field->name,
			      field->only_for);
	}
	return 0;
}

static int read_target(const json_t *object, struct control_request *request, char *error,
		       size_t error_size)
{
	const json_t *value = json_object_get(object, "target");
	bool is_task;

	if (!value)
		return 0;
	if (!json_is_string(value))
		return refuse(error, error_size, "\"target\" must be a string, not %s",
			      json_kind(value));
	/* The shape first: it also bounds the length to what fits. */
	if (check_target_shape(json_string_value(value), json_string_length(value), &is_task, error,
			       error_size) < 0)
		return -1;
	memcpy(request->target, json_string_value(value), json_string_length(value) + 1);
	return 0;
}

static int read_mode(const json_t *object, struct control_request *request, char *error,
		     size_t error_size)
{
	const json_t *value = json_object_get(object, "mode");

	if (!value)
		return 0;
	if (!json_is_string(value))
		return refuse(error, error_size, "\"mode\" must be a string, not %s",
			      json_kind(value));
	for (size_t i = 0; i < ARRAY_SIZE(restart_mode_names); i++) {
		if (strcmp(json_string_value(value), restart_mode_names[i]) == 0 &&
		    json_string_length(value) == strlen(restart_mode_names[i])) {
			request->restart_mode = (enum control_restart_mode)i;
			return 0;
		}
	}
	return refuse(error, error_size, "unknown restart mode %s; known: " KNOWN_MODES,
		      quote(json_string_value(value), json_string_length(value)).text);
}

static int read_signal(const json_t *object, struct control_request *request, char *error,
		       size_t error_size)
{
	const json_t *value = json_object_get(object, "signal");
	int number;

	if (request->command != CONTROL_SIGNAL)
		return 0;
	if (!value)
		return refuse(error, error_size,
			      "missing \"signal\": a signal name, such as \"SIGHUP\" or \"HUP\"");
	if (!json_is_string(value))
		return refuse(
		    error, error_size,
		    "\"signal\" must be a string (a name, such as \"SIGHUP\" or \"HUP\"), "
		    "not %s",
		    json_kind(value));
	/* jansson refuses \u0000 in strings, so the name is all of the value. */
	number = parse_signal_name(json_string_value(value));
	if (number <= 0)
		return refuse(error, error_size, "unknown signal %s",
			      quote(json_string_value(value), json_string_length(value)).text);
	request->signal_number = number;
	return 0;
}

static int read_follow_and_tail(const json_t *object, struct control_request *request, char *error,
				size_t error_size)
{
	const json_t *follow = json_object_get(object, "follow");
	const json_t *tail = json_object_get(object, "tail");

	if (follow) {
		if (!json_is_boolean(follow))
			return refuse(error, error_size, "\"follow\" must be a boolean, not %s",
				      json_kind(follow));
		request->follow = json_is_true(follow);
	}
	if (tail) {
		if (!json_is_integer(tail) || json_integer_value(tail) < 0)
			return refuse(error, error_size, "\"tail\" must be an integer >= 0");
		if (json_integer_value(tail) > UINT_MAX)
			return refuse(error, error_size,
				      "\"tail\" must be an integer >= 0 and <= %u", UINT_MAX);
		request->tail = (unsigned)json_integer_value(tail);
	}
	return 0;
}

static int read_boolean(const json_t *object, const char *name, bool *value, char *error,
			size_t error_size)
{
	const json_t *field = json_object_get(object, name);
	if (!field)
		return 0;
	if (!json_is_boolean(field))
		return refuse(error, error_size, "\"%s\" must be a boolean, not %s", name,
			      json_kind(field));
	*value = json_is_true(field);
	return 0;
}

static int read_reload_fields(const json_t *object, struct control_request *request, char *error,
			      size_t error_size)
{
	const json_t *path = json_object_get(object, "path");
	if (path) {
		if (!json_is_string(path) || json_string_length(path) == 0)
			return refuse(error, error_size, "\"path\" must be a non-empty string");
		if (json_string_length(path) > CONTROL_PATH_MAX ||
		    strlen(json_string_value(path)) != json_string_length(path))
			return refuse(
			    error, error_size,
			    "\"path\" must be a file path of at most %d bytes, without NUL",
			    CONTROL_PATH_MAX);
		snprintf(request->path, sizeof(request->path), "%s", json_string_value(path));
	}
	return read_boolean(object, "dry_run", &request->dry_run, error, error_size) < 0 ||
		       read_boolean(object, "rerun_completed", &request->rerun_completed, error,
				    error_size) < 0
		   ? -1
		   : 0;
}

/* A list of strings without NUL bytes: `at_least` of them, each matching
 * `pattern` when given ("NAME=VALUE" for env). */
static int read_string_list(const json_t *object, const char *name, size_t at_least, char ***out,
			    char *error, size_t error_size)
{
	const json_t *list = json_object_get(object, name);
	if (!list)
		return at_least ? refuse(error, error_size, "\"%s\" is required", name) : 0;
	if (!json_is_array(list) || json_array_size(list) < at_least ||
	    json_array_size(list) > 4096)
		return refuse(error, error_size, "\"%s\" must be a list of %zu to 4096 strings",
			      name, at_least);
	char **strings = calloc(json_array_size(list) + 1, sizeof(*strings));
	if (!strings)
		return refuse(error, error_size, "out of memory");
	*out = strings;
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *item = json_array_get(list, i);
		if (!json_is_string(item) ||
		    strlen(json_string_value(item)) != json_string_length(item))
			return refuse(error, error_size, "\"%s\"[%zu] must be a string without NUL",
				      name, i);
		const char *text = json_string_value(item);
		if (strcmp(name, "env") == 0 && (!strchr(text, '=') || text[0] == '='))
			return refuse(error, error_size, "\"env\"[%zu] must be NAME=VALUE", i);
		strings[i] = strdup(text);
		if (!strings[i])
			return refuse(error, error_size, "out of memory");
	}
	return 0;
}

static int read_bounded_string(const json_t *object, const char *name, char *out, size_t size,
			       char *error, size_t error_size)
{
	const json_t *value = json_object_get(object, name);
	if (!value)
		return 0;
	if (!json_is_string(value) || json_string_length(value) == 0 ||
	    json_string_length(value) >= size ||
	    strlen(json_string_value(value)) != json_string_length(value))
		return refuse(error, error_size, "\"%s\" must be a string of 1 to %zu bytes", name,
			      size - 1);
	memcpy(out, json_string_value(value), json_string_length(value) + 1);
	return 0;
}

/* A terminal's height or width, as TIOCSWINSZ takes it. */
static int read_window_side(const json_t *object, const char *name, unsigned short *value,
			    char *error, size_t error_size)
{
	const json_t *field = json_object_get(object, name);
	if (!field)
		return 0;
	if (!json_is_integer(field) || json_integer_value(field) < 0 ||
	    json_integer_value(field) > USHRT_MAX)
		return refuse(error, error_size, "\"%s\" must be an integer from 0 to %u", name,
			      USHRT_MAX);
	*value = (unsigned short)json_integer_value(field);
	return 0;
}

static int read_exec_fields(const json_t *object, struct control_request *request, char *error,
			    size_t error_size)
{
	if (request->command == CONTROL_INSPECT)
		return read_boolean(object, "show_secrets", &request->show_secrets, error,
				    error_size);
	if (request->command != CONTROL_EXEC)
		return 0;
	if (read_string_list(object, "argv", 1, &request->argv, error, error_size) < 0 ||
	    read_string_list(object, "env", 0, &request->env, error, error_size) < 0 ||
	    read_bounded_string(object, "user", request->user, sizeof(request->user), error,
				error_size) < 0 ||
	    read_bounded_string(object, "cwd", request->cwd, sizeof(request->cwd), error,
				error_size) < 0)
		return -1;
	if (request->cwd[0] && request->cwd[0] != '/')
		return refuse(error, error_size, "\"cwd\" must be an absolute path");
	if (read_boolean(object, "stdin", &request->stdin_relayed, error, error_size) < 0 ||
	    read_boolean(object, "tty", &request->tty, error, error_size) < 0 ||
	    read_window_side(object, "rows", &request->rows, error, error_size) < 0 ||
	    read_window_side(object, "columns", &request->columns, error, error_size) < 0)
		return -1;
	if ((request->rows || request->columns) && !request->tty)
		return refuse(error, error_size, "\"rows\" and \"columns\" are only for a tty");
	return 0;
}

/* restart --rolling's "max_unavailable": a whole number, 1 or more. */
static int read_max_unavailable(const json_t *object, struct control_request *request, char *error,
				size_t error_size)
{
	const json_t *value = json_object_get(object, "max_unavailable");
	if (!value)
		return 0;
	if (!json_is_integer(value) || json_integer_value(value) < 1 ||
	    json_integer_value(value) > TASK_INSTANCES_MAX)
		return refuse(error, error_size,
			      "\"max_unavailable\" must be an integer from 1 to %d",
			      TASK_INSTANCES_MAX);
	request->max_unavailable = (unsigned)json_integer_value(value);
	return 0;
}

/* scale's "counts": {"group/task": N, ...}; the values checked by
 * check_counts. */
static int read_counts(const json_t *object, struct control_request *request, char *error,
		       size_t error_size)
{
	const json_t *counts = json_object_get(object, "counts");
	if (request->command != CONTROL_SCALE)
		return 0;
	if (!counts)
		return refuse(error, error_size, "missing \"counts\": {\"group/task\": N, ...}");
	if (!json_is_object(counts) || json_object_size(counts) > CONTROL_SCALE_MAX)
		return refuse(error, error_size,
			      "\"counts\" must be an object of at most %d \"group/task\": N",
			      CONTROL_SCALE_MAX);
	request->counts = calloc(json_object_size(counts) + 1, sizeof(*request->counts));
	if (!request->counts)
		return refuse(error, error_size, "out of memory");
	const char *key;
	const json_t *value;
	json_object_foreach((json_t *)counts, key, value)
	{
		if (!json_is_integer(value) || json_integer_value(value) < 0 ||
		    json_integer_value(value) > UINT_MAX)
			return refuse(error, error_size,
				      "\"counts\": %s must be a whole number of instances",
				      quote(key, strlen(key)).text);
		if (strlen(key) > CONTROL_TARGET_MAX)
			return refuse(error, error_size,
				      "invalid target: longer than %d characters",
				      CONTROL_TARGET_MAX);
		struct control_scale_count *pair = &request->counts[request->count_count++];
		snprintf(pair->target, sizeof(pair->target), "%s", key);
		pair->count = (unsigned)json_integer_value(value);
	}
	return 0;
}

void control_request_free(struct control_request *request)
{
	free(request->counts);
	request->counts = NULL;
	request->count_count = 0;
	for (char **string = request->argv; string && *string; string++)
		free(*string);
	for (char **string = request->env; string && *string; string++)
		free(*string);
	free(request->argv);
	free(request->env);
	request->argv = request->env = NULL;
}

static int read_request(const json_t *object, struct control_request *request, char *error,
			size_t error_size)
{
	/* The version first: a request of a later protocol may well have
	 * fields this corral has never heard of. */
	if (read_version(object, error, error_size) < 0 ||
	    read_command(object, &request->command, error, error_size) < 0 ||
	    check_fields(object, request->command, error, error_size) < 0 ||
	    read_target(object, request, error, error_size) < 0 ||
	    read_mode(object, request, error, error_size) < 0 ||
	    read_signal(object, request, error, error_size) < 0 ||
	    read_follow_and_tail(object, request, error, error_size) < 0 ||
	    read_reload_fields(object, request, error, error_size) < 0 ||
	    read_exec_fields(object, request, error, error_size) < 0 ||
	    read_max_unavailable(object, request, error, error_size) < 0 ||
	    read_counts(object, request, error, error_size) < 0)
		return -1;
	return control_request_validate(request, error, error_size);
}

int control_request_parse(const char *line, size_t length, struct control_request *request,
			  char *error, size_t error_size)
{
	json_error_t json_error;
	json_t *object;
	int result;

	memset(request, 0, sizeof(*request));
	if (text_is_blank(line, length))
		return refuse(error, error_size, "empty request: expected a JSON object");
	/* JSON_DECODE_ANY: so that `"status"` or `[...]` is told it is not an
	 * object, rather than given a parser's complaint. */
	object = json_loadb(line, length, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &json_error);
	if (!object) {
		if (json_error.column > 0)
			return refuse(error, error_size, "invalid JSON at column %d: %s",
				      json_error.column, json_error.text);
		return refuse(error, error_size, "invalid JSON: %s", json_error.text);
	}
	if (!json_is_object(object)) {
		result = refuse(error, error_size, "request must be a JSON object, not %s",
				json_kind(object));
	} else {
		result = read_request(object, request, error, error_size);
	}
	json_decref(object);
	if (result < 0) {
		control_request_free(request);
		memset(request, 0, sizeof(*request));
	}
	return result;
}

char *control_request_encode(const struct control_request *request)
{
	char error[256];
	json_t *object;
	char *compact, *line = NULL;

	if (control_request_validate(request, error, sizeof(error)) < 0)
		return NULL;
	object = json_pack("{s:i, s:s}", "version", CONTROL_PROTOCOL_VERSION, "command",
			   commands[request->command].name);
	if (!object)
		return NULL;
	if (request->target[0])
		json_object_set_new(object, "target", json_string(request->target));
	if (request->command == CONTROL_RESTART && request->restart_mode != CONTROL_RESTART_TASK)
		json_object_set_new(object, "mode",
				    json_string(restart_mode_names[request->restart_mode]));
	if (request->command == CONTROL_RESTART && request->max_unavailable)
		json_object_set_new(object, "max_unavailable",
				    json_integer(request->max_unavailable));
	if (request->command == CONTROL_SCALE) {
		json_t *counts = json_object();
		for (size_t i = 0; i < request->count_count; i++)
			json_object_set_new(counts, request->counts[i].target,
					    json_integer(request->counts[i].count));
		json_object_set_new(object, "counts", counts);
	}
	if (request->command == CONTROL_SIGNAL)
		json_object_set_new(object, "signal",
				    json_string(signal_name(request->signal_number)));
	if (commands[request->command].fields & FIELD_FOLLOW && request->follow)
		json_object_set_new(object, "follow", json_true());
	if (commands[request->command].fields & FIELD_TAIL && request->tail)
		json_object_set_new(object, "tail", json_integer(request->tail));
	if (request->command == CONTROL_INSPECT && request->show_secrets)
		json_object_set_new(object, "show_secrets", json_true());
	if (request->command == CONTROL_EXEC) {
		json_t *argv = json_array(), *env = json_array();
		for (char **string = request->argv; string && *string; string++)
			json_array_append_new(argv, json_string(*string));
		for (char **string = request->env; string && *string; string++)
			json_array_append_new(env, json_string(*string));
		json_object_set_new(object, "argv", argv);
		if (json_array_size(env))
			json_object_set_new(object, "env", env);
		else
			json_decref(env);
		if (request->user[0])
			json_object_set_new(object, "user", json_string(request->user));
		if (request->cwd[0])
			json_object_set_new(object, "cwd", json_string(request->cwd));
		if (request->stdin_relayed)
			json_object_set_new(object, "stdin", json_true());
		if (request->tty)
			json_object_set_new(object, "tty", json_true());
		if (request->rows)
			json_object_set_new(object, "rows", json_integer(request->rows));
		if (request->columns)
			json_object_set_new(object, "columns", json_integer(request->columns));
	}
	if (request->command == CONTROL_UPGRADE && request->path[0])
		json_object_set_new(object, "path", json_string(request->path));
	if (request->command == CONTROL_RELOAD) {
		if (request->path[0])
			json_object_set_new(object, "path", json_string(request->path));
		if (request->dry_run)
			json_object_set_new(object, "dry_run", json_true());
		if (request->rerun_completed)
			json_object_set_new(object, "rerun_completed", json_true());
	}

	compact = json_dumps(object, JSON_COMPACT);
	json_decref(object);
	if (compact && asprintf(&line, "%s\n", compact) < 0)
		line = NULL;
	free(compact);
	return line;
}

char *control_reply_error(const char *message)
{
	json_t *reply = json_object();
	json_t *text = json_string(message);
	char *compact, *line = NULL;

	/* Messages quote what clients sent, cut short; should one ever not
	 * be UTF-8, the reply must still be JSON. */
	if (!text) {
		char *cleaned = strdup(message);

		for (char *c = cleaned; c && *c; c++)
			if ((unsigned char)*c >= 0x80)
				*c = '?';
		text = cleaned ? json_string(cleaned) : NULL;
		free(cleaned);
	}
	if (!reply || !text) {
		json_decref(reply);
		json_decref(text);
		return NULL;
	}
	json_object_set_new(reply, "ok", json_false());
	json_object_set_new(reply, "error", text);
	compact = json_dumps(reply, JSON_COMPACT);
	json_decref(reply);
	if (compact && asprintf(&line, "%s\n", compact) < 0)
		line = NULL;
	free(compact);
	return line;
}
