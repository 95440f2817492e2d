/* readiness.log patterns: POSIX extended regular expressions (as grep -E)
 * matched against one line of a task's output at a time, in corral's one
 * loop, so in time linear in the line and bounded by the pattern.
 *
 * Why TRE and not glibc's regexec: glibc backtracks for back-references
 * (one 4000-byte line against `^(.*)(.*)\2\1x$` held the loop for
 * minutes) and grows faster than the line even without them (`(.*a){20}b`:
 * 23 ms a line). TRE takes the same ERE syntax and matches a pattern
 * without back-references with a parallel (Thompson) matcher: one pass
 * over the line, its cost per byte set by the pattern. So the pattern is
 * bounded here too: no back-references, and no more than
 * LINE_PATTERN_POSITIONS_MAX positions and LINE_PATTERN_LOOPS_MAX
 * repetition operators once counted repetitions are multiplied out
 * (docs/architecture.md, "Where the code departs from DESIGN.md": TRE). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Characters and classes a pattern may hold once `{n,m}` copies what it
 * repeats: the matcher's state is a set of them. */
#define LINE_PATTERN_POSITIONS_MAX 256
/* `*`, `+`, `?` and optional `{n,m}` copies, multiplied out: each can be
 * skipped, so every state reaches the ones after it, and a line's cost
 * grows with their square. */
#define LINE_PATTERN_LOOPS_MAX 16

struct line_pattern;

/* `text` compiled; NULL when it is refused, with why (and what to write
 * instead) in `error` and where in `text` (a byte offset) in `*offset`. */
struct line_pattern *line_pattern_compile(const char *text, size_t *offset, char *error,
					  size_t error_size);
void line_pattern_free(struct line_pattern *pattern);

/* Whether `line` (`length` bytes, no NUL needed) holds a match. */
bool line_pattern_matches(const struct line_pattern *pattern, const char *line, size_t length);

/* What compiling `text` checks before the library sees it: 0, or -1
 * with why in `error` and where in `*offset` (line_pattern_cost.c). */
int line_pattern_check_cost(const char *text, size_t *offset, char *error, size_t error_size);
