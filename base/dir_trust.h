/* Whether only corral's user (or root) can change the names in a
 * directory: one where another user could replace what corral made (a
 * log file by a link, a socket by their own) is refused. log.dir
 * (supervisor/output/log_file_dir.c) and the HTTP endpoint's socket
 * (unix_listener.c) ask the same question, each saying the answer in
 * its own words. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

enum dir_trust {
	DIR_TRUSTED,
	DIR_FOREIGN_OWNER,      /* owned by another user than corral's or root */
	DIR_WRITABLE_BY_OTHERS, /* group or others may write (and it is not sticky) */
};

/* `status`: the directory's. `sticky_is_enough`: a sticky directory
 * owned by corral or root (/tmp) is trusted though others write in it:
 * they may add names, never remove or rename corral's. */
enum dir_trust dir_trust_of(const struct stat *status, bool sticky_is_enough);
