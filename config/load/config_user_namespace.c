/* `isolation.user`: the uid and gid maps of a task's user namespace, in the
 * form /proc/PID/uid_map takes them: lines of INSIDE OUTSIDE COUNT. They are
 * checked here the way the kernel checks them (no range past the largest
 * id, no two ranges overlapping inside or outside, at most 340 lines), so
 * that a mistake is reported at its place in the file and not when the
 * task starts. Whether corral may write them (it must be root) is for the
 * start to find out. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/blank.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const user_keys[] = {"uid_map", "gid_map", NULL};

/* (uid_t)-1 is no id: "no change" to setresuid. */
#define LARGEST_ID UINT64_C(4294967294)

#define MAP_FORM "INSIDE OUTSIDE COUNT, three whole numbers such as \"0 100000 65536\""

/* One line of a map, for the messages: where it is and its text. */
struct map_line {
	const yaml_node_t *node; /* the string or list item it comes from */
	struct where where;
	char prefix[32]; /* "line 2: " when the string has several, else "" */
	const char *text;
	size_t length;
};

/* A map being read: the ranges so far and where each came from. */
struct map_reading {
	struct id_map_range ranges[ID_MAP_RANGES_MAX];
	struct quoted texts[ID_MAP_RANGES_MAX];
	size_t count;
	size_t lines; /* all non-blank lines, counted past the limit too */
	bool valid;
};

/* One number after blanks: at least one digit, no wrap-around. */
static bool read_field(const char **cursor, uint64_t *out)
{
	*cursor += strspn(*cursor, " \t");
	return **cursor >= '0' && **cursor <= '9' && read_number(cursor, out);
}

static bool overlaps(uint64_t first, uint64_t count, uint64_t other_first, uint64_t other_count)
{
	return first < other_first + other_count && other_first < first + count;
}

static void check_range(struct load_context *context, struct map_reading *map,
			const struct map_line *line, const uint64_t fields[3])
{
	const char *const sides[] = {"inside", "outside"};
	struct quoted text = quote(line->text, line->length);

	if (fields[2] == 0) {
		report(context, line->node, &line->where, "%s%s: the count must be at least 1",
		       line->prefix, text.text);
		map->valid = false;
		return;
	}
	for (int side = 0; side < 2; side++) {
		if (fields[side] + fields[2] - 1 > LARGEST_ID) {
			report(context, line->node, &line->where,
			       "%s%s: ids %s %" PRIu64 " to %" PRIu64 " go past %" PRIu64
			       ", the largest id",
			       line->prefix, text.text, sides[side], fields[side],
			       fields[side] + fields[2] - 1, LARGEST_ID);
			map->valid = false;
			return;
		}
	}
	for (size_t i = 0; i < map->count; i++) {
		const struct id_map_range *other = &map->ranges[i];
		const uint64_t others[2] = {other->inside, other->outside};

		for (int side = 0; side < 2; side++) {
			if (!overlaps(fields[side], fields[2], others[side], other->count))
				continue;
			report(context, line->node, &line->where, "%s%s overlaps %s %s",
			       line->prefix, text.text, map->texts[i].text, sides[side]);
			map->valid = false;
			return;
		}
	}
	if (map->count == ID_MAP_RANGES_MAX)
		return; /* reported once all lines are counted */
	map->texts[map->count] = text;
	map->ranges[map->count++] = (struct id_map_range){.inside = (uint32_t)fields[0],
							  .outside = (uint32_t)fields[1],
							  .count = (uint32_t)fields[2]};
}

static void parse_line(struct load_context *context, struct map_reading *map,
		       const struct map_line *line)
{
	char *text = xstrndup(line->text, line->length);
	const char *cursor = text;
	uint64_t fields[3];
	bool well_formed = true;

	for (int i = 0; i < 3 && well_formed; i++)
		well_formed = read_field(&cursor, &fields[i]);
	if (well_formed && cursor[strspn(cursor, " \t\r")] != '\0')
		well_formed = false;
	if (!well_formed) {
		report(context, line->node, &line->where, "%s%s must be " MAP_FORM, line->prefix,
		       quote(line->text, line->length).text);
		map->valid = false;
	} else {
		check_range(context, map, line, fields);
	}
	free(text);
}

