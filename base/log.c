#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json_text.h"

static bool quiet, verbose, json;

/* "web/app: started" is about task web/app: a first word with one slash,
 * of the characters names may have (config/names), then ": ". Returns the
 * name's length, 0 when the message names no task. */
static size_t task_name_length(const char *text)
{
	size_t slashes = 0, length = 0;
	for (; text[length] && text[length] != ':'; length++) {
		char c = text[length];
		if (c == '/')
			slashes++;
		else if (!(c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') ||
			   (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
			return 0;
	}
	return slashes == 1 && text[length] == ':' && text[length + 1] == ' ' ? length : 0;
}

/* {"time":S.mmm,"level":L,"source":"corral","task":T,"message":M}: what
 * a log shipper reads of corral's own, in the format of its task lines. */
static void print_json(const char *level, const char *text)
{
	json_t *fields = json_object();
	json_object_set_new(fields, "level", json_string(level));
	json_object_set_new(fields, "source", json_string("corral"));
	size_t name_length = task_name_length(text);
	if (name_length) {
		json_object_set_new(fields, "task", json_string_lossy(text, name_length));
		text += name_length + 2;
	}
	json_object_set_new(fields, "message", json_string_lossy(text, strlen(text)));
	char *line = json_dumps_timed(wall_clock_ms(), fields);
	json_decref(fields);
	if (line)
		fprintf(stderr, "%s\n", line);
	free(line);
}

/* log_message says errors and warnings alike; a warning says so first
 * ("web/app: warning: ..."), which its level tells a shipper. */
static const char *message_level(const char *text)
{
	size_t name_length = task_name_length(text);
	const char *rest = name_length ? text + name_length + 2 : text;
	return strncmp(rest, "warning:", 8) == 0 ? "warning" : "error";
}

static void log_line(const char *level, const char *format, va_list args)
{
	char line[1024];
	vsnprintf(line, sizeof(line), format, args);
	if (json) {
		print_json(level ? level : message_level(line), line);
		return;
	}
	/* One write per message, so that lines never interleave. */
	fprintf(stderr, "corral: %s\n", line);
}

void log_message(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	log_line(NULL, format, args);
	va_end(args);
}

void log_info(const char *format, ...)
{
	if (quiet)
		return;
	va_list args;
	va_start(args, format);
	log_line("info", format, args);
	va_end(args);
}

void log_debug(const char *format, ...)
{
	if (!verbose)
		return;
	va_list args;
	va_start(args, format);
	log_line("debug", format, args);
	va_end(args);
}

void log_set_quiet(bool value)
{
	quiet = value;
}

void log_set_verbose(bool value)
{
	verbose = value;
}

void log_set_json(bool value)
{
	json = value;
}
