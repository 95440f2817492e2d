/* The config `corral import` writes, as a small tree of maps, lists and
 * strings with comments, and the YAML text of it. The importers build the
 * tree in the order a reader should see it; the emitter quotes what YAML
 * would read otherwise, so that a value is read back as written. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

enum ytree_kind { YTREE_STRING, YTREE_PLAIN, YTREE_MAP, YTREE_LIST };

struct ytree_node;

struct ytree_entry {
	char *key; /* maps only */
	struct ytree_node *value;
	char **comments; /* lines written above the entry, without "# " */
	size_t comment_count;
};

struct ytree_node {
	enum ytree_kind kind;
	char *text; /* YTREE_STRING (quoted when needed), YTREE_PLAIN (as is) */
	struct ytree_entry *entries;
	size_t count;
	bool flow; /* a list or map written on one line: [a, b], {k: v} */
};

struct ytree_node *ytree_map(void);
struct ytree_node *ytree_list(void);
/* A string, quoted on output when YAML would read it as something else. */
struct ytree_node *ytree_string(const char *text);
/* A number, boolean or duration, written as is. */
struct ytree_node *ytree_plain(const char *text);
struct ytree_node *ytree_plainf(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* A flow list of strings ([a, b]) from a NULL-terminated vector. */
struct ytree_node *ytree_string_list(char *const *items);
void ytree_free(struct ytree_node *node);
/* A deep copy of NODE (comments included). */
struct ytree_node *ytree_copy(const struct ytree_node *node);

/* Sets `key` of `map` (replacing an earlier value, keeping its place and
 * comments). Returns `value`. */
struct ytree_node *ytree_set(struct ytree_node *map, const char *key, struct ytree_node *value);
struct ytree_node *ytree_get(const struct ytree_node *map, const char *key);
/* Takes KEY out of MAP (nothing when it is not there). */
void ytree_remove(struct ytree_node *map, const char *key);
/* The map at `key`, made (empty, block style) when missing. */
struct ytree_node *ytree_child_map(struct ytree_node *map, const char *key);
/* The list at `key`, made (flow style) when missing. */
struct ytree_node *ytree_child_list(struct ytree_node *map, const char *key);
void ytree_append(struct ytree_node *list, struct ytree_node *value);
/* Appends a string unless the list holds it already. */
void ytree_append_unique(struct ytree_node *list, const char *text);
bool ytree_list_has(const struct ytree_node *list, const char *text);
/* A comment line above `key` (made as an empty map when missing). */
void ytree_comment(struct ytree_node *map, const char *key, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Writes `root` (a map) as a YAML document. */
void ytree_write(const struct ytree_node *root, FILE *out);