/* Every non-blank line of one string: a block scalar (`|`) ends with a
 * newline, and blank lines between ranges are harmless. */
static void parse_lines(struct load_context *context, struct map_reading *map,
			const yaml_node_t *node, const struct where *where)
{
	const char *text = expect_string(context, node, where);
	size_t number = 0, ranges = 0;

	if (!text) {
		map->valid = false;
		return;
	}
	for (int pass = 0; pass < 2; pass++) {
		number = 0;
		for (const char *start = text; *start;) {
			const char *end = strchrnul(start, '\n');
			struct map_line line = {.node = node,
						.where = *where,
						.text = start,
						.length = (size_t)(end - start)};

			number++;
			start = *end ? end + 1 : end;
			if (text_is_blank(line.text, line.length))
				continue;
			if (pass == 0) {
				ranges++;
				continue;
			}
			/* "line N" only where there is more than one. */
			if (ranges > 1)
				snprintf(line.prefix, sizeof(line.prefix), "line %zu: ", number);
			if (++map->lines <= ID_MAP_RANGES_MAX)
				parse_line(context, map, &line);
		}
	}
}

static void parse_map(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct id_map_range **out, size_t *out_count)
{
	struct map_reading *map = xcalloc(1, sizeof(*map));

	map->valid = true;
	if (node->type == YAML_SEQUENCE_NODE) {
		yaml_list_each(walk, context, node, where)
		{

			if (walk.item)
				parse_lines(context, map, walk.item, &walk.where);
		}
	} else if (node->type == YAML_SCALAR_NODE && !node_is_null(node)) {
		parse_lines(context, map, node, where);
	} else {
		report(context, node, where,
		       "must be lines of " MAP_FORM ", as one string or a list, not %s",
		       node_kind(node));
		map->valid = false;
	}
	if (map->valid && map->lines == 0) {
		report(context, node, where, "must not be empty");
		map->valid = false;
	}
	if (map->lines > ID_MAP_RANGES_MAX) {
		report(context, node, where, "has %zu lines; the kernel takes at most %d",
		       map->lines, ID_MAP_RANGES_MAX);
		map->valid = false;
	}
	if (map->valid) {
		*out = xcalloc(map->count, sizeof(**out));
		memcpy(*out, map->ranges, map->count * sizeof(**out));
		*out_count = map->count;
	}
	free(map);
}

bool user_namespace_parse(struct load_context *context, const yaml_node_t *node,
			  const struct where *where, struct isolation_config *out)
{
	const char *const map_names[] = {"uid_map", "gid_map"};
	struct id_map_range **maps[] = {&out->uid_map, &out->gid_map};
	size_t *counts[] = {&out->uid_map_count, &out->gid_map_count};
	struct map_entries fields;
	bool valid = true;

	if (!expect_map(context, node, where,
			"a map of uid_map and gid_map such as {uid_map: \"0 100000 65536\", "
			"gid_map: \"0 100000 65536\"}"))
		return false;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, user_keys);
	for (int i = 0; i < 2; i++) {
		const yaml_node_t *value = map_lookup(&fields, map_names[i]);
		char buffer[64];
		struct where field_where;

		if (!value) {
			if (!map_has_key_or_typo(&fields, user_keys, map_names[i]))
				report(
				    context, node, where,
				    "missing \"%s\" (a user namespace needs both maps; write the "
				    "ranges of uid_map again when groups map like users)",
				    map_names[i]);
			valid = false;
			continue;
		}
		field_where = where_field(where, map_names[i], buffer, sizeof(buffer));
		parse_map(context, value, &field_where, maps[i], counts[i]);
		valid &= *counts[i] > 0;
	}
	map_entries_free(&fields);
	return valid;
}
