/* Walking a libyaml document against the config schema: typed access to
 * nodes that reports what was expected and what was found, mappings with
 * duplicate and unknown keys reported, and the scalar types the schema uses
 * (strings, booleans, keywords, durations, sizes).
 *
 * Every helper reports its own errors and returns false/NULL, so that the
 * callers only decide what to do next. A `struct where` names what is being
 * read, as every message starts: "web/app: restart.delay: ...". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "config/yaml/diagnostics.h"

struct profile_exclusions;

struct load_context {
	yaml_document_t *document;
	struct config_diagnostics *diagnostics;
	const char *path; /* the config file's, for the paths relative to it */
	/* A config of several files: their names, by node_location().file. */
	const char *const *files;
	size_t file_count;
	/* The active profiles (NULL-terminated; NULL: none), and the groups
	 * and tasks left out for being in none of them (config_profiles.c). */
	const char *const *profiles;
	/* Per active profile: some group or task lists it (a name no one
	 * lists is likely a typo, said as a warning). */
	bool *profile_listed;
	struct profile_exclusions *excluded;
};

/* The file `node` came from (for paths relative to it), or NULL. */
const char *node_file(const struct load_context *context, const yaml_node_t *node);

struct where {
	const char *owner; /* "web/app", "group web"; "" at the top level */
	const char *field; /* "restart.delay", "command[1]"; "" for the owner */
};

/* The field `name` inside `parent` (parent's field, a dot, the name), its
 * text written into `buffer`. */
struct where where_field(const struct where *parent, const char *name, char *buffer, size_t size);

/* A document merged from several files (config_sources.c) keeps each
 * node's file in the high bits of its mark's line: libyaml has no field
 * for it, and no file has 2^32 lines. */
#define YAML_MARK_FILE_SHIFT 32
#define YAML_MARK_LINE_MASK  ((UINT64_C(1) << YAML_MARK_FILE_SHIFT) - 1)

struct source_location node_location(const yaml_node_t *node);

/* How many items a list node has. */
size_t list_length(const yaml_node_t *list);

/* Item `index` of `list` (NULL when the document lacks it), with
 * *item_where naming it FIELD[index], written into `buffer`. */
const yaml_node_t *list_item(struct load_context *context, const yaml_node_t *list, size_t index,
			     const struct where *where, char *buffer, size_t size,
			     struct where *item_where);

/* The walk of a list's items (yaml_list_each): the item (NULL when the
 * document lacks it), where it is for messages ("FIELD[index]", written
 * into `field`), and its index. */
struct list_walk {
	size_t index;
	const yaml_node_t *item;
	struct where where;
	char field[128];
};

/* The next item of `list` into `walk`: false after the last. */
bool list_walk_next(struct load_context *context, const yaml_node_t *list,
		    const struct where *where, struct list_walk *walk);

/* For each item of the list node `list`: `walk.item`, `&walk.where`,
 * `walk.index` in the body. */
#define yaml_list_each(walk, context, list, where)                                                 \
	for (struct list_walk walk = {.index = SIZE_MAX};                                          \
	     list_walk_next((context), (list), (where), &walk);)

/* Adds "OWNER: FIELD: message" at the node, leaving out empty parts. */
void report(struct load_context *context, const yaml_node_t *node, const struct where *where,
	    const char *format, ...) __attribute__((format(printf, 4, 5)));

/* Where byte `offset` of a scalar's value is, as near as its style lets
 * us say: exact on one line of a plain or quoted scalar without escapes,
 * else the scalar's start. */
struct source_location scalar_location(const yaml_node_t *node, size_t offset);

/* report() at byte `offset` of the scalar's value (scalar_location). */
void report_at(struct load_context *context, const yaml_node_t *node, size_t offset,
	       const struct where *where, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

/* Plain "", "~" or "null" -- what an empty value such as `cwd:` gives. */
bool node_is_null(const yaml_node_t *node);

/* For "must be X, not <kind>": "a map", "a list", "a string", "null". */
const char *node_kind(const yaml_node_t *node);

/* Checks the node's type; `expected` completes "must be ...". */
bool expect_map(struct load_context *context, const yaml_node_t *node, const struct where *where,
		const char *expected);
bool expect_list(struct load_context *context, const yaml_node_t *node, const struct where *where,
		 const char *expected);

/* A scalar that can become a C string: not null, no NUL byte inside. */
const char *expect_string(struct load_context *context, const yaml_node_t *node,
			  const struct where *where);

/* A string starting with '/': "must be an absolute path, not ..." when
 * it does not. */
const char *expect_absolute(struct load_context *context, const yaml_node_t *node,
			    const struct where *where);

/* true/false in YAML 1.2's spellings (True, FALSE...). */
bool expect_bool(struct load_context *context, const yaml_node_t *node, const struct where *where,
		 bool *out);

/* One of `names`: returns its index, or -1 after reporting
 * `WHERE: unknown NOUN "x"; did you mean "y"?` (or the list of names). */
int expect_keyword(struct load_context *context, const yaml_node_t *node, const struct where *where,
		   const char *noun, const char *const names[], size_t name_count);

/* A duration (units.h); the message quotes the text and says why. */
bool expect_duration(struct load_context *context, const yaml_node_t *node,
		     const struct where *where, uint64_t *out_ms);

/* A size in bytes (units.h), reported the way durations are. */
bool expect_size(struct load_context *context, const yaml_node_t *node, const struct where *where,
		 uint64_t *out_bytes);

struct map_entry {
	const char *key; /* NUL-terminated; may hold a NUL itself: see key_length */
	size_t key_length;
	yaml_node_t *key_node;
	yaml_node_t *value;
};

/* The entries of a mapping in file order, each key once. */
struct map_entries {
	struct map_entry *items;
	size_t count;
};

/* Collects the entries of a mapping node (the caller checked the type).
 * Reports keys that are not strings, and repeated keys as
 * `WHERE: duplicate NOUN "x" (first defined at line N)` at the repeat, keeping
 * the first. */
void map_collect(struct load_context *context, const yaml_node_t *map, const struct where *where,
		 const char *noun, struct map_entries *out);
void map_entries_free(struct map_entries *entries);

/* Reports every key that is not one of `known` (NULL-terminated), with the
 * nearest known key as a suggestion, or the list of keys when none is
 * near. */
void map_check_keys(struct load_context *context, const struct map_entries *entries,
		    const struct where *where, const char *const known[]);

/* Whether `key` is present, or an unknown key is a likely typo of it: a
 * required key written "comand" is reported once, as a typo, and not also
 * as missing. */
bool map_has_key_or_typo(const struct map_entries *entries, const char *const known[],
			 const char *key);

/* The value of `key`, or NULL when absent. */
yaml_node_t *map_lookup(const struct map_entries *entries, const char *key);
