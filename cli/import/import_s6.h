/* What the s6-overlay importers share (import_s6.c: the tree and v3's
 * s6-rc.d; import_s6_legacy.c: v2's services.d and cont-init.d; s6_files.c:
 * reading service directories and making their tasks). */
#pragma once

#include <stdbool.h>

#include "cli/import/import_report.h"
#include "cli/import/yaml_tree.h"

#define S6_FILE_MAX_BYTES (1024 * 1024)

struct s6 {
	struct import_report *report;
	struct ytree_node *group;
	struct ytree_node *tasks;
	char *rc_dir; /* v3: the s6-rc.d directory, or NULL */
};

bool s6_is_dir(const char *path);
bool s6_is_file(const char *path);
/* A small file's text, trailing space trimmed; NULL when it is not there. */
char *s6_read_small(const char *dir, const char *name);
/* DIR's entries in name order, hidden ones skipped (NULL-terminated). */
char **s6_entries(const char *dir);
void s6_free_entries(char **names);
/* The command that runs the script at PATH (with-contenv: its shell). */
struct ytree_node *s6_script_command(const char *path, struct ytree_node *task);
/* A file left out: PATH: SETTING: why. */
void s6_drop(struct s6 *import, const char *path, const char *setting, const char *why, ...)
    __attribute__((format(printf, 4, 5)));
/* A finish script as an exited hook, called as s6-supervise calls it. */
void s6_add_finish_hook(struct ytree_node *task, const char *finish);
/* A task NAME of the group, with ORIGIN in a comment above it. */
struct ytree_node *s6_new_task(struct s6 *import, const char *name, const char *origin);
/* s6-supervise's restarts: for ever, at most once a second. */
void s6_longrun_restart(struct ytree_node *task);
/* A file of milliseconds (timeout-up, timeout-down) into MAP's KEY. */
void s6_milliseconds(struct s6 *import, const char *dir, const char *file, struct ytree_node *map,
		     const char *key, struct ytree_node *task, const char *task_key);

/* v2: DIR's scripts as one-shot tasks of STAGE (cont-init.d: prestart,
 * cont-finish.d: poststop); services.d's longruns. */
void s6_import_scripts(struct s6 *import, const char *dir, const char *stage, const char *what);
void s6_import_services_d(struct s6 *import, const char *dir);
