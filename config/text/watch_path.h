/* How a `watch:` path is read, by the loader (config_watch.c) and at run
 * time (supervisor/watch/): its last part is a name or a glob, the parts
 * before it a directory. Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Where the last part of an absolute, cleaned path begins: just past its
 * last "/". */
size_t watch_path_name_offset(const char *path);

/* A part with *, ? or [: a glob, matched with fnmatch(3). */
bool watch_name_is_pattern(const char *name, size_t length);

/* Whether `name`, an entry of the directory, is what the last part
 * `pattern` (a name or a glob) stands for. A glob's * and ? do not match a
 * leading ".", as in the shell: Kubernetes' "..data" is no "*". */
bool watch_name_matches(const char *pattern, bool is_pattern, const char *name);
