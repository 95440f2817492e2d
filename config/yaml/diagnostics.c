#include "config/yaml/diagnostics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

void diagnostics_add(struct config_diagnostics *diagnostics, struct source_location location,
		     const char *format, ...)
{
	size_t count = diagnostics->count;
	struct config_diagnostic *item;
	va_list arguments;

	/* The capacity is implied by the count (4, then powers of two), so
	 * that a file full of errors does not cost quadratic copying. */
	if (count == 0 || (count >= 4 && (count & (count - 1)) == 0))
		diagnostics->items = xreallocarray(diagnostics->items, count ? count * 2 : 4,
						   sizeof(*diagnostics->items));
	item = &diagnostics->items[diagnostics->count++];
	item->location = location;
	va_start(arguments, format);
	item->message = xvasprintf(format, arguments);
	va_end(arguments);
}

struct numbered_diagnostic {
	struct config_diagnostic diagnostic;
	size_t order;
};

static int compare_numbered(const void *a, const void *b)
{
	const struct numbered_diagnostic *left = a, *right = b;
	const struct source_location *l = &left->diagnostic.location;
	const struct source_location *r = &right->diagnostic.location;

	if (l->file != r->file)
		return l->file < r->file ? -1 : 1;
	if (l->line != r->line)
		return l->line < r->line ? -1 : 1;
	if (l->column != r->column)
		return l->column < r->column ? -1 : 1;
	return left->order < right->order ? -1 : left->order > right->order;
}

void diagnostics_sort(struct config_diagnostics *diagnostics)
{
	struct numbered_diagnostic *numbered;

	/* qsort is not stable: number the messages to keep their order. */
	if (diagnostics->count < 2)
		return;
	numbered = xcalloc(diagnostics->count, sizeof(*numbered));
	for (size_t i = 0; i < diagnostics->count; i++)
		numbered[i] = (struct numbered_diagnostic){diagnostics->items[i], i};
	qsort(numbered, diagnostics->count, sizeof(*numbered), compare_numbered);
	for (size_t i = 0; i < diagnostics->count; i++)
		diagnostics->items[i] = numbered[i].diagnostic;
	free(numbered);
}

struct quoted quote(const char *text, size_t length)
{
	/* Leave room for the closing quote, "..." and the NUL. */
	const size_t limit = sizeof(((struct quoted *)0)->text) - 6;
	struct quoted result;
	size_t used = 0;

	result.text[used++] = '"';
	for (size_t i = 0; i < length;) {
		unsigned char c = (unsigned char)text[i];
		char escaped[5];
		size_t escaped_length, consumed = 1;

		if (c == '"' || c == '\\') {
			escaped_length = (size_t)snprintf(escaped, sizeof(escaped), "\\%c", c);
		} else if (c == '\n') {
			escaped_length = (size_t)snprintf(escaped, sizeof(escaped), "\\n");
		} else if (c == '\t') {
			escaped_length = (size_t)snprintf(escaped, sizeof(escaped), "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			escaped_length = (size_t)snprintf(escaped, sizeof(escaped), "\\x%02x", c);
		} else {
			/* A UTF-8 sequence moves as one piece, so that cutting
			 * the text short never splits a character. */
			consumed = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
			if (consumed > length - i)
				consumed = length - i;
			memcpy(escaped, text + i, consumed);
			escaped_length = consumed;
		}

		if (used + escaped_length > limit) {
			memcpy(result.text + used, "...", 3);
			used += 3;
			break;
		}
		memcpy(result.text + used, escaped, escaped_length);
		used += escaped_length;
		i += consumed;
	}
	result.text[used++] = '"';
	result.text[used] = '\0';
	return result;
}

void config_diagnostic_format(const struct config_diagnostics *diagnostics, size_t index,
			      const char *path, char *buffer, size_t size)
{
	const struct config_diagnostic *item = &diagnostics->items[index];
	const char *file = item->location.file < diagnostics->file_count
			       ? diagnostics->files[item->location.file]
			       : path;

	if (item->location.line == 0)
		snprintf(buffer, size, "%s: %s", file, item->message);
	else
		snprintf(buffer, size, "%s:%u:%u: %s", file, item->location.line,
			 item->location.column, item->message);
}

void config_diagnostics_print(const struct config_diagnostics *diagnostics, const char *path,
			      FILE *out)
{
	char line[2048];
	for (size_t i = 0; i < diagnostics->count; i++) {
		config_diagnostic_format(diagnostics, i, path, line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
}

void config_diagnostics_free(struct config_diagnostics *diagnostics)
{
	if (!diagnostics)
		return;
	for (size_t i = 0; i < diagnostics->count; i++)
		free(diagnostics->items[i].message);
	free(diagnostics->items);
	diagnostics->items = NULL;
	diagnostics->count = 0;
	for (size_t i = 0; i < diagnostics->file_count; i++)
		free(diagnostics->files[i]);
	free(diagnostics->files);
	diagnostics->files = NULL;
	diagnostics->file_count = 0;
}
