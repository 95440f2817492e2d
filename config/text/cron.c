#include "config/text/cron.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct field {
	const char *name;
	int low, high;
	const char *const *names; /* index 0 is `low` */
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
					  "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const weekday_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};
static const struct field fields[] = {
    {"minute", 0, 59, NULL},
    {"hour", 0, 23, NULL},
    {"day of month", 1, 31, NULL},
    {"month", 1, 12, month_names},
    {"day of week", 0, 7, weekday_names}, /* 7 is Sunday too */
};

static const struct {
	const char *name, *expression;
} shorthands[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

/* A number or (for months and weekdays) a name; -1 when it is neither. */
static int value_of(const struct field *field, const char *text, size_t length)
{
	if (length == 0)
		return -1;
	if (field->names && length == 3)
		for (int i = 0; field->names[i]; i++)
			if (strncasecmp(text, field->names[i], 3) == 0)
				return field->low + i;
	int value = 0;
	for (size_t i = 0; i < length; i++) {
		if (text[i] < '0' || text[i] > '9' || value > 1000)
			return -1;
		value = value * 10 + (text[i] - '0');
	}
	return value;
}

static int fail(char *error, size_t error_size, int index, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *error, size_t error_size, int index, const char *format, ...)
{
	int used = snprintf(error, error_size, "field %d (%s): ", index + 1, fields[index].name);
	if (used >= 0 && (size_t)used < error_size) {
		va_list arguments;
		va_start(arguments, format);
		vsnprintf(error + used, error_size - (size_t)used, format, arguments);
		va_end(arguments);
	}
	return -1;
}

/* One comma-separated part: `*`, `a`, `a-b`, each maybe with `/step`. */
static int parse_part(int index, const char *text, size_t length, uint64_t *bits, char *error,
		      size_t error_size)
{
	const struct field *field = &fields[index];
	const char *slash = memchr(text, '/', length);
	size_t range_length = slash ? (size_t)(slash - text) : length;
	int low = field->low, high = field->high, step = 1;
	if (slash) {
		step = value_of(&(struct field){0}, slash + 1, length - range_length - 1);
		if (step <= 0)
			return fail(error, error_size, index,
				    "%.*s: the step must be a number above 0", (int)length, text);
	}
	if (!(range_length == 1 && text[0] == '*')) {
		const char *dash = memchr(text, '-', range_length);
		size_t first_length = dash ? (size_t)(dash - text) : range_length;
		low = value_of(field, text, first_length);
		high = dash ? value_of(field, dash + 1, range_length - first_length - 1)
			    : (slash ? field->high : low);
		if (low < 0 || high < 0)
			return fail(error, error_size, index,
				    "%.*s is not a number, a name, a range or *", (int)length,
				    text);
		if (low < field->low || high > field->high)
			return fail(error, error_size, index, "%.*s is out of %d-%d", (int)length,
				    text, field->low, field->high);
		if (low > high)
			return fail(error, error_size, index, "%.*s: a range goes from low to high",
				    (int)length, text);
	}
	for (int value = low; value <= high; value += step)
		*bits |= UINT64_C(1) << (index == 4 && value == 7 ? 0 : value);
	return 0;
}

static int parse_field(int index, const char *text, size_t length, uint64_t *bits, char *error,
		       size_t error_size)
{
	*bits = 0;
	while (length) {
		const char *comma = memchr(text, ',', length);
		size_t part = comma ? (size_t)(comma - text) : length;
		if (parse_part(index, text, part, bits, error, error_size) < 0)
			return -1;
		if (!comma)
			break;
		length -= part + 1;
		text = comma + 1;
	}
	return 0;
}

int cron_parse(const char *text, struct cron *out, char *error, size_t error_size)
{
	memset(out, 0, sizeof(*out));
	/* Tabs separate fields as spaces do: skipping only spaces here left
	 * "\t* 3 * 2" an empty minute field that never matched. */
	text += strspn(text, " \t");
	if (text[0] == '@') {
		for (size_t i = 0; i < sizeof(shorthands) / sizeof(shorthands[0]); i++)
			if (strcmp(text, shorthands[i].name) == 0)
				return cron_parse(shorthands[i].expression, out, error, error_size);
		snprintf(error, error_size,
			 "unknown %s; the names are @yearly, @annually, @monthly, @weekly, @daily, "
			 "@midnight and @hourly",
			 text);
		return -1;
	}
	uint64_t bits[5];
	int count = 0;
	while (*text) {
		size_t length = strcspn(text, " \t");
		if (count == 5) {
			snprintf(
			    error, error_size,
			    "more than five fields (minute hour day-of-month month day-of-week)");
			return -1;
		}
		if (parse_field(count, text, length, &bits[count], error, error_size) < 0)
			return -1;
		out->days_restricted |= count == 2 && !(length == 1 && text[0] == '*');
		out->weekdays_restricted |= count == 4 && !(length == 1 && text[0] == '*');
		count++;
		text += length;
		text += strspn(text, " \t");
	}
	if (count != 5) {
		snprintf(error, error_size,
			 "%d field%s where cron takes five: minute hour day-of-month month "
			 "day-of-week (or @daily, @hourly...)",
			 count, count == 1 ? "" : "s");
		return -1;
	}
	out->minutes = bits[0];
	out->hours = (uint32_t)bits[1];
	out->days = (uint32_t)bits[2];
	out->months = (uint16_t)bits[3];
	out->weekdays = (uint8_t)bits[4];
	return 0;
}

static bool leap(int year)
{
	return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

static int days_in_month(int year, int month) /* month 1..12 */
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	return month == 2 && leap(year) ? 29 : days[month - 1];
}

/* Sunday 0 (Sakamoto's method). */
static int weekday(int year, int month, int day)
{
	static const int offsets[] = {0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4};
	if (month < 3)
		year--;
	return (year + year / 4 - year / 100 + year / 400 + offsets[month - 1] + day) % 7;
}

static bool day_matches(const struct cron *cron, int year, int month, int day)
{
	bool by_date = cron->days & (UINT32_C(1) << day);
	bool by_weekday = cron->weekdays & (1u << weekday(year, month, day));
	if (cron->days_restricted && cron->weekdays_restricted)
		return by_date || by_weekday; /* Vixie cron's rule */
	return by_date && by_weekday;
}

/* Whether some minute of some day can match at all. Every day of a month
 * (29 February too) falls on every weekday in some year, so a day can
 * match when some month, day and weekday of the expression go together.
 * When none can, the search below would walk its whole bound (for an
 * empty field, or a 30 February, about 88,000 steps: most of the cron
 * fuzzer's time) to find nothing; this says so at once. */
static bool can_ever_match(const struct cron *cron)
{
	static const int longest[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (!(cron->minutes & ((UINT64_C(1) << 60) - 1)) || !(cron->hours & ((1u << 24) - 1)))
		return false;
	for (int month = 1; month <= 12; month++) {
		if (!(cron->months & (1u << month)))
			continue;
		for (int day = 1; day <= longest[month - 1]; day++)
			for (int day_of_week = 0; day_of_week < 7; day_of_week++) {
				bool by_date = cron->days & (UINT32_C(1) << day);
				bool by_weekday = cron->weekdays & (1u << day_of_week);
				if (cron->days_restricted && cron->weekdays_restricted
					? by_date || by_weekday
					: by_date && by_weekday)
					return true;
			}
	}
	return false;
}

bool cron_next(const struct cron *cron, const struct tm *after, struct tm *next)
{
	int year = after->tm_year + 1900, month = after->tm_mon + 1, day = after->tm_mday;
	int hour = after->tm_hour, minute = after->tm_min + 1;

	if (!can_ever_match(cron))
		return false;
	for (int steps = 0; steps < 5 * 366 * 24 * 2; steps++) {
		if (minute > 59) {
			minute = 0;
			hour++;
		}
		if (hour > 23) {
			hour = 0;
			day++;
		}
		if (day > days_in_month(year, month)) {
			day = 1;
			month++;
		}
		if (month > 12) {
			month = 1;
			year++;
		}
		if (!(cron->months & (1u << month))) {
			month++, day = 1, hour = 0, minute = 0;
			if (month > 12)
				month = 1, year++;
			continue;
		}
		if (!day_matches(cron, year, month, day)) {
			day++, hour = 0, minute = 0;
			continue;
		}
		if (!(cron->hours & (UINT32_C(1) << hour))) {
			hour++, minute = 0;
			continue;
		}
		while (minute <= 59 && !(cron->minutes & (UINT64_C(1) << minute)))
			minute++;
		if (minute > 59)
			continue;
		*next = (struct tm){.tm_year = year - 1900,
				    .tm_mon = month - 1,
				    .tm_mday = day,
				    .tm_hour = hour,
				    .tm_min = minute,
				    .tm_isdst = -1};
		return true;
	}
	return false;
}
