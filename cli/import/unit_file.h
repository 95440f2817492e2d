/* A systemd unit as `corral import` reads it: its file, then its drop-ins
 * (NAME.service.d/ *.conf, and TEMPLATE@.service.d/ for an instance) in name
 * order, as systemd(1) merges them; sections, KEY=VALUE lines, comments
 * (# and ;) and lines continued by a trailing backslash. Every setting
 * keeps its file and line, and whether an importer used it, so that what
 * none used is reported rather than lost. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cli/import/import_report.h"

struct unit_setting {
	char *section; /* "Service" */
	char *key;     /* "ExecStart" */
	char *value;   /* as written, continuation lines joined */
	const char *file;
	unsigned line;
	bool used;
};

struct unit_file {
	char *path;     /* the file read (the template's for an instance) */
	char *name;     /* "redis-server@main.service" */
	char *prefix;   /* "redis-server" */
	char *instance; /* "main", or NULL */
	char **files;   /* the paths read, owned */
	size_t file_count;
	struct unit_setting *settings;
	size_t count;
};

/* Reads `path`; `name` is the unit's name (an instance of a template:
 * "redis-server@main.service", read from redis-server@.service beside
 * it). 0, or -1 after saying why through `report`. */
int unit_file_load(struct unit_file *unit, const char *path, struct import_report *report);
void unit_file_free(struct unit_file *unit);
/* The lines of TEXT (changed in place) as read from FILE, added to UNIT's
 * settings; FILE must outlive UNIT. 0, or -1 after saying why. */
int unit_file_parse(struct unit_file *unit, char *text, const char *file,
		    struct import_report *report);

/* The last setting of KEY in SECTION (NULL: none), marking every one of
 * them used. */
struct unit_setting *unit_last(struct unit_file *unit, const char *section, const char *key);
/* The settings of a list KEY from its last empty assignment (which resets
 * the list, as systemd reads it) on, all marked used; *count of them.
 * Returns a malloc'd array (NULL when none). */
struct unit_setting **unit_list(struct unit_file *unit, const char *section, const char *key,
				size_t *count);

/* VALUE with systemd's specifiers replaced (%n %N %p %i %I %j %J %f %t %S
 * %C %L %E %T %V %h %u %H %%). A specifier it cannot know ahead of a run
 * (%U, %m, %b...) is left as written and named in *unknown (NULL: none). */
char *unit_specifiers(const struct unit_file *unit, const char *value, const char *user,
		      char *unknown, size_t unknown_size);

/* systemd's boolean words: 1 yes y true t on, 0 no n false f off. 1, 0, or
 * -1 for anything else. */
int unit_boolean(const char *value);
