#include "cli/import/systemd_values.h"

#include <ctype.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>

#include "base/units.h"

struct time_unit {
	const char *name;
	uint64_t us;
};

/* systemd.time(7)'s units, longest names first so that "min" is not
 * read as "m" followed by "in". */
static const struct time_unit time_units[] = {
    {"usec", 1},
    {"us", 1},
    {"µs", 1},
    {"msec", 1000},
    {"ms", 1000},
    {"seconds", 1000000},
    {"second", 1000000},
    {"sec", 1000000},
    {"s", 1000000},
    {"minutes", 60000000},
    {"minute", 60000000},
    {"min", 60000000},
    {"months", 2629800000000},
    {"month", 2629800000000},
    {"M", 2629800000000},
    {"m", 60000000},
    {"hours", 3600000000},
    {"hour", 3600000000},
    {"hr", 3600000000},
    {"h", 3600000000},
    {"days", 86400000000},
    {"day", 86400000000},
    {"d", 86400000000},
    {"weeks", 604800000000},
    {"week", 604800000000},
    {"w", 604800000000},
    {"years", 31557600000000},
    {"year", 31557600000000},
    {"y", 31557600000000},
};

int systemd_timespan_ms(const char *text, uint64_t *ms, bool *infinite)
{
	*infinite = false;
	while (isspace((unsigned char)*text))
		text++;
	if (strcmp(text, "infinity") == 0) {
		*infinite = true;
		*ms = 0;
		return 0;
	}
	uint64_t total_us = 0;
	const char *p = text;
	if (!*p)
		return -1;
	while (*p) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		/* Digits, with a fraction maybe ("1.5s"); no sign, exponent or
		 * hex, which systemd does not read either. */
		if (!isdigit((unsigned char)*p) && *p != '.')
			return -1;
		double number = 0, scale = 1;
		bool fraction = false;
		for (; isdigit((unsigned char)*p) || (*p == '.' && !fraction); p++) {
			if (*p == '.')
				fraction = true;
			else if (fraction)
				number += (*p - '0') * (scale /= 10);
			else
				number = number * 10 + (*p - '0');
		}
		if (number > 1e12) /* past 30,000 years: no time span systemd takes */
			return -1;
		while (isspace((unsigned char)*p))
			p++;
		uint64_t unit = 1000000;
		size_t matched = 0;
		for (size_t i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++) {
			size_t length = strlen(time_units[i].name);
			if (strncmp(p, time_units[i].name, length) == 0 &&
			    !isalpha((unsigned char)p[length])) {
				unit = time_units[i].us;
				matched = length;
				break;
			}
		}
		if (!matched && isalpha((unsigned char)*p))
			return -1;
		p += matched;
		double us = number * (double)unit;
		if (us > 1e18 || total_us > UINT64_MAX / 2)
			return -1;
		total_us += (uint64_t)us;
	}
	*ms = total_us / 1000;
	return 0;
}

const char *duration_text(uint64_t ms)
{
	static char text[64];
	format_duration_ms(ms, text, sizeof(text));
	return text;
}

int systemd_size_bytes(const char *text, uint64_t *bytes, bool *infinite)
{
	*infinite = strcmp(text, "infinity") == 0;
	if (*infinite) {
		*bytes = UINT64_MAX;
		return 0;
	}
	char *end;
	if (!isdigit((unsigned char)*text))
		return -1;
	unsigned long long number = strtoull(text, &end, 10);
	static const char suffixes[] = "KMGTPE";
	uint64_t factor = 1;
	if (*end) {
		const char *at = strchr(suffixes, toupper((unsigned char)*end));
		if (!at || end[1])
			return -1;
		for (long i = 0; i <= at - suffixes; i++)
			factor *= 1024;
	}
	if (number > UINT64_MAX / factor)
		return -1;
	*bytes = (uint64_t)number * factor;
	return 0;
}

unsigned capability_count(void)
{
	return CAP_LAST_CAP + 1 > 64 ? 64 : CAP_LAST_CAP + 1;
}

const char *capability_config_name(unsigned capability)
{
	static char name[64];
	char *full = cap_to_name((cap_value_t)capability);
	const char *bare = full && strncasecmp(full, "cap_", 4) == 0 ? full + 4 : full;
	snprintf(name, sizeof(name), "%s", bare ? bare : "?");
	cap_free(full);
	for (char *p = name; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return name;
}

int systemd_capabilities(const char *text, uint64_t *mask, bool *inverted, char *unknown,
			 unsigned unknown_size)
{
	*mask = 0;
	*inverted = *text == '~';
	if (*inverted)
		text++;
	char *copy = strdup(text), *save = NULL;
	int result = 0;
	for (char *word = strtok_r(copy, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
		cap_value_t value;
		if (cap_from_name(word, &value) < 0 || (unsigned)value >= capability_count()) {
			snprintf(unknown, unknown_size, "%s", word);
			result = -1;
			break;
		}
		*mask |= UINT64_C(1) << value;
	}
	free(copy);
	return result;
}
