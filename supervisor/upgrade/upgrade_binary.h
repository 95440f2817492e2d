/* The binary `corral upgrade` runs: opened once, judged, and from then on
 * used only through that fd, for its check and for the exec. A binary
 * replaced at its path after the check (a rename, a link moved) is not
 * what runs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Whether a file of `mode` owned by `owner` may hold what corral (euid
 * `corral`) runs as itself: a regular file, or on the way to it a
 * directory (`directory`), owned by root or `corral`, that nobody else
 * may write (a sticky directory may be: others cannot replace an entry
 * they do not own there). 0, or -EPERM with `why` naming `name`. */
int upgrade_binary_judge(const char *name, bool directory, mode_t mode, uid_t owner, uid_t corral,
			 char *error, size_t error_size);

/* Opens `binary` ("": corral's own binary as it is on disk now, the file
 * at its path) O_PATH and judges it, the directories of its real path and
 * those of the path as given. The fd (close-on-exec) with its path in
 * `path`, or -errno with `why`. */
int upgrade_binary_open(const char *binary, char *path, size_t path_size, char *error,
			size_t error_size);
