/* An ini file as supervisord reads it (Python's RawConfigParser with
 * supervisord's options): [section] headers, `key = value` or `key: value`
 * (keys in any case, read lowercased), values continued on indented lines,
 * comments on lines of their own (# or ;) and after a value (" ;" or
 * " #"). A section read twice (an [include] file repeating one) takes the
 * later values. Every value keeps its file and line. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cli/import/import_report.h"

struct ini_value {
	char *key;
	char *value;
	const char *file;
	unsigned line;
	bool used;
};

struct ini_section {
	char *name; /* "program:web" */
	const char *file;
	unsigned line;
	char *here; /* the directory of the file it was read from (%(here)s) */
	struct ini_value *values;
	size_t count;
};

struct ini_file {
	struct ini_section *sections;
	size_t count;
	char **files; /* the paths read, owned */
	size_t file_count;
};

/* Reads `path` into `ini` (adding to what it holds). 0, or -1 after
 * saying why through `report`. */
int ini_file_read(struct ini_file *ini, const char *path, struct import_report *report);
void ini_file_free(struct ini_file *ini);
/* The lines of TEXT (changed in place) as read from FILE, whose directory
 * is HERE; FILE must outlive INI. 0, or -1 after saying why. */
int ini_file_parse(struct ini_file *ini, char *text, const char *file, const char *here,
		   struct import_report *report);

struct ini_section *ini_section(struct ini_file *ini, const char *name);
/* The value of KEY in SECTION, marked used; NULL when not written. */
struct ini_value *ini_get(struct ini_section *section, const char *key);
