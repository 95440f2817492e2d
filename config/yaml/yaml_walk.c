#include "config/yaml/yaml_walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "config/yaml/diagnostics.h"

struct where where_field(const struct where *parent, const char *name, char *buffer, size_t size)
{
	if (parent->field[0])
		snprintf(buffer, size, "%s.%s", parent->field, name);
	else
		snprintf(buffer, size, "%s", name);
	return (struct where){.owner = parent->owner, .field = buffer};
}

size_t list_length(const yaml_node_t *list)
{
	return (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
}

const yaml_node_t *list_item(struct load_context *context, const yaml_node_t *list, size_t index,
			     const struct where *where, char *buffer, size_t size,
			     struct where *item_where)
{
	snprintf(buffer, size, "%s[%zu]", where->field, index);
	*item_where = (struct where){.owner = where->owner, .field = buffer};
	return yaml_document_get_node(context->document, list->data.sequence.items.start[index]);
}

bool list_walk_next(struct load_context *context, const yaml_node_t *list,
		    const struct where *where, struct list_walk *walk)
{
	walk->index++;
	if (walk->index >= list_length(list))
		return false;
	walk->item = list_item(context, list, walk->index, where, walk->field, sizeof(walk->field),
			       &walk->where);
	return true;
}

struct source_location node_location(const yaml_node_t *node)
{
	/* libyaml counts from 0; editors and compilers from 1. */
	return (struct source_location){
	    .line = (unsigned)(node->start_mark.line & YAML_MARK_LINE_MASK) + 1,
	    .column = (unsigned)node->start_mark.column + 1,
	    .file = (unsigned)(node->start_mark.line >> YAML_MARK_FILE_SHIFT),
	};
}

const char *node_file(const struct load_context *context, const yaml_node_t *node)
{
	unsigned file = node_location(node).file;
	return file < context->file_count ? context->files[file] : context->path;
}

static void report_where(struct load_context *context, struct source_location location,
			 const struct where *where, const char *format, va_list arguments)
{
	const char *owner = where->owner, *field = where->field;
	char *message = xvasprintf(format, arguments);
	diagnostics_add(context->diagnostics, location, "%s%s%s%s%s", owner, owner[0] ? ": " : "",
			field, field[0] ? ": " : "", message);
	free(message);
}

void report(struct load_context *context, const yaml_node_t *node, const struct where *where,
	    const char *format, ...)
{
	va_list arguments;
	va_start(arguments, format);
	report_where(context, node_location(node), where, format, arguments);
	va_end(arguments);
}

/* Characters in the first `bytes` bytes of UTF-8 text: libyaml's marks
 * (index, column) count characters, not bytes. */
static size_t characters_in(const char *text, size_t bytes)
{
	size_t count = 0;
	for (size_t i = 0; i < bytes; i++)
		count += ((unsigned char)text[i] & 0xC0) != 0x80;
	return count;
}

struct source_location scalar_location(const yaml_node_t *node, size_t offset)
{
	struct source_location at = node_location(node);
	const char *value = (const char *)node->data.scalar.value;
	size_t length = node->data.scalar.length;
	size_t written = node->end_mark.index - node->start_mark.index;
	bool one_line = !memchr(value, '\n', length);
	bool plain = node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	/* Quoted without escapes: the text between the quotes is the value. */
	bool quoted = (node->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
		       node->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE) &&
		      written == characters_in(value, length) + 2;
	if (one_line && (plain || quoted))
		at.column += (unsigned)characters_in(value, offset < length ? offset : length) +
			     (quoted ? 1 : 0);
	return at;
}

void report_at(struct load_context *context, const yaml_node_t *node, size_t offset,
	       const struct where *where, const char *format, ...)
{
	va_list arguments;
	va_start(arguments, format);
	report_where(context, scalar_location(node, offset), where, format, arguments);
	va_end(arguments);
}

bool node_is_null(const yaml_node_t *node)
{
	const char *value = (const char *)node->data.scalar.value;

	/* Only plain scalars: a quoted "null" is the string null. */
	if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return node->data.scalar.length == 0 || strcmp(value, "~") == 0 ||
	       strcmp(value, "null") == 0 || strcmp(value, "Null") == 0 ||
	       strcmp(value, "NULL") == 0;
}

const char *node_kind(const yaml_node_t *node)
{
	switch (node->type) {
	case YAML_MAPPING_NODE:
		return "a map";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_SCALAR_NODE:
		return node_is_null(node) ? "null" : "a string";
	case YAML_NO_NODE:
		break;
	}
	return "nothing";
}

static bool expect_type(struct load_context *context, const yaml_node_t *node,
			const struct where *where, yaml_node_type_t type, const char *expected)
{
	if (node->type == type)
		return true;
	report(context, node, where, "must be %s, not %s", expected, node_kind(node));
	return false;
}

bool expect_map(struct load_context *context, const yaml_node_t *node, const struct where *where,
		const char *expected)
{
	return expect_type(context, node, where, YAML_MAPPING_NODE, expected);
}

bool expect_list(struct load_context *context, const yaml_node_t *node, const struct where *where,
		 const char *expected)
{
	return expect_type(context, node, where, YAML_SEQUENCE_NODE, expected);
}

const char *expect_string(struct load_context *context, const yaml_node_t *node,
			  const struct where *where)
{
	if (node->type != YAML_SCALAR_NODE || node_is_null(node)) {
		report(context, node, where, "must be a string, not %s", node_kind(node));
		return NULL;
	}
	/* "\0" in a double-quoted string: exec and the environment would
	 * silently cut the text there. */
	if (memchr(node->data.scalar.value, '\0', node->data.scalar.length)) {
		report(context, node, where, "must not contain a NUL character");
		return NULL;
	}
	return (const char *)node->data.scalar.value;
}

const char *expect_absolute(struct load_context *context, const yaml_node_t *node,
			    const struct where *where)
{
	const char *text = expect_string(context, node, where);

	if (text && text[0] != '/') {
		report(context, node, where, "must be an absolute path, not %s",
		       quote(text, node->data.scalar.length).text);
		return NULL;
	}
	return text;
}

bool expect_bool(struct load_context *context, const yaml_node_t *node, const struct where *where,
		 bool *out)
{
	static const char *const true_spellings[] = {"true", "True", "TRUE"};
	static const char *const false_spellings[] = {"false", "False", "FALSE"};
	const char *value;

	if (node->type != YAML_SCALAR_NODE || node_is_null(node)) {
		report(context, node, where, "must be true or false, not %s", node_kind(node));
		return false;
	}
	value = (const char *)node->data.scalar.value;
	for (size_t i = 0; i < 3; i++) {
		if (strcmp(value, true_spellings[i]) == 0) {
			*out = true;
			return true;
		}
		if (strcmp(value, false_spellings[i]) == 0) {
			*out = false;
			return true;
		}
	}
	report(context, node, where, "must be true or false, not %s",
	       quote(value, node->data.scalar.length).text);
	return false;
}

/* "a, b or c" */
static char *join_alternatives(const char *const names[], size_t count)
{
	size_t size = 1;
	char *text;

	for (size_t i = 0; i < count; i++)
		size += strlen(names[i]) + 4;
	text = xcalloc(size, 1);
	for (size_t i = 0; i < count; i++) {
		if (i > 0)
			strcat(text, i + 1 == count ? " or " : ", ");
		strcat(text, names[i]);
	}
	return text;
}

int expect_keyword(struct load_context *context, const yaml_node_t *node, const struct where *where,
		   const char *noun, const char *const names[], size_t name_count)
{
	const char *value = expect_string(context, node, where);
	const char *suggestion;
	char *alternatives;

	if (!value)
		return -1;
	for (size_t i = 0; i < name_count; i++) {
		if (strcmp(value, names[i]) == 0)
			return (int)i;
	}
	suggestion = suggest_nearest(value, node->data.scalar.length, names, name_count);
	alternatives = join_alternatives(names, name_count);
	if (suggestion)
		report(context, node, where, "unknown %s %s; did you mean \"%s\"?", noun,
		       quote(value, node->data.scalar.length).text, suggestion);
	else
		report(context, node, where, "unknown %s %s (use %s)", noun,
		       quote(value, node->data.scalar.length).text, alternatives);
	free(alternatives);
	return -1;
}

bool expect_duration(struct load_context *context, const yaml_node_t *node,
		     const struct where *where, uint64_t *out_ms)
{
	const char *value = expect_string(context, node, where);
	const char *why = "";

	if (!value)
		return false;
	if (parse_duration_ms(value, out_ms, &why) < 0) {
		report(context, node, where, "invalid duration %s: %s",
		       quote(value, node->data.scalar.length).text, why);
		return false;
	}
	return true;
}

bool expect_size(struct load_context *context, const yaml_node_t *node, const struct where *where,
		 uint64_t *out_bytes)
{
	const char *value, *why = "";

	/* "must be a string" would mislead: 256M is written without quotes. */
	if (node->type != YAML_SCALAR_NODE || node_is_null(node)) {
		report(context, node, where, "must be a size such as 512K, 256M or 1G, not %s",
		       node_kind(node));
		return false;
	}
	value = expect_string(context, node, where);
	if (!value)
		return false;
	if (parse_size_bytes(value, out_bytes, &why) < 0) {
		report(context, node, where, "invalid size %s: %s",
		       quote(value, node->data.scalar.length).text, why);
		return false;
	}
	return true;
}

struct numbered_key {
	const struct map_entry *entry;
	size_t order;
};

static int compare_keys(const void *a, const void *b)
{
	const struct numbered_key *left = a, *right = b;
	size_t shorter = left->entry->key_length < right->entry->key_length
			     ? left->entry->key_length
			     : right->entry->key_length;
	int by_text = memcmp(left->entry->key, right->entry->key, shorter);

	if (by_text)
		return by_text;
	if (left->entry->key_length != right->entry->key_length)
		return left->entry->key_length < right->entry->key_length ? -1 : 1;
	return left->order < right->order ? -1 : left->order > right->order;
}

/* Sorting finds the repeats in O(n log n): a fuzzer's map of a million keys
 * must not take a quadratic scan. Returns which entries repeat an earlier
 * one. */
static bool *find_repeated_keys(struct load_context *context, const struct map_entries *entries,
				const struct where *where, const char *noun)
{
	struct numbered_key *sorted = xcalloc(entries->count, sizeof(*sorted));
	bool *repeated = xcalloc(entries->count, sizeof(*repeated));
	size_t first = 0;

	for (size_t i = 0; i < entries->count; i++)
		sorted[i] = (struct numbered_key){&entries->items[i], i};
	qsort(sorted, entries->count, sizeof(*sorted), compare_keys);

	for (size_t i = 1; i < entries->count; i++) {
		const struct map_entry *original = sorted[first].entry;
		const struct map_entry *entry = sorted[i].entry;

		if (entry->key_length != original->key_length ||
		    memcmp(entry->key, original->key, entry->key_length) != 0) {
			first = i;
			continue;
		}
		repeated[sorted[i].order] = true;
		struct source_location first_place = node_location(original->key_node);
		if (first_place.file == node_location(entry->key_node).file)
			report(context, entry->key_node, where,
			       "duplicate %s %s (first defined at line %u)", noun,
			       quote(entry->key, entry->key_length).text, first_place.line);
		else
			report(context, entry->key_node, where,
			       "duplicate %s %s (first defined at %s:%u)", noun,
			       quote(entry->key, entry->key_length).text,
			       node_file(context, original->key_node), first_place.line);
	}
	free(sorted);
	return repeated;
}

void map_collect(struct load_context *context, const yaml_node_t *map, const struct where *where,
		 const char *noun, struct map_entries *out)
{
	size_t pair_count = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
	struct map_entries all = {.items = xcalloc(pair_count, sizeof(*all.items))};
	bool *repeated;

	for (size_t i = 0; i < pair_count; i++) {
		const yaml_node_pair_t *pair = &map->data.mapping.pairs.start[i];
		yaml_node_t *key = yaml_document_get_node(context->document, pair->key);
		yaml_node_t *value = yaml_document_get_node(context->document, pair->value);

		if (!key || !value)
			continue; /* libyaml never builds these; be safe anyway */
		if (key->type != YAML_SCALAR_NODE) {
			report(context, key, where, "keys must be strings, not %s", node_kind(key));
			continue;
		}
		all.items[all.count++] = (struct map_entry){
		    .key = (const char *)key->data.scalar.value,
		    .key_length = key->data.scalar.length,
		    .key_node = key,
		    .value = value,
		};
	}

	repeated = find_repeated_keys(context, &all, where, noun);
	*out = (struct map_entries){.items = xcalloc(all.count, sizeof(*out->items))};
	for (size_t i = 0; i < all.count; i++) {
		if (!repeated[i])
			out->items[out->count++] = all.items[i];
	}
	free(repeated);
	free(all.items);
}

void map_entries_free(struct map_entries *entries)
{
	free(entries->items);
	*entries = (struct map_entries){0};
}

static bool is_known_key(const struct map_entry *entry, const char *const known[])
{
	for (size_t i = 0; known[i]; i++) {
		if (strlen(known[i]) == entry->key_length &&
		    memcmp(known[i], entry->key, entry->key_length) == 0)
			return true;
	}
	return false;
}

void map_check_keys(struct load_context *context, const struct map_entries *entries,
		    const struct where *where, const char *const known[])
{
	size_t known_count = 0;
	char *alternatives;

	while (known[known_count])
		known_count++;
	alternatives = join_alternatives(known, known_count);

	for (size_t i = 0; i < entries->count; i++) {
		const struct map_entry *entry = &entries->items[i];
		const char *suggestion;

		if (is_known_key(entry, known))
			continue;
		suggestion = suggest_nearest(entry->key, entry->key_length, known, known_count);
		if (suggestion)
			report(context, entry->key_node, where,
			       "unknown key %s; did you mean \"%s\"?",
			       quote(entry->key, entry->key_length).text, suggestion);
		else
			report(context, entry->key_node, where, "unknown key %s (expected %s)",
			       quote(entry->key, entry->key_length).text, alternatives);
	}
	free(alternatives);
}

bool map_has_key_or_typo(const struct map_entries *entries, const char *const known[],
			 const char *key)
{
	size_t known_count = 0;

	while (known[known_count])
		known_count++;
	for (size_t i = 0; i < entries->count; i++) {
		const struct map_entry *entry = &entries->items[i];
		const char *suggestion;

		if (entry->key_length == strlen(key) &&
		    memcmp(entry->key, key, entry->key_length) == 0)
			return true;
		if (is_known_key(entry, known))
			continue;
		suggestion = suggest_nearest(entry->key, entry->key_length, known, known_count);
		if (suggestion && strcmp(suggestion, key) == 0)
			return true;
	}
	return false;
}

yaml_node_t *map_lookup(const struct map_entries *entries, const char *key)
{
	size_t length = strlen(key);

	for (size_t i = 0; i < entries->count; i++) {
		if (entries->items[i].key_length == length &&
		    memcmp(entries->items[i].key, key, length) == 0)
			return entries->items[i].value;
	}
	return NULL;
}
