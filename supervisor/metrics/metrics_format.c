#include "supervisor/metrics/metrics_format.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *metrics_content_type(enum metrics_format format)
{
	return format == METRICS_OPENMETRICS
		   ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
		   : "text/plain; version=0.0.4; charset=utf-8";
}

/* [start, end) without the blanks around it. */
static void trim(const char **start, const char **end)
{
	while (*start < *end && (**start == ' ' || **start == '\t'))
		(*start)++;
	while (*end > *start && ((*end)[-1] == ' ' || (*end)[-1] == '\t'))
		(*end)--;
}

static bool equals(const char *start, const char *end, const char *word)
{
	size_t length = strlen(word);
	return (size_t)(end - start) == length && strncasecmp(start, word, length) == 0;
}

/* One media range of the header, "type/subtype;param=value;q=0.5". */
struct media_range {
	const char *type, *type_end;
	const char *version, *version_end; /* NULL: none given */
	double q;
};

static void parse_range(const char *start, const char *end, struct media_range *range)
{
	*range = (struct media_range){.q = 1.0};
	const char *semicolon = memchr(start, ';', (size_t)(end - start));
	range->type = start;
	range->type_end = semicolon ? semicolon : end;
	trim(&range->type, &range->type_end);
	while (semicolon) {
		const char *name = semicolon + 1;
		semicolon = memchr(name, ';', (size_t)(end - name));
		const char *parameter_end = semicolon ? semicolon : end;
		const char *equal = memchr(name, '=', (size_t)(parameter_end - name));
		if (!equal)
			continue;
		const char *name_end = equal, *value = equal + 1, *value_end = parameter_end;
		trim(&name, &name_end);
		trim(&value, &value_end);
		if (equals(name, name_end, "q")) {
			char number[16] = "";
			size_t length = (size_t)(value_end - value);
			if (length < sizeof(number))
				memcpy(number, value, length);
			range->q = strtod(number, NULL);
		} else if (equals(name, name_end, "version")) {
			range->version = value;
			range->version_end = value_end;
		}
	}
}

static bool version_is(const struct media_range *range, const char *const *versions)
{
	if (!range->version)
		return true;
	for (; *versions; versions++)
		if (equals(range->version, range->version_end, *versions))
			return true;
	return false;
}

/* Which format the range names: false when neither. */
static bool range_format(const struct media_range *range, enum metrics_format *format)
{
	static const char *const openmetrics_versions[] = {"1.0.0", "0.0.1", NULL};
	static const char *const text_versions[] = {"0.0.4", "1.0.0", NULL};
	const char *type = range->type, *end = range->type_end;
	if (equals(type, end, "application/openmetrics-text")) {
		*format = METRICS_OPENMETRICS;
		return version_is(range, openmetrics_versions);
	}
	*format = METRICS_PROMETHEUS_TEXT;
	if (equals(type, end, "text/plain"))
		return version_is(range, text_versions);
	return equals(type, end, "text/*") || equals(type, end, "*/*");
}

enum metrics_format metrics_format_for_accept(const char *accept, size_t length)
{
	enum metrics_format best = METRICS_PROMETHEUS_TEXT;
	double best_q = 0;
	const char *header_end = accept + length;
	for (const char *start = accept; start && start < header_end;) {
		const char *comma = memchr(start, ',', (size_t)(header_end - start));
		const char *end = comma ? comma : header_end;
		struct media_range range;
		parse_range(start, end, &range);
		enum metrics_format format;
		if (range_format(&range, &format) && range.q > best_q) {
			best = format;
			best_q = range.q;
		}
		start = comma ? comma + 1 : end;
	}
	return best;
}
