#include "cli/import/yaml_tree.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/xmalloc.h"

static struct ytree_node *node_new(enum ytree_kind kind, const char *text)
{
	struct ytree_node *node = xcalloc(1, sizeof(*node));
	node->kind = kind;
	node->text = text ? xstrdup(text) : NULL;
	return node;
}

struct ytree_node *ytree_map(void)
{
	return node_new(YTREE_MAP, NULL);
}

struct ytree_node *ytree_list(void)
{
	struct ytree_node *list = node_new(YTREE_LIST, NULL);
	list->flow = true;
	return list;
}

struct ytree_node *ytree_string(const char *text)
{
	return node_new(YTREE_STRING, text);
}

struct ytree_node *ytree_plain(const char *text)
{
	return node_new(YTREE_PLAIN, text);
}

struct ytree_node *ytree_plainf(const char *format, ...)
{
	va_list arguments;
	va_start(arguments, format);
	char *text = xvasprintf(format, arguments);
	va_end(arguments);
	struct ytree_node *node = node_new(YTREE_PLAIN, NULL);
	node->text = text;
	return node;
}

struct ytree_node *ytree_string_list(char *const *items)
{
	struct ytree_node *list = ytree_list();
	for (size_t i = 0; items && items[i]; i++)
		ytree_append(list, ytree_string(items[i]));
	return list;
}

void ytree_free(struct ytree_node *node)
{
	if (!node)
		return;
	for (size_t i = 0; i < node->count; i++) {
		free(node->entries[i].key);
		ytree_free(node->entries[i].value);
		for (size_t c = 0; c < node->entries[i].comment_count; c++)
			free(node->entries[i].comments[c]);
		free(node->entries[i].comments);
	}
	free(node->entries);
	free(node->text);
	free(node);
}

static struct ytree_entry *entry_add(struct ytree_node *node)
{
	node->entries = xreallocarray(node->entries, node->count + 1, sizeof(*node->entries));
	struct ytree_entry *entry = &node->entries[node->count++];
	memset(entry, 0, sizeof(*entry));
	return entry;
}

struct ytree_node *ytree_copy(const struct ytree_node *node)
{
	struct ytree_node *copy = node_new(node->kind, node->text);
	copy->flow = node->flow;
	for (size_t i = 0; i < node->count; i++) {
		const struct ytree_entry *entry = &node->entries[i];
		struct ytree_entry *to = entry_add(copy);
		to->key = entry->key ? xstrdup(entry->key) : NULL;
		to->value = ytree_copy(entry->value);
		for (size_t c = 0; c < entry->comment_count; c++) {
			to->comments = xreallocarray(to->comments, to->comment_count + 1,
						     sizeof(*to->comments));
			to->comments[to->comment_count++] = xstrdup(entry->comments[c]);
		}
	}
	return copy;
}

static struct ytree_entry *entry_of(const struct ytree_node *map, const char *key)
{
	for (size_t i = 0; i < map->count; i++)
		if (strcmp(map->entries[i].key, key) == 0)
			return &map->entries[i];
	return NULL;
}

struct ytree_node *ytree_set(struct ytree_node *map, const char *key, struct ytree_node *value)
{
	struct ytree_entry *entry = entry_of(map, key);
	if (!entry) {
		entry = entry_add(map);
		entry->key = xstrdup(key);
	}
	ytree_free(entry->value);
	entry->value = value;
	return value;
}

struct ytree_node *ytree_get(const struct ytree_node *map, const char *key)
{
	struct ytree_entry *entry = entry_of(map, key);
	return entry ? entry->value : NULL;
}

void ytree_remove(struct ytree_node *map, const char *key)
{
	struct ytree_entry *entry = entry_of(map, key);
	if (!entry)
		return;
	free(entry->key);
	ytree_free(entry->value);
	for (size_t c = 0; c < entry->comment_count; c++)
		free(entry->comments[c]);
	free(entry->comments);
	size_t index = (size_t)(entry - map->entries);
	memmove(entry, entry + 1, (map->count - index - 1) * sizeof(*entry));
	map->count--;
}

struct ytree_node *ytree_child_map(struct ytree_node *map, const char *key)
{
	struct ytree_node *child = ytree_get(map, key);
	return child ? child : ytree_set(map, key, ytree_map());
}

struct ytree_node *ytree_child_list(struct ytree_node *map, const char *key)
{
	struct ytree_node *child = ytree_get(map, key);
	return child ? child : ytree_set(map, key, ytree_list());
}

void ytree_append(struct ytree_node *list, struct ytree_node *value)
{
	entry_add(list)->value = value;
}

