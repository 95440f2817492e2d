/* The bytes of every file a config was read from (its files, conf.d
 * entries, env_file files), kept with the config: `corral upgrade` hands
 * them to the new corral, which builds the same definitions from them
 * whatever the files on disk hold by then (a changed file is a reload's
 * business, not an upgrade's).
 *
 * While a replay is set (the new corral's first load), the files are
 * served from it and nothing is read from disk; a file it does not hold
 * is an error. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/regular_file.h"

struct config_file_text {
	char *path;
	char *text; /* NUL-terminated */
	size_t size;
};

struct config_files {
	struct config_file_text *items;
	size_t count;
	/* config_load_paths' directories expanded: the files merged, in
	 * order; `plain`: one path that is a file. */
	char **expanded;
	size_t expanded_count;
	bool plain;
};

/* regular_file_read, or the replay's bytes; what was read is recorded
 * for the config being loaded. */
int config_files_read(const char *path, size_t max_bytes, char **out, size_t *out_size,
		      char reason[REGULAR_FILE_REASON_SIZE]);

/* Loads begin and end: what was read since the begin goes into `into`
 * (taken over by the config). */
void config_files_begin(void);
void config_files_end(struct config_files *into);

/* Serves reads (and the expansion of directories) from `files` until
 * config_files_replay(NULL). `files` stays the caller's. */
void config_files_replay(const struct config_files *files);
const struct config_files *config_files_replaying(void);

void config_files_add(struct config_files *files, const char *path, const char *text, size_t size);
/* `into` (not initialised) becomes a copy of `from` that owns its bytes. */
void config_files_copy(struct config_files *into, const struct config_files *from);
void config_files_free(struct config_files *files);
