/* A config from several places: directories (their *.yaml and *.yml, in
 * name order) and files, merged into one YAML document before it is read,
 * so that a group written in two files is one group, its keys and tasks
 * from both, and every check sees the whole (an `after:` across files, a
 * task defined twice). s6-overlay's services.d and supervisord's conf.d
 * work that way: each image layer adds its own file.
 *
 * Each node keeps its file in its mark (yaml_walk.h), so that messages
 * name the file and line it came from. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "base/xmalloc.h"
#include "config/load/config_load.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

/* An alias may make a node its own descendant: copies stop here. */
#define COPY_DEPTH_MAX 256

struct file_list {
	char **names;
	size_t count;
};

static void add_file(struct file_list *files, char *name)
{
	files->names = xreallocarray(files->names, files->count + 1, sizeof(*files->names));
	files->names[files->count++] = name;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_yaml_name(const char *name)
{
	size_t length = strlen(name);
	return name[0] != '.' && ((length > 5 && strcmp(name + length - 5, ".yaml") == 0) ||
				  (length > 4 && strcmp(name + length - 4, ".yml") == 0));
}

/* DIR's *.yaml and *.yml files, in name order; false (said, at `place`)
 * when it has none or cannot be read. */
static bool add_directory(struct file_list *files, const char *path, unsigned place,
			  struct config_diagnostics *diagnostics)
{
	DIR *directory = opendir(path);
	if (!directory) {
		diagnostics_add(diagnostics, (struct source_location){.file = place},
				"cannot read the directory: %s", strerror(errno));
		return false;
	}
	size_t first = files->count;
	struct dirent *entry;
	while ((entry = readdir(directory)))
		if (is_yaml_name(entry->d_name))
			add_file(files,
				 xasprintf("%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/",
					   entry->d_name));
	closedir(directory);
	if (files->count == first) {
		diagnostics_add(diagnostics, (struct source_location){.file = place},
				"no *.yaml or *.yml file in this directory");
		return false;
	}
	qsort(files->names + first, files->count - first, sizeof(*files->names), by_name);
	return true;
}

/* ---- the merge ---- */

static yaml_node_t *node_at(yaml_document_t *document, int id)
{
	return yaml_document_get_node(document, id);
}

static void keep_place(yaml_document_t *to, int id, const yaml_node_t *from, unsigned file)
{
	yaml_node_t *node = node_at(to, id);
	node->start_mark = from->start_mark;
	node->end_mark = from->end_mark;
	node->start_mark.line |= (size_t)file << YAML_MARK_FILE_SHIFT;
	node->end_mark.line |= (size_t)file << YAML_MARK_FILE_SHIFT;
}

static int copy_node(yaml_document_t *to, yaml_document_t *from, int id, unsigned file,
		     unsigned depth)
{
	const yaml_node_t *node = node_at(from, id);
	int copy = 0;
	if (depth > COPY_DEPTH_MAX)
		return yaml_document_add_scalar(to, NULL, (yaml_char_t *)"", 0,
						YAML_PLAIN_SCALAR_STYLE);
	switch (node->type) {
	case YAML_SCALAR_NODE:
		copy = yaml_document_add_scalar(to, node->tag, node->data.scalar.value,
						(int)node->data.scalar.length,
						node->data.scalar.style);
		break;
	case YAML_SEQUENCE_NODE:
		copy = yaml_document_add_sequence(to, node->tag, node->data.sequence.style);
		for (yaml_node_item_t *item = node->data.sequence.items.start;
		     item < node->data.sequence.items.top; item++)
			yaml_document_append_sequence_item(
			    to, copy, copy_node(to, from, *item, file, depth + 1));
		break;
	case YAML_MAPPING_NODE:
		copy = yaml_document_add_mapping(to, node->tag, node->data.mapping.style);
		for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
		     pair < node->data.mapping.pairs.top; pair++) {
			int key = copy_node(to, from, pair->key, file, depth + 1);
			int value = copy_node(to, from, pair->value, file, depth + 1);
			yaml_document_append_mapping_pair(to, copy, key, value);
		}
		break;
	case YAML_NO_NODE:
		break;
	}
	if (!copy) {
		fputs("corral: out of memory\n", stderr);
		abort();
	}
	keep_place(to, copy, node, file);
	return copy;
}

