/* Code that runs in a spawned child between clone and exec. It shares
 * corral's memory (CLONE_VM) while corral is suspended (CLONE_VFORK), so it
 * calls the kernel directly, never libc, and is not instrumented by
 * sanitizers: ASan would poison its frames in corral's shadow memory, and a
 * child never returns to unpoison them. See isolation/spawn.c. */
#pragma once

#define CHILD_CODE __attribute__((no_sanitize("address", "undefined")))
