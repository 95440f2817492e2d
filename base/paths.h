/* Path rules shared by the loader (configured mounts), hook responses and
 * the mount plan, so that a target is judged the same wherever it comes
 * from. */
#pragma once

#include <stdbool.h>

/* A ".." component anywhere in `path`: such a target could climb out of
 * the task's root if it were resolved outside it. */
bool path_has_parent_component(const char *path);

/* `path` cleaned lexically, as Go's filepath.Clean (and so compose's
 * paths): "//" and "." parts dropped, each ".." taking the part before it
 * away (at "/", nothing), no "/" at the end but for "/" itself. A relative
 * path stays relative ("" becomes "."). Allocated. */
char *path_clean(const char *path);