static bool key_is(yaml_document_t *document, int id, const char *text)
{
	const yaml_node_t *key = node_at(document, id);
	return key->type == YAML_SCALAR_NODE && key->data.scalar.length == strlen(text) &&
	       memcmp(key->data.scalar.value, text, key->data.scalar.length) == 0;
}

/* The value of `key` in mapping `map` of the merged document when it is a
 * mapping made by the merge (listed in `made`), else 0. */
static int merged_map_of(yaml_document_t *to, int map, const yaml_node_t *key, const int *made,
			 size_t made_count)
{
	const yaml_node_t *mapping = node_at(to, map);
	for (yaml_node_pair_t *pair = mapping->data.mapping.pairs.start;
	     pair < mapping->data.mapping.pairs.top; pair++) {
		const yaml_node_t *other = node_at(to, pair->key);
		if (other->type != YAML_SCALAR_NODE || key->type != YAML_SCALAR_NODE ||
		    other->data.scalar.length != key->data.scalar.length ||
		    memcmp(other->data.scalar.value, key->data.scalar.value,
			   key->data.scalar.length) != 0)
			continue;
		for (size_t i = 0; i < made_count; i++)
			if (made[i] == pair->value)
				return pair->value;
	}
	return 0;
}

struct merge {
	yaml_document_t *to;
	int *made; /* mappings the merge made: groups, each group, each tasks */
	size_t made_count;
};

/* A mapping in `to` standing for `from_value`, added under a copy of
 * `from_key` to `parent`, or the one an earlier file made there. */
static int merged_map(struct merge *merge, int parent, yaml_document_t *from, int from_key,
		      int from_value, unsigned file)
{
	int existing = merged_map_of(merge->to, parent, node_at(from, from_key), merge->made,
				     merge->made_count);
	if (existing)
		return existing;
	int map = yaml_document_add_mapping(merge->to, NULL, YAML_BLOCK_MAPPING_STYLE);
	keep_place(merge->to, map, node_at(from, from_value), file);
	yaml_document_append_mapping_pair(merge->to, parent,
					  copy_node(merge->to, from, from_key, file, 0), map);
	merge->made = xreallocarray(merge->made, merge->made_count + 1, sizeof(*merge->made));
	merge->made[merge->made_count++] = map;
	return map;
}

static void copy_pair(struct merge *merge, int parent, yaml_document_t *from,
		      const yaml_node_pair_t *pair, unsigned file)
{
	int key = copy_node(merge->to, from, pair->key, file, 0);
	int value = copy_node(merge->to, from, pair->value, file, 0);
	yaml_document_append_mapping_pair(merge->to, parent, key, value);
}

static bool is_map(yaml_document_t *document, int id)
{
	return node_at(document, id)->type == YAML_MAPPING_NODE;
}

typedef void merge_pair_fn(struct merge *merge, int into, yaml_document_t *from,
			   const yaml_node_pair_t *pair, unsigned file);

/* Each pair of `from`'s mapping `value` into the mapping `into`: the one
 * under `key`, a mapping, combines with what earlier files put there, its
 * pairs through `inner`; any other pair is copied (written twice: the
 * reader says so, with both places). */
static void merge_pairs(struct merge *merge, int into, yaml_document_t *from, int value,
			unsigned file, const char *key, merge_pair_fn *inner)
{
	const yaml_node_t *node = node_at(from, value);
	for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
	     pair < node->data.mapping.pairs.top; pair++) {
		if (!key_is(from, pair->key, key) || !is_map(from, pair->value)) {
			copy_pair(merge, into, from, pair, file);
			continue;
		}
		int combined = merged_map(merge, into, from, pair->key, pair->value, file);
		const yaml_node_t *map = node_at(from, pair->value);
		for (yaml_node_pair_t *entry = map->data.mapping.pairs.start;
		     entry < map->data.mapping.pairs.top; entry++)
			inner(merge, combined, from, entry, file);
	}
}

/* A group of one file into the merged group of its name: its tasks
 * combine, each copied. */
