/* Durations and sizes as people write them in config files and on the
 * command line. Signal names live in signals.c. */
#include "base/units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct unit {
	const char *suffix;
	uint64_t factor;
};

/* Largest first: a duration lists its parts in this order. */
static const struct unit duration_units[] = {
    {"h", 3600000},
    {"m", 60000},
    {"s", 1000},
    {"ms", 1},
};
#define DURATION_UNIT_COUNT (sizeof(duration_units) / sizeof(duration_units[0]))

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Whatever follows a number up to the next number is its unit, so that
 * "5x" and "5µs" are reported as unknown units; spaces and decimal points
 * get explanations of their own. */
static bool is_unit_char(char c)
{
	return c && !is_digit(c) && c != ' ' && c != '\t' && c != '.' && c != ',';
}

bool read_capped_number(const char **cursor, uint64_t cap, uint64_t *out)
{
	const char *p = *cursor;
	uint64_t value = 0;

	if (!is_digit(*p))
		return false;
	for (; is_digit(*p); p++) {
		value = value * 10 + (uint64_t)(*p - '0');
		if (value > cap)
			value = cap + 1;
	}
	*cursor = p;
	*out = value;
	return true;
}

bool read_number(const char **cursor, uint64_t *out)
{
	uint64_t value = 0;
	const char *p = *cursor;

	for (; is_digit(*p); p++) {
		if (__builtin_mul_overflow(value, 10, &value) ||
		    __builtin_add_overflow(value, (uint64_t)(*p - '0'), &value))
			return false;
	}
	*cursor = p;
	*out = value;
	return true;
}

static int refuse(const char **why, const char *explanation)
{
	if (why)
		*why = explanation;
	return -EINVAL;
}

/* Explains a character where a number was expected. */
static int refuse_not_a_number(const char **why, char c)
{
	if (c == '-')
		return refuse(why, "must not be negative");
	if (c == ' ' || c == '\t')
		return refuse(why, "must not contain spaces (write e.g. 1m30s)");
	if (c == '.' || c == ',')
		return refuse(why, "use whole numbers (write e.g. 1s500ms, not 1.5s)");
	return refuse(why, "expected a number before each unit (e.g. 500ms, 10s, 1m30s)");
}

int parse_duration_ms(const char *text, uint64_t *out_ms, const char **why)
{
	const char *cursor = text;
	size_t next_unit = 0; /* units may only get smaller */
	uint64_t total = 0;

	if (!text || !*text)
		return refuse(why, "empty (write e.g. 500ms, 10s, 1m30s or 0)");

	while (*cursor) {
		const char *number_start = cursor;
		const char *unit_start;
		uint64_t number, part;
		size_t unit_length, u;

		if (!is_digit(*cursor))
			return refuse_not_a_number(why, *cursor);
		if (!read_number(&cursor, &number))
			return refuse(why, "too large");
		if (*cursor == '.' || *cursor == ',')
			return refuse_not_a_number(why, *cursor);

		unit_start = cursor;
		while (is_unit_char(*cursor))
			cursor++;
		unit_length = (size_t)(cursor - unit_start);
		if (unit_length == 0) {
			if (*cursor)
				return refuse_not_a_number(why, *cursor);
			/* "30" could mean seconds or milliseconds; only
			 * zero means the same in every unit. */
			if (number_start == text && number == 0)
				break;
			return refuse(why,
				      "a number needs a unit (ms, s, m or h); only 0 goes without");
		}

		for (u = 0; u < DURATION_UNIT_COUNT; u++) {
			if (strlen(duration_units[u].suffix) == unit_length &&
			    memcmp(duration_units[u].suffix, unit_start, unit_length) == 0)
				break;
		}
		if (u == DURATION_UNIT_COUNT)
			return refuse(why, "unknown unit (use ms, s, m or h)");
		if (u < next_unit)
			return refuse(why, "units must go from largest to smallest, each at most "
					   "once (e.g. 1h30m, 1m30s, 1s500ms)");
		next_unit = u + 1;

		if (__builtin_mul_overflow(number, duration_units[u].factor, &part) ||
		    __builtin_add_overflow(total, part, &total))
			return refuse(why, "too large");
	}

	*out_ms = total;
	return 0;
}

int parse_size_bytes(const char *text, uint64_t *out_bytes, const char **why)
{
	static const char suffixes[] = "KMGT";
	const char *cursor = text;
	uint64_t number, factor = 1;

	if (!text || !*text)
		return refuse(why, "empty (write e.g. 512K, 256M, 1G or a number of bytes)");
	if (!is_digit(*cursor)) {
		if (*cursor == '-')
			return refuse(why, "must not be negative");
		return refuse(why, "expected a number (e.g. 512K, 256M, 1G)");
	}
	if (!read_number(&cursor, &number))
		return refuse(why, "too large");
	if (*cursor == '.' || *cursor == ',')
		return refuse(why, "use whole numbers (write e.g. 1536M, not 1.5G)");

	if (*cursor) {
		/* One letter, either case: "512k" is as clear as "512K". */
		char upper =
		    (*cursor >= 'a' && *cursor <= 'z') ? (char)(*cursor - 'a' + 'A') : *cursor;
		const char *found = upper ? strchr(suffixes, upper) : NULL;

		if (!found || cursor[1])
			return refuse(why, "unknown unit (use K, M, G or T, or a plain number of "
					   "bytes)");
		for (const char *s = suffixes; s <= found; s++)
			factor *= 1024;
	}

	if (__builtin_mul_overflow(number, factor, &number))
		return refuse(why, "too large");
	*out_bytes = number;
	return 0;
}

void format_duration_ms(uint64_t ms, char *buffer, size_t size)
{
	size_t used = 0;

	if (!size)
		return;
	buffer[0] = '\0';
	if (ms == 0) {
		snprintf(buffer, size, "0");
		return;
	}
	for (size_t u = 0; u < DURATION_UNIT_COUNT; u++) {
		uint64_t count = ms / duration_units[u].factor;
		int written;

		if (!count)
			continue;
		ms -= count * duration_units[u].factor;
		written = snprintf(buffer + used, size - used, "%llu%s", (unsigned long long)count,
				   duration_units[u].suffix);
		if (written < 0 || (size_t)written >= size - used) {
			/* Too small a buffer: keep the whole parts only, so as
			 * not to show "1m3" for 1m30s. */
			buffer[used] = '\0';
			return;
		}
		used += (size_t)written;
	}
}

/* "512B", "3.2K", "12.0M", "1.5G": one decimal, powers of 1024. */
void format_size_bytes(uint64_t bytes, char *buffer, size_t size)
{
	static const char units[] = "KMGT";
	if (bytes < 1024) {
		snprintf(buffer, size, "%" PRIu64 "B", bytes);
		return;
	}
	double value = (double)bytes / 1024;
	size_t unit = 0;
	while (value >= 1024 && unit + 1 < sizeof(units) - 1) {
		value /= 1024;
		unit++;
	}
	snprintf(buffer, size, "%.1f%c", value, units[unit]);
}