bool ytree_list_has(const struct ytree_node *list, const char *text)
{
	for (size_t i = 0; i < list->count; i++)
		if (list->entries[i].value->text && strcmp(list->entries[i].value->text, text) == 0)
			return true;
	return false;
}

void ytree_append_unique(struct ytree_node *list, const char *text)
{
	if (!ytree_list_has(list, text))
		ytree_append(list, ytree_string(text));
}

void ytree_comment(struct ytree_node *map, const char *key, const char *format, ...)
{
	struct ytree_entry *entry = entry_of(map, key);
	if (!entry) {
		ytree_set(map, key, ytree_map());
		entry = entry_of(map, key);
	}
	va_list arguments;
	va_start(arguments, format);
	char *line = xvasprintf(format, arguments);
	va_end(arguments);
	entry->comments =
	    xreallocarray(entry->comments, entry->comment_count + 1, sizeof(*entry->comments));
	entry->comments[entry->comment_count++] = line;
}

/* Words YAML 1.1 or 1.2 would read as a boolean or null. */
static bool is_reserved_word(const char *text)
{
	static const char *const words[] = {"true", "false", "yes", "no", "on", "off",
					    "null", "y",     "n",   "~",  NULL};
	for (size_t i = 0; words[i]; i++)
		if (strcasecmp(text, words[i]) == 0)
			return true;
	return false;
}

static bool looks_numeric(const char *text)
{
	const char *p = text;
	if (*p == '+' || *p == '-' || *p == '.')
		p++;
	return *p >= '0' && *p <= '9';
}

/* Plain (unquoted) only when YAML reads it back as this very string:
 * letters, digits and a few safe characters, not a number, a boolean or
 * null, and nothing that starts an indicator. */
static bool can_be_plain(const char *text)
{
	if (!*text || is_reserved_word(text) || looks_numeric(text))
		return false;
	for (const char *p = text; *p; p++) {
		unsigned char c = (unsigned char)*p;
		bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || strchr("_./+-@=%", c);
		if (!safe)
			return false;
	}
	return text[0] != '-' && text[0] != '@' && text[0] != '%';
}

static void write_quoted(const char *text, FILE *out)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (*p == '\t')
			fputs("\\t", out);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void write_scalar(const struct ytree_node *node, FILE *out)
{
	if (node->kind == YTREE_PLAIN || can_be_plain(node->text))
		fputs(node->text, out);
	else
		write_quoted(node->text, out);
}

static void write_key(const char *key, FILE *out)
{
	if (can_be_plain(key))
		fputs(key, out);
	else
		write_quoted(key, out);
}

static void write_flow(const struct ytree_node *node, FILE *out)
{
	if (node->kind != YTREE_MAP && node->kind != YTREE_LIST) {
		write_scalar(node, out);
		return;
	}
	bool map = node->kind == YTREE_MAP;
	fputc(map ? '{' : '[', out);
	for (size_t i = 0; i < node->count; i++) {
		if (i)
			fputs(", ", out);
		if (map) {
			write_key(node->entries[i].key, out);
			fputs(": ", out);
		}
		write_flow(node->entries[i].value, out);
	}
	fputc(map ? '}' : ']', out);
}

static void write_comments(const struct ytree_entry *entry, unsigned indent, FILE *out)
{
	for (size_t c = 0; c < entry->comment_count; c++)
		fprintf(out, "%*s# %s\n", (int)indent, "", entry->comments[c]);
}

static bool is_inline(const struct ytree_node *node)
{
	return (node->kind != YTREE_MAP && node->kind != YTREE_LIST) || node->flow ||
	       node->count == 0;
}

/* `hanging`: the first entry goes on the line a "- " already began (a
 * map that is a list item). */
static void write_block(const struct ytree_node *node, unsigned indent, bool hanging, FILE *out)
{
	for (size_t i = 0; i < node->count; i++) {
		const struct ytree_entry *entry = &node->entries[i];
		bool on_dash_line = hanging && i == 0;
		if (!on_dash_line) {
			write_comments(entry, indent, out);
			fprintf(out, "%*s", (int)indent, "");
		}
		if (node->kind == YTREE_MAP) {
			write_key(entry->key, out);
			fputc(':', out);
		} else {
			fputc('-', out);
		}
		if (is_inline(entry->value)) {
			fputc(' ', out);
			write_flow(entry->value, out);
			fputc('\n', out);
		} else if (node->kind == YTREE_LIST && entry->value->kind == YTREE_MAP &&
			   !entry->value->entries[0].comment_count) {
			fputc(' ', out);
			write_block(entry->value, indent + 2, true, out);
		} else {
			fputc('\n', out);
			write_block(entry->value, indent + 2, false, out);
		}
	}
}

void ytree_write(const struct ytree_node *root, FILE *out)
{
	write_block(root, 0, false, out);
}
