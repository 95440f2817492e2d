/* The one parser for durations and sizes, and signal names, shared by the
 * config loader and the CLI. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads the digits at *cursor into *out and moves the cursor past them.
 * False when there is no digit. A number above `cap` reads as `cap` + 1, so
 * that callers say "too large" rather than see it wrap around; `cap` must
 * be below UINT64_MAX. */
bool read_capped_number(const char **cursor, uint64_t cap, uint64_t *out);

/* Reads the digits at *cursor (none reads as 0) and moves past them. False
 * when the number does not fit in 64 bits. */
bool read_number(const char **cursor, uint64_t *out);

/* "500ms", "10s", "1m30s", "2h", "0". Units: ms, s, m, h; several may follow
 * each other from largest to smallest. A bare number is refused unless it is
 * 0, because "30" could mean seconds or milliseconds. Returns 0, or -EINVAL
 * with *why set to a static explanation. */
int parse_duration_ms(const char *text, uint64_t *out_ms, const char **why);

/* "512K", "256M", "1G", "2T" (powers of 1024), or a plain number of bytes.
 * Returns 0, or -EINVAL with *why set. */
int parse_size_bytes(const char *text, uint64_t *out_bytes, const char **why);

/* Writes a duration back the way a person would write it: "1m30s", "500ms". */
void format_duration_ms(uint64_t ms, char *buffer, size_t size);

/* A size at a glance: "512B", "3.2K", "12.0M", "1.5G" (one decimal, powers
 * of 1024). */
void format_size_bytes(uint64_t bytes, char *buffer, size_t size);

/* "SIGTERM", "TERM", "sigterm" -> 15. Returns the number, or -EINVAL. */
int parse_signal_name(const char *text);

/* 15 -> "SIGTERM"; unknown numbers -> "SIG?" (never NULL). */
const char *signal_name(int signal_number);
