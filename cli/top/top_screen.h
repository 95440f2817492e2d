/* A screen of text cells for corral top: what the renderer draws into,
 * and the bytes that turn the terminal from one screen into the next.
 * Only the rows that changed are written, each as a whole, all of them in
 * one write(): no clear-screen, so no flash. Cells hold one byte each; a
 * byte outside printable ASCII is drawn as '?', so that a column is
 * always one cell wide. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum top_attribute {
	TOP_PLAIN,
	TOP_BOLD,
	TOP_REVERSE, /* headers and the selected line */
	TOP_DIM,
};

struct top_screen {
	int rows, columns;
	char *text;          /* rows * columns cells */
	unsigned char *attr; /* enum top_attribute, one a cell */
};

void top_screen_init(struct top_screen *screen, int rows, int columns);
void top_screen_free(struct top_screen *screen);
/* Every cell a plain blank. */
void top_screen_clear(struct top_screen *screen);

/* Writes `text` at (row, column) with `attribute`, cut at the screen's
 * edge and at `width` cells (-1: no bound). Returns the cells written. */
int top_screen_put(struct top_screen *screen, int row, int column, int width, const char *text,
		   enum top_attribute attribute);
/* The same, right-aligned in `width` cells. */
void top_screen_put_right(struct top_screen *screen, int row, int column, int width,
			  const char *text, enum top_attribute attribute);
/* Sets the attribute of a whole row (a header, the selected line). */
void top_screen_row_attribute(struct top_screen *screen, int row, enum top_attribute attribute);

/* Row `row`'s text, `columns` bytes, not NUL-terminated. */
const char *top_screen_row(const struct top_screen *screen, int row);

/* A growing byte buffer: what goes to the terminal in one write(). */
struct top_output {
	char *data;
	size_t length, capacity;
};

void top_output_append(struct top_output *output, const char *bytes, size_t length);
void top_output_free(struct top_output *output);

/* Appends what turns the terminal showing `old` into `new`: each row
 * that differs, rewritten from its first cell (cursor moved there,
 * attributes set as they change, reset at its end). `old` NULL or of
 * another size: every row. Returns the rows written. */
int top_screen_diff(const struct top_screen *old, const struct top_screen *new,
		    struct top_output *output);
