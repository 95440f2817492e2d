#include "supervisor/pid1/termination_message.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/json_text.h"

/* What a task wrote itself may take this much, so that its output lines
 * keep some room (the kubelet's own fallback to logs takes 2048 bytes). */
#define TASK_MESSAGE_MAX 2048

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */
#define CUT_MARK "..."

struct writer {
	char *out;
	size_t used;
	size_t capacity; /* TERMINATION_MESSAGE_MAX, or less for a part */
};

static size_t room(const struct writer *writer)
{
	return writer->capacity - writer->used;
}

/* The bytes of the valid UTF-8 sequence at text[0] that go out as they
 * are, or 0: an invalid byte, or a control character (a terminal's escape
 * sequence, a carriage return) but a tab and, where lines are kept, a
 * newline. Those go out as U+FFFD: `kubectl describe` shows the message
 * on a terminal. */
static size_t kept_sequence(const char *text, size_t length, bool keep_newlines)
{
	size_t size = utf8_sequence_size(text, length);
	if (size != 1)
		return size;
	unsigned char c = (unsigned char)text[0];
	if (c == '\t' || (c == '\n' && keep_newlines))
		return 1;
	return c < 0x20 || c == 0x7f ? 0 : 1;
}

/* The size of `text` once cleaned (kept_sequence). */
static size_t clean_size(const char *text, size_t length, bool keep_newlines)
{
	size_t size = 0;
	for (size_t i = 0; i < length;) {
		size_t kept = kept_sequence(text + i, length - i, keep_newlines);
		size += kept ? kept : sizeof(replacement) - 1;
		i += kept ? kept : 1;
	}
	return size;
}

/* Appends `text` cleaned, at most `limit` bytes of it, cut between two
 * characters. True when all of it went in. */
static bool put_clean(struct writer *writer, const char *text, size_t length, bool keep_newlines,
		      size_t limit)
{
	size_t end = writer->used + (limit < room(writer) ? limit : room(writer));
	for (size_t i = 0; i < length;) {
		size_t kept = kept_sequence(text + i, length - i, keep_newlines);
		const char *piece = kept ? text + i : replacement;
		size_t size = kept ? kept : sizeof(replacement) - 1;
		if (writer->used + size > end)
			return false;
		memcpy(writer->out + writer->used, piece, size);
		writer->used += size;
		i += kept ? kept : 1;
	}
	return true;
}

/* `text` and a newline; a text too long for the room left is cut, and
 * says so. */
static void put_line_text(struct writer *writer, const char *text, size_t length,
			  bool keep_newlines)
{
	if (room(writer) < sizeof(CUT_MARK) + 4)
		return;
	if (clean_size(text, length, keep_newlines) + 1 > room(writer)) {
		put_clean(writer, text, length, keep_newlines, room(writer) - sizeof(CUT_MARK));
		memcpy(writer->out + writer->used, CUT_MARK, sizeof(CUT_MARK) - 1);
		writer->used += sizeof(CUT_MARK) - 1;
	} else {
		put_clean(writer, text, length, keep_newlines, room(writer));
	}
	writer->out[writer->used++] = '\n';
}

