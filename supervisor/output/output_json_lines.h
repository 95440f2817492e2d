/* The lines of a batch as followers of `corral logs -f` get them: one JSON
 * text a line, ending in '\n', made once for every follower of the task,
 * its group and every task. Byte for byte what output_line_json() and
 * json_line_take() make of each line alone: the fields that the lines of a
 * batch share (time, task, stream) are written once, then each line's
 * "text" after them. */
#pragma once

#include <stddef.h>

#include "supervisor/output/output_batch.h"

struct output_json_lines {
	char *text; /* the lines, each ending in '\n' */
	size_t length, capacity;
};

/* Replaces what `lines` held with the lines of `batch`. */
void output_json_lines_build(struct output_json_lines *lines, const struct output_batch *batch);

void output_json_lines_free(struct output_json_lines *lines);
