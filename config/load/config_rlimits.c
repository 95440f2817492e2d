/* `isolation.rlimits`: setrlimit(2) values by resource name. Only the
 * values are checked; whether the kernel takes them (nofile above
 * fs.nr_open, a hard limit above corral's own without CAP_SYS_RESOURCE) is
 * found out when the task starts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/units.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

/* The RLIMIT_ names, lowercase, without the prefix... */
static const char *const rlimit_keys[] = {
    "as",     "core",  "cpu", "data",   "fsize",  "locks",      "memlock", "msgqueue", "nice",
    "nofile", "nproc", "rss", "rtprio", "rttime", "sigpending", "stack",   NULL,
};

/* ...and, in the same order, what each one is. */
struct rlimit_kind {
	int resource;
	bool bytes; /* takes a size such as 8M */
};

static const struct rlimit_kind rlimit_kinds[] = {
    {RLIMIT_AS, true},      {RLIMIT_CORE, true},     {RLIMIT_CPU, false},
    {RLIMIT_DATA, true},    {RLIMIT_FSIZE, true},    {RLIMIT_LOCKS, false},
    {RLIMIT_MEMLOCK, true}, {RLIMIT_MSGQUEUE, true}, {RLIMIT_NICE, false},
    {RLIMIT_NOFILE, false}, {RLIMIT_NPROC, false},   {RLIMIT_RSS, true},
    {RLIMIT_RTPRIO, false}, {RLIMIT_RTTIME, false},  {RLIMIT_SIGPENDING, false},
    {RLIMIT_STACK, true},
};
#define RLIMIT_KIND_COUNT (sizeof(rlimit_kinds) / sizeof(rlimit_kinds[0]))
_Static_assert(RLIMIT_KIND_COUNT + 1 == sizeof(rlimit_keys) / sizeof(rlimit_keys[0]),
	       "one name per resource");
/* Every resource once at most, so the model's array always has room. */
_Static_assert(RLIMIT_KIND_COUNT <= ISOLATION_RLIMITS_MAX, "one slot per resource");

#define UNLIMITED UINT64_MAX /* RLIM_INFINITY */

/* All digits, without wrapping around. */
static bool read_count(const char *text, uint64_t *out)
{
	const char *cursor = text;
	return *text && read_number(&cursor, out) && !*cursor;
}

/* One limit: a number (a size for the byte limits) or "unlimited". */
static bool parse_limit(struct load_context *context, const yaml_node_t *node,
			const struct where *where, const struct rlimit_kind *limit, uint64_t *out)
{
	const char *text, *why = "";

	if (node->type != YAML_SCALAR_NODE || node_is_null(node)) {
		report(context, node, where, "must be %s, \"unlimited\" or [soft, hard], not %s",
		       limit->bytes ? "a size such as 8M" : "a whole number", node_kind(node));
		return false;
	}
	text = expect_string(context, node, where);
	if (!text)
		return false;
	if (strcmp(text, "unlimited") == 0) {
		*out = UNLIMITED;
		return true;
	}
	if (limit->bytes) {
		if (parse_size_bytes(text, out, &why) == 0)
			return true;
		report(context, node, where, "invalid size %s: %s",
		       quote(text, node->data.scalar.length).text, why);
		return false;
	}
	if (read_count(text, out))
		return true;
	report(context, node, where, "must be a whole number or \"unlimited\", not %s%s",
	       quote(text, node->data.scalar.length).text,
	       strspn(text, "0123456789") == strlen(text) ? " (too large)" : "");
	return false;
}

/* [soft, hard]: two limits, soft not above hard. */
static bool parse_pair(struct load_context *context, const yaml_node_t *node,
		       const struct where *where, const struct rlimit_kind *limit,
		       struct rlimit_config *out)
{
	size_t count = list_length(node);
	const yaml_node_t *items[2];
	uint64_t values[2];
	bool valid = true;

	if (count != 2) {
		report(context, node, where, "must be [soft, hard], two values, not %zu", count);
		return false;
	}
	for (size_t i = 0; i < 2; i++) {
		char field[64];
		struct where item_where;

		items[i] = list_item(context, node, i, where, field, sizeof(field), &item_where);
		valid &= items[i] && parse_limit(context, items[i], &item_where, limit, &values[i]);
	}
	if (!valid)
		return false;
	if (values[0] > values[1]) {
		/* Both are valid scalars: their text is safe to show as it is. */
		report(context, node, where,
		       "the soft limit (%s) must not exceed the hard limit (%s)",
		       (const char *)items[0]->data.scalar.value,
		       (const char *)items[1]->data.scalar.value);
		return false;
	}
	out->soft = values[0];
	out->hard = values[1];
	return true;
}

void rlimits_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		   struct rlimit_config **out, size_t *count)
{
	struct map_entries fields;

	free(*out);
	*out = NULL;
	*count = 0;
	if (!expect_map(context, node, where, "a map of limits such as {nofile: 4096}"))
		return;
	struct rlimit_config *limits = xcalloc(ISOLATION_RLIMITS_MAX, sizeof(*limits));
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, rlimit_keys);
	for (size_t i = 0; i < RLIMIT_KIND_COUNT; i++) {
		const struct rlimit_kind *limit = &rlimit_kinds[i];
		const yaml_node_t *value = map_lookup(&fields, rlimit_keys[i]);
		struct rlimit_config parsed = {.resource = limit->resource};
		char buffer[64];
		struct where field_where;
		bool valid;

		if (!value)
			continue;
		field_where = where_field(where, rlimit_keys[i], buffer, sizeof(buffer));
		if (value->type == YAML_SEQUENCE_NODE) {
			valid = parse_pair(context, value, &field_where, limit, &parsed);
		} else {
			valid = parse_limit(context, value, &field_where, limit, &parsed.soft);
			parsed.hard = parsed.soft;
		}
		if (valid)
			limits[(*count)++] = parsed;
	}
	map_entries_free(&fields);
	if (*count)
		*out = limits;
	else
		free(limits);
}
