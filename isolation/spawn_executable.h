/* Where a spawn's program is: argv[0] along a PATH, as execvp looks for
 * it, but before the clone (a task's start execs one path), or, for a
 * join, as a list the child tries inside the task's root. */
#pragma once

#include <stddef.h>

/* Resolves argv0 against PATH (from envp) as execvp would, into `buffer`.
 * A name with a '/' is used as it is. When nothing is found the name is
 * returned unchanged, so that exec fails with ENOENT and says so. */
const char *spawn_resolve_executable(const char *argv0, char *const *envp, char *buffer,
				     size_t size);

/* The same for a task whose / will be `root` (its rootfs; NULL: the
 * host's): the PATH directories are looked at below it, so that `sh`
 * finds the rootfs' /bin/sh, not the host's /usr/bin/sh. A symlink there
 * is followed on the host: a guess, which exec inside the root settles. */
const char *spawn_resolve_executable_in(const char *root, const char *argv0, char *const *envp,
					char *buffer, size_t size);

/* For a join (spawn_join.executable_candidates): argv0 alone when it
 * holds a '/', else argv0 in each directory of envp's PATH. NULL-ended,
 * freed with spawn_join_candidates_free. */
char **spawn_join_executable_candidates(const char *argv0, char *const *envp);
void spawn_join_candidates_free(char **candidates);
