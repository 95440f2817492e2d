/* How many fds a config needs corral to hold at once, so that a config too
 * large for RLIMIT_NOFILE is said up front (`corral check`, `corral run`)
 * instead of failing at its 2000th task. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/model/config.h"

/* An estimate from above: every task running, with its own cgroup. */
size_t fd_budget(const struct config *config);

/* 0 when RLIMIT_NOFILE's soft limit holds the budget; else writes what to
 * do ("3000 tasks need about 9064 fds, and RLIMIT_NOFILE allows 4096:
 * ...") into `error` and returns -1. `after_raise`: the soft limit
 * will be raised to the hard one (`corral run` does). */
int fd_budget_check(const struct config *config, bool after_raise, char *error, size_t error_size);