static void put_line(struct writer *writer, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void put_line(struct writer *writer, const char *format, ...)
{
	char line[TERMINATION_MESSAGE_MAX];
	va_list arguments;
	va_start(arguments, format);
	int length = vsnprintf(line, sizeof(line), format, arguments);
	va_end(arguments);
	if (length < 0)
		return;
	put_line_text(writer, line, strnlen(line, sizeof(line)), false);
}

static const char *or_empty(const char *text)
{
	return text ? text : "";
}

static void put_headline(struct writer *writer, const struct termination_facts *facts)
{
	char exit[96];
	switch (facts->cause) {
	case TERMINATION_COMPLETED:
		if (facts->one_command)
			break;
		put_line(writer, "all tasks completed; corral exited with code %d",
			 facts->exit_code);
		return;
	case TERMINATION_SHUTDOWN:
		if (facts->one_command)
			break;
		put_line(writer, "stopped by %s: %s; corral exited with code %d",
			 or_empty(facts->shutdown),
			 facts->killed ? "what was left was killed" : "every task stopped",
			 facts->exit_code);
		return;
	case TERMINATION_CORRAL_FAILED:
		put_line(writer,
			 "corral failed: %s; every task was killed; corral exited with code %d",
			 or_empty(facts->corral_error), facts->exit_code);
		return;
	case TERMINATION_TASK_FAILED:
		if (facts->one_command)
			break;
		put_line(writer, "%s failed for good: %s; corral exited with code %d",
			 or_empty(facts->task), or_empty(facts->failure), facts->exit_code);
		return;
	}
	/* One-command mode: the command's end, whatever it was. */
	if (!facts->has_exit) {
		put_line(writer, "command %s did not run; corral exited with code %d",
			 or_empty(facts->task), facts->exit_code);
		return;
	}
	task_exit_describe(&facts->exit, exit, sizeof(exit));
	if (facts->exit.kind == TASK_EXIT_START_FAILED && facts->failure && *facts->failure)
		put_line(writer, "command %s failed to start: %s; corral exited with code %d",
			 or_empty(facts->task), facts->failure, facts->exit_code);
	else
		put_line(writer, "command %s %s; corral exited with code %d", or_empty(facts->task),
			 exit, facts->exit_code);
}

/* How the failed task's last run ended, the rule that made it a failure
 * for good, and what its group did. */
static void put_failure_details(struct writer *writer, const struct termination_facts *facts)
{
	char exit[96];
	if (facts->has_exit) {
		task_exit_describe(&facts->exit, exit, sizeof(exit));
		if (task_exit_oom_killed(&facts->exit))
			put_line(writer,
				 "last exit: OOM killed (SIGKILL from the kernel's OOM killer)");
		else if (facts->exit.kind == TASK_EXIT_START_FAILED)
			put_line(writer, "last exit: failed to start (code %d)", facts->exit.code);
		else
			put_line(writer, "last exit: %s", exit);
	}
	if (facts->rule && facts->decision)
		put_line(writer, "rule: %s: %s", facts->rule, facts->decision);
	else if (facts->rule)
		put_line(writer, "rule: %s", facts->rule);
	if (!facts->group)
		return;
	if (facts->group_decision && *facts->group_decision)
		put_line(writer, "group %s: %s", facts->group, facts->group_decision);
	else if (facts->on_failure && strcmp(facts->on_failure, "exit") == 0)
		put_line(writer, "group %s: on_failure exit: every group stopped", facts->group);
	else
		put_line(writer, "group %s: on_failure %s: the group stopped", facts->group,
			 or_empty(facts->on_failure));
}

static void put_head(struct writer *writer, const struct termination_facts *facts)
{
	put_headline(writer, facts);
	if (facts->cause == TERMINATION_TASK_FAILED && !facts->one_command)
		put_failure_details(writer, facts);
	/* A shutdown the headline has not told: one after the failure. */
	if (facts->shutdown && facts->cause != TERMINATION_SHUTDOWN)
		put_line(writer, "then stopped by %s", facts->shutdown);
	if (facts->killed)
		put_line(writer, "%s: killed (SIGKILL): %s", facts->killed,
			 facts->killed_tasks && *facts->killed_tasks ? facts->killed_tasks
								     : "nothing was left");
	if (facts->ignored && *facts->ignored)
		put_line(writer, "failed, and left dead by on_failure ignore: %s", facts->ignored);
}

static void put_task_message(struct writer *writer, const struct termination_facts *facts)
{
	const char *text = facts->task_message;
	size_t length = facts->task_message_length;
	while (length && (text[length - 1] == '\n' || text[length - 1] == '\0'))
		length--;
	if (!length)
		return;
	put_line(writer, "a task wrote:");
	size_t capacity = writer->capacity;
	if (room(writer) > TASK_MESSAGE_MAX)
		writer->capacity = writer->used + TASK_MESSAGE_MAX;
	put_line_text(writer, text, length, true);
	writer->capacity = capacity;
}

/* The newest of the task's last lines that fit, oldest first; the newest
 * one alone, cut, when even it does not fit whole. */
static void put_lines(struct writer *writer, const struct termination_facts *facts)
{
	const char *lines = facts->lines, *end = facts->lines + facts->lines_length;
	if (!facts->lines_length)
		return;
	size_t total = 0;
	for (const char *at = lines; at < end; total++) {
		const char *newline = memchr(at, '\n', (size_t)(end - at));
		at = newline ? newline + 1 : end;
	}
	char heading[160];
	snprintf(heading, sizeof(heading), "last %zu lines of %s:", total, or_empty(facts->task));
	size_t heading_size = clean_size(heading, strlen(heading), false) + 1;
	if (heading_size + sizeof(CUT_MARK) + 4 > room(writer))
		return;
	size_t budget = room(writer) - heading_size, used = 0, kept = 0;
	const char *first = end;
	while (first > lines) {
		const char *line_end = first;
		if (line_end[-1] == '\n')
			line_end--;
		const char *start = line_end;
		while (start > lines && start[-1] != '\n')
			start--;
		size_t size = clean_size(start, (size_t)(line_end - start), false) + 1;
		if (used + size > budget)
			break;
		used += size;
		kept++;
		first = start;
	}
	if (!kept) { /* the newest line alone is too long: cut */
		const char *line_end = end[-1] == '\n' ? end - 1 : end;
		first = line_end;
		while (first > lines && first[-1] != '\n')
			first--;
		kept = 1;
	}
	put_line(writer, "last %zu line%s of %s:", kept, kept == 1 ? "" : "s",
		 or_empty(facts->task));
	for (const char *at = first; at < end;) {
		const char *newline = memchr(at, '\n', (size_t)(end - at));
		const char *line_end = newline ? newline : end;
		put_line_text(writer, at, (size_t)(line_end - at), false);
		at = newline ? newline + 1 : end;
	}
}

size_t termination_message_compose(const struct termination_facts *facts,
				   char out[TERMINATION_MESSAGE_MAX])
{
	struct writer writer = {out, 0, TERMINATION_MESSAGE_MAX};
	put_head(&writer, facts);
	put_task_message(&writer, facts);
	put_lines(&writer, facts);
	return writer.used;
}
