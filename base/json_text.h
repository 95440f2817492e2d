/* JSON strings from bytes that need not be UTF-8 (task output, paths).
 * jansson refuses invalid UTF-8, which would silently drop the text; here
 * each invalid byte becomes U+FFFD instead, as terminals show it. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool utf8_is_valid(const char *text, size_t length);

/* Length of the valid UTF-8 sequence at text[0] (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 when it is invalid
 * or cut short by `length`. */
size_t utf8_sequence_size(const char *text, size_t length);

/* Writes `text` as the inside of a JSON string (no quotes) to `out`, which
 * has room for json_escaped_max(length) bytes: quotes, backslashes and
 * control characters escaped, invalid UTF-8 bytes as \ufffd. Returns the
 * bytes written. */
size_t json_escape_into(char *out, const char *text, size_t length);
#define json_escaped_max(length) ((length)*6)

/* A new JSON string of `text`, invalid sequences replaced. */
json_t *json_string_lossy(const char *text, size_t length);

/* `value` as one compact JSON line with its newline, for the line-based
 * control protocol. Takes the reference to `value`. Returns NULL when
 * encoding fails; the caller frees the text. */
char *json_line_take(json_t *value, size_t *length);

/* For "must be X, not <kind>": "an object", "an array", "a string",
 * "a number", "a boolean" or "null". */
const char *json_kind(const json_t *value);

/* `fields` (an object) as one compact JSON text with "time" first, written
 * as seconds since the epoch with exactly three decimals (1763978400.123):
 * the one way every line a log shipper reads writes its time (task lines
 * of `run --log-format json`, `logs --json`, the event log, corral's own
 * messages). jansson's reals would print 1763978400.1229999. Does not take
 * the reference; NULL when encoding fails; the caller frees the text. */
char *json_dumps_timed(uint64_t time_ms, const json_t *fields);
