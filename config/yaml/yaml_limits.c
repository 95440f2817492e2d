/* Bounds on what a YAML text may make the loader do, checked in one pass
 * over libyaml's events before the document is built:
 * - nesting depth: libyaml's scanner looks at every open flow level for
 *   each token, so 80,000 `[` take it 13 s; stopping at the 65th costs
 *   nothing;
 * - values after aliases are expanded: an alias is a reference in the
 *   document, but the config reader copies what it points to, so 300
 *   aliases of a 100,000-item list made `corral check` use 1.2 GB
 *   ("billion laughs"). go-yaml and Kubernetes bound this too.
 * Real configs stay far below both. */
#include "config/yaml/yaml_limits.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/xmalloc.h"

/* An anchor's size: the values its node holds, aliases inside expanded. */
struct anchor {
	char *name;
	size_t size;
	size_t first; /* `values` when it began */
	int depth;    /* the depth its collection closes back to; -1: closed */
};

struct limits_pass {
	struct anchor *anchors;
	size_t anchor_count, anchor_capacity;
	size_t values; /* expanded so far */
	int depth;
};

static void begin_anchor(struct limits_pass *pass, const yaml_char_t *name, bool collection)
{
	if (!name)
		return;
	if (pass->anchor_count == pass->anchor_capacity) {
		pass->anchor_capacity = pass->anchor_capacity ? 2 * pass->anchor_capacity : 16;
		pass->anchors =
		    xreallocarray(pass->anchors, pass->anchor_capacity, sizeof(*pass->anchors));
	}
	pass->anchors[pass->anchor_count++] = (struct anchor){
	    .name = xstrdup((const char *)name),
	    .size = collection ? 0 : 1,
	    .first = pass->values - 1, /* the value just counted is its first */
	    .depth = collection ? pass->depth - 1 : -1,
	};
}

/* A collection closed: the anchors it started have their size now. */
static void end_collection(struct limits_pass *pass)
{
	for (size_t i = pass->anchor_count; i-- > 0;)
		if (pass->anchors[i].depth == pass->depth) {
			pass->anchors[i].size = pass->values - pass->anchors[i].first;
			pass->anchors[i].depth = -1;
		}
}

/* The latest anchor of that name (YAML lets a name be anchored again). */
static size_t alias_size(const struct limits_pass *pass, const yaml_char_t *name)
{
	for (size_t i = pass->anchor_count; i-- > 0;)
		if (strcmp(pass->anchors[i].name, (const char *)name) == 0)
			return pass->anchors[i].size;
	return 1; /* unknown: the loader says so */
}

static struct source_location location_of(const yaml_mark_t *mark, unsigned file)
{
	return (struct source_location){
	    .line = (unsigned)mark->line + 1, .column = (unsigned)mark->column + 1, .file = file};
}

/* Whether the text could break a bound at all, from its bytes alone. Every
 * list or map that opens costs a byte of its own: `[`, `{`, a block
 * list's `-`, a map key's `:` (or the explicit `?`), each a byte in UTF-8
 * and UTF-16 alike; and only an alias (`*`) adds values. So a text with no
 * `*` and at most YAML_DEPTH_MAX of those bytes is within both bounds,
 * and the pass below (a second libyaml parser, most of the config
 * fuzzer's cost on short inputs) would only say so. */
static bool may_break_limits(const char *buffer, size_t size)
{
	size_t openers = 0;

	for (size_t i = 0; i < size; i++) {
		switch (buffer[i]) {
		case '*':
			return true;
		case '[':
		case '{':
		case '-':
		case ':':
		case '?':
			if (++openers > YAML_DEPTH_MAX)
				return true;
			break;
		default:
			break;
		}
	}
	return false;
}

bool yaml_within_limits(const char *buffer, size_t size, unsigned file,
			struct config_diagnostics *diagnostics)
{
	yaml_parser_t parser;
	struct limits_pass pass = {0};
	bool ok = true, done = false;

	if (!may_break_limits(buffer, size))
		return true;
	if (!yaml_parser_initialize(&parser))
		return true; /* the loader reports running out of memory */
	yaml_parser_set_input_string(&parser, (const unsigned char *)buffer, size);
	while (ok && !done) {
		yaml_event_t event;
		if (!yaml_parser_parse(&parser, &event))
			break; /* a syntax error: the loader reports it, with its place */
		switch (event.type) {
		case YAML_SCALAR_EVENT:
			pass.values++;
			begin_anchor(&pass, event.data.scalar.anchor, false);
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			pass.values++;
			pass.depth++;
			begin_anchor(&pass,
				     event.type == YAML_SEQUENCE_START_EVENT
					 ? event.data.sequence_start.anchor
					 : event.data.mapping_start.anchor,
				     true);
			if (pass.depth > YAML_DEPTH_MAX) {
				diagnostics_add(diagnostics, location_of(&event.start_mark, file),
						"lists and maps nested more than %d deep",
						YAML_DEPTH_MAX);
				ok = false;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			pass.depth--;
			end_collection(&pass);
			break;
		case YAML_ALIAS_EVENT:
			pass.values += alias_size(&pass, event.data.alias.anchor);
			if (pass.values > YAML_VALUES_MAX) {
				diagnostics_add(
				    diagnostics, location_of(&event.start_mark, file),
				    "aliases expand the config to more than %d values "
				    "(*%s is one of them); write the values out or share "
				    "them through a group",
				    YAML_VALUES_MAX, (const char *)event.data.alias.anchor);
				ok = false;
			}
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&event);
	}
	for (size_t i = 0; i < pass.anchor_count; i++)
		free(pass.anchors[i].name);
	free(pass.anchors);
	yaml_parser_delete(&parser);
	return ok;
}
