/* PID 1 duties: every child that exits is reaped, orphans included, without
 * stealing a task's exit status from its runner. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

struct reaper_ops {
	/* Returns true when `pid` is a task's process: its runner reaps it
	 * through its pidfd, so the reaper leaves it alone. */
	bool (*reap_task)(void *context, pid_t pid);
	void *context;
};

/* When corral is not PID 1, makes it a child subreaper so that orphans of
 * its tasks come back to it. Returns true when corral is PID 1. */
bool reaper_init(void);

/* After SIGCHLD: peeks at each exited child with WNOWAIT; hands tasks to
 * ops->reap_task and reaps everything else. Returns the orphans reaped. */
unsigned reaper_sweep(const struct reaper_ops *ops);

/* At exit: SIGKILLs and reaps any process still reparented to corral, so
 * nothing outlives it. Returns how many there were. */
unsigned reaper_kill_remaining_children(void);
