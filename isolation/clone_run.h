/* clone3 that runs a function in the child on a stack of its own.
 *
 * Why: a spawn that shares corral's memory (CLONE_VM | CLONE_VFORK, as
 * posix_spawn does) copies no page tables, so its cost does not grow with
 * corral's size. The child then cannot return from the clone into the
 * caller's frames, which corral's (suspended) stack still holds: it must
 * start on a fresh stack and never return, which the syscall() wrapper
 * cannot do. So this is a few lines of assembly, per architecture. */
#pragma once

#include <linux/sched.h>
#include <stdbool.h>
#include <sys/types.h>

#if defined(__x86_64__)
#define CLONE_RUN_SUPPORTED 1
#else
#define CLONE_RUN_SUPPORTED 0
#endif

/* args->stack and args->stack_size must be set. In the child, calls
 * fn(arg) and exits with its return value. In the parent, returns the pid,
 * or -errno. Only defined when CLONE_RUN_SUPPORTED. */
pid_t clone_run(struct clone_args *args, int (*fn)(void *), void *arg);
