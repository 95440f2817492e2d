/* The screen buffer and its diff. Escape sequences are ECMA-48's (CUP,
 * SGR), which every terminal corral top meets understands: xterm and its
 * kin, tmux, screen, the Linux console, kubectl's and podman's relays. */
#include "cli/top/top_screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

void top_screen_init(struct top_screen *screen, int rows, int columns)
{
	screen->rows = rows > 0 ? rows : 0;
	screen->columns = columns > 0 ? columns : 0;
	size_t cells = (size_t)screen->rows * (size_t)screen->columns;
	screen->text = xmalloc(cells + 1);
	screen->attr = xmalloc(cells + 1);
	top_screen_clear(screen);
}

void top_screen_free(struct top_screen *screen)
{
	free(screen->text);
	free(screen->attr);
	*screen = (struct top_screen){0};
}

void top_screen_clear(struct top_screen *screen)
{
	size_t cells = (size_t)screen->rows * (size_t)screen->columns;
	memset(screen->text, ' ', cells);
	memset(screen->attr, TOP_PLAIN, cells);
}

int top_screen_put(struct top_screen *screen, int row, int column, int width, const char *text,
		   enum top_attribute attribute)
{
	if (row < 0 || row >= screen->rows || column < 0 || column >= screen->columns || !text)
		return 0;
	int room = screen->columns - column;
	if (width >= 0 && width < room)
		room = width;
	size_t at = (size_t)row * (size_t)screen->columns + (size_t)column;
	int written = 0;
	for (; written < room && text[written]; written++) {
		unsigned char byte = (unsigned char)text[written];
		screen->text[at + (size_t)written] = byte >= 0x20 && byte < 0x7f ? (char)byte : '?';
		screen->attr[at + (size_t)written] = (unsigned char)attribute;
	}
	return written;
}

void top_screen_put_right(struct top_screen *screen, int row, int column, int width,
			  const char *text, enum top_attribute attribute)
{
	int length = (int)strlen(text);
	if (length > width)
		length = width;
	top_screen_put(screen, row, column + width - length, length, text, attribute);
}

void top_screen_row_attribute(struct top_screen *screen, int row, enum top_attribute attribute)
{
	if (row < 0 || row >= screen->rows)
		return;
	memset(screen->attr + (size_t)row * (size_t)screen->columns, attribute,
	       (size_t)screen->columns);
}

const char *top_screen_row(const struct top_screen *screen, int row)
{
	return screen->text + (size_t)row * (size_t)screen->columns;
}

void top_output_append(struct top_output *output, const char *bytes, size_t length)
{
	if (output->length + length > output->capacity) {
		size_t capacity = output->capacity ? output->capacity : 4096;
		while (capacity < output->length + length)
			capacity *= 2;
		output->data = xreallocarray(output->data, capacity, 1);
		output->capacity = capacity;
	}
	memcpy(output->data + output->length, bytes, length);
	output->length += length;
}

void top_output_free(struct top_output *output)
{
	free(output->data);
	*output = (struct top_output){0};
}

static void append_text(struct top_output *output, const char *text)
{
	top_output_append(output, text, strlen(text));
}

static const char *attribute_sequence(unsigned char attribute)
{
	switch (attribute) {
	case TOP_BOLD:
		return "\033[0;1m";
	case TOP_REVERSE:
		return "\033[0;7m";
	case TOP_DIM:
		return "\033[0;2m";
	default:
		return "\033[0m";
	}
}

static bool row_differs(const struct top_screen *old, const struct top_screen *new, int row)
{
	size_t at = (size_t)row * (size_t) new->columns, cells = (size_t) new->columns;
	return memcmp(old->text + at, new->text + at, cells) != 0 ||
	       memcmp(old->attr + at, new->attr + at, cells) != 0;
}

int top_screen_diff(const struct top_screen *old, const struct top_screen *new,
		    struct top_output *output)
{
	bool all = !old || old->rows != new->rows || old->columns != new->columns;
	int written = 0;
	for (int row = 0; row < new->rows; row++) {
		if (!all && !row_differs(old, new, row))
			continue;
		char move[32];
		snprintf(move, sizeof(move), "\033[%d;1H\033[0m", row + 1);
		append_text(output, move);
		size_t at = (size_t)row * (size_t) new->columns;
		unsigned char current = TOP_PLAIN;
		for (int column = 0; column < new->columns;) {
			int run = column;
			while (run < new->columns &&new->attr[at + (size_t)run] == current)
				run++;
			top_output_append(output, new->text + at + (size_t)column,
					  (size_t)(run - column));
			column = run;
			if (column < new->columns) {
				current = new->attr[at + (size_t)column];
				append_text(output, attribute_sequence(current));
			}
		}
		if (current != TOP_PLAIN)
			append_text(output, "\033[0m");
		written++;
	}
	return written;
}