static void merge_group(struct merge *merge, int groups, yaml_document_t *from,
			const yaml_node_pair_t *group, unsigned file)
{
	if (!is_map(from, group->value)) {
		copy_pair(merge, groups, from, group, file);
		return;
	}
	merge_pairs(merge, merged_map(merge, groups, from, group->key, group->value, file), from,
		    group->value, file, "tasks", copy_pair);
}

static void merge_file(struct merge *merge, int root, yaml_document_t *from, unsigned file,
		       struct config_diagnostics *diagnostics)
{
	const yaml_node_t *top = yaml_document_get_root_node(from);
	if (!top || (top->type == YAML_SCALAR_NODE && top->data.scalar.length == 0))
		return; /* an empty file adds nothing */
	if (top->type != YAML_MAPPING_NODE) {
		struct source_location place = {.line = (unsigned)top->start_mark.line + 1,
						.column = (unsigned)top->start_mark.column + 1,
						.file = file};
		diagnostics_add(diagnostics, place,
				"must be a map with \"groups\" or other top-level keys");
		return;
	}
	merge_pairs(merge, root, from, (int)(top - from->nodes.start) + 1, file, "groups",
		    merge_group);
}

/* ---- loading ---- */

/* The files of `paths`, directories expanded; false when one could not be
 * listed (said). `plain`: a single path that is a file. */
static bool expand(const char *const *paths, size_t count, struct file_list *files, bool *plain,
		   struct config_diagnostics *diagnostics)
{
	bool ok = true;
	*plain = count == 1;
	for (size_t i = 0; i < count; i++) {
		struct stat status;
		if (stat(paths[i], &status) == 0 && S_ISDIR(status.st_mode)) {
			*plain = false;
			ok &= add_directory(files, paths[i], (unsigned)i, diagnostics);
		} else {
			add_file(files, xstrdup(paths[i]));
		}
	}
	return ok;
}

static void keep_sources(struct config *config, const char *const *paths, size_t count)
{
	config->sources = xcalloc(count, sizeof(*config->sources));
	for (size_t i = 0; i < count; i++)
		config->sources[i] = xstrdup(paths[i]);
	config->source_count = count;
}

/* Every file read and merged into `merged` (initialised here): true, or
 * false with the diagnostics. */
static bool load_merged(const struct file_list *files, yaml_document_t *merged,
			struct config_diagnostics *diagnostics)
{
	yaml_document_t *documents = xcalloc(files->count, sizeof(*documents));
	bool *loaded = xcalloc(files->count, sizeof(*loaded));
	for (size_t i = 0; i < files->count; i++) {
		char *data = NULL;
		size_t size = 0;
		if (config_read_file(files->names[i], (unsigned)i, &data, &size, diagnostics) < 0)
			continue;
		loaded[i] =
		    config_load_document(data, size, (unsigned)i, &documents[i], diagnostics);
		free(data);
	}
	bool ok = !diagnostics->count;
	if (!yaml_document_initialize(merged, NULL, NULL, NULL, 1, 1)) {
		fputs("corral: out of memory\n", stderr);
		abort();
	}
	struct merge merge = {.to = merged};
	int root = yaml_document_add_mapping(merged, NULL, YAML_BLOCK_MAPPING_STYLE);
	for (size_t i = 0; ok && i < files->count; i++)
		merge_file(&merge, root, &documents[i], (unsigned)i, diagnostics);
	for (size_t i = 0; i < files->count; i++)
		if (loaded[i])
			yaml_document_delete(&documents[i]);
	free(documents);
	free(loaded);
	free(merge.made);
	if (!diagnostics->count)
		return true;
	yaml_document_delete(merged);
	return false;
}

/* The diagnostics own the names now (struct config_diagnostics.files). */
static void hand_over_names(struct file_list *files, struct config_diagnostics *diagnostics)
{
	diagnostics->files = files->names;
	diagnostics->file_count = files->count;
	*files = (struct file_list){0};
}

static void free_names(struct file_list *files)
{
	for (size_t i = 0; i < files->count; i++)
		free(files->names[i]);
	free(files->names);
}

/* Errors about the paths themselves are at their index. */
static void name_paths(const char *const *paths, size_t count,
		       struct config_diagnostics *diagnostics)
{
	struct file_list names = {0};
	for (size_t i = 0; i < count; i++)
		add_file(&names, xstrdup(paths[i]));
	hand_over_names(&names, diagnostics);
}

