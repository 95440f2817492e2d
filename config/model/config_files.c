#include "config/model/config_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

/* One load at a time (corral's loop, the CLI): what it reads so far. */
static struct config_files recording;
static const struct config_files *replay;

void config_files_add(struct config_files *files, const char *path, const char *text, size_t size)
{
	files->items = xreallocarray(files->items, files->count + 1, sizeof(*files->items));
	struct config_file_text *item = &files->items[files->count++];
	item->path = xstrdup(path);
	item->text = xmalloc(size + 1);
	memcpy(item->text, text, size);
	item->text[size] = '\0';
	item->size = size;
}

int config_files_read(const char *path, size_t max_bytes, char **out, size_t *out_size,
		      char reason[REGULAR_FILE_REASON_SIZE])
{
	if (replay) {
		for (size_t i = 0; i < replay->count; i++) {
			const struct config_file_text *item = &replay->items[i];
			if (strcmp(item->path, path) != 0)
				continue;
			*out = xmalloc(item->size + 1);
			memcpy(*out, item->text, item->size + 1);
			*out_size = item->size;
			config_files_add(&recording, path, item->text, item->size);
			return 0;
		}
		snprintf(reason, REGULAR_FILE_REASON_SIZE, "was not read by the running corral");
		return -ENOENT;
	}
	int result = regular_file_read(path, max_bytes, out, out_size, reason);
	if (result == 0)
		config_files_add(&recording, path, *out, *out_size);
	return result;
}

void config_files_begin(void)
{
	config_files_free(&recording);
}

void config_files_end(struct config_files *into)
{
	*into = recording;
	memset(&recording, 0, sizeof(recording));
}

void config_files_replay(const struct config_files *files)
{
	replay = files;
}

const struct config_files *config_files_replaying(void)
{
	return replay;
}

void config_files_copy(struct config_files *into, const struct config_files *from)
{
	memset(into, 0, sizeof(*into));
	for (size_t i = 0; i < from->count; i++)
		config_files_add(into, from->items[i].path, from->items[i].text,
				 from->items[i].size);
	into->expanded = xcalloc(from->expanded_count + 1, sizeof(*into->expanded));
	for (size_t i = 0; i < from->expanded_count; i++)
		into->expanded[into->expanded_count++] = xstrdup(from->expanded[i]);
	into->plain = from->plain;
}

void config_files_free(struct config_files *files)
{
	for (size_t i = 0; i < files->count; i++) {
		free(files->items[i].path);
		free(files->items[i].text);
	}
	free(files->items);
	for (size_t i = 0; i < files->expanded_count; i++)
		free(files->expanded[i]);
	free(files->expanded);
	memset(files, 0, sizeof(*files));
}
