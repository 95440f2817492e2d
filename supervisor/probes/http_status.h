/* The status line of an HTTP/1.x answer, for http probes (net_probe.c).
 * Pure, so that it is unit-tested and fuzzed. */
#pragma once

#include <stddef.h>

/* Reads "HTTP/1.x NNN ..." ending in CRLF (or LF) from the start of
 * `buffer`. Returns 1 with `*status` set; 0 when the line is not complete
 * yet (read more); -1 when it is not an HTTP status line. */
int http_status_parse(const char *buffer, size_t length, int *status);