/* The paths expanded into `files`; false, with the paths named in the
 * diagnostics, when a directory could not be listed. */
static bool expand_or_say(const char *const *paths, size_t count, struct file_list *files,
			  bool *plain, struct config_diagnostics *diagnostics)
{
	*diagnostics = (struct config_diagnostics){0};
	if (expand(paths, count, files, plain, diagnostics))
		return true;
	free_names(files);
	name_paths(paths, count, diagnostics);
	return false;
}

/* The files merged into `document` and read: the config (the caller
 * deletes the document), or NULL with the diagnostics, which then own the
 * files' names. */
static struct config *read_merged(const char *path, struct file_list *files,
				  const char *const *profiles, yaml_document_t *document,
				  struct config_diagnostics *diagnostics)
{
	struct config *config = NULL;
	if (load_merged(files, document, diagnostics)) {
		config = config_from_document(path, document, (const char *const *)files->names,
					      files->count, profiles, diagnostics);
		if (!config)
			yaml_document_delete(document);
	}
	if (!config) {
		diagnostics_sort(diagnostics);
		hand_over_names(files, diagnostics);
	}
	return config;
}

/* A replay's expansion (config_files.h): the files the running corral
 * merged, whatever the directories hold now. */
static void replay_expansion(const struct config_files *replay, struct file_list *files,
			     bool *plain, struct config_diagnostics *diagnostics)
{
	*diagnostics = (struct config_diagnostics){0};
	for (size_t i = 0; i < replay->expanded_count; i++)
		add_file(files, xstrdup(replay->expanded[i]));
	*plain = replay->plain;
}

/* What the config was read from, for an upgrade to read it the same. */
static void keep_files(struct config *config, const struct file_list *files, bool plain)
{
	config_files_end(&config->files);
	config->files.expanded = xcalloc(files->count + 1, sizeof(*config->files.expanded));
	for (size_t i = 0; i < files->count; i++)
		config->files.expanded[i] = xstrdup(files->names[i]);
	config->files.expanded_count = files->count;
	config->files.plain = plain;
}

struct config *config_load_paths(const char *const *paths, size_t count,
				 struct config_diagnostics *diagnostics)
{
	return config_load_paths_with_profiles(paths, count, NULL, diagnostics);
}

struct config *config_load_paths_with_profiles(const char *const *paths, size_t count,
					       const char *const *profiles,
					       struct config_diagnostics *diagnostics)
{
	struct file_list files = {0};
	bool plain;
	const struct config_files *replay = config_files_replaying();
	config_files_begin();
	if (replay)
		replay_expansion(replay, &files, &plain, diagnostics);
	else if (!expand_or_say(paths, count, &files, &plain, diagnostics))
		return NULL;
	struct config *config;
	yaml_document_t merged;
	if (plain) {
		config = config_load_file_with_profiles(paths[0], profiles, diagnostics);
	} else if ((config = read_merged(paths[0], &files, profiles, &merged, diagnostics))) {
		yaml_document_delete(&merged);
	}
	if (config) {
		keep_sources(config, paths, count);
		keep_files(config, &files, plain);
	}
	free_names(&files);
	return config;
}

int config_print_paths(const char *const *paths, size_t count, const char *const *profiles,
		       FILE *out, struct config_diagnostics *diagnostics)
{
	struct file_list files = {0};
	bool plain;
	if (!expand_or_say(paths, count, &files, &plain, diagnostics))
		return -1;
	yaml_document_t document;
	struct config *config = read_merged(paths[0], &files, profiles, &document, diagnostics);
	free_names(&files);
	if (!config)
		return -1;
	/* The document as read: merged, variables replaced. The emitter takes
	 * it (and deletes it). */
	yaml_emitter_t emitter;
	yaml_emitter_initialize(&emitter);
	yaml_emitter_set_output_file(&emitter, out);
	yaml_emitter_set_unicode(&emitter, 1);
	yaml_emitter_set_width(&emitter, 100);
	bool written = yaml_emitter_open(&emitter) && yaml_emitter_dump(&emitter, &document) &&
		       yaml_emitter_close(&emitter);
	yaml_emitter_delete(&emitter);
	config_free(config);
	return written ? 0 : -1;
}
