/* corral's own RLIMIT_NOFILE. An idle task holds 2 or 3 fds (fd_budget.h),
 * so 10,000 tasks need about 30,000, where a process usually starts with a
 * soft limit of 1024 and a machine's init with a hard limit of 4096 (the
 * kernel's INR_OPEN_MAX). `corral run` takes its soft limit up to the hard
 * one, and, when the config needs more than that and corral has
 * cap_sys_resource (a machine's or VM's init, a privileged container), the
 * hard limit up to what the config needs, as systemd raises its own: what
 * its tasks hold running (fd_budget) and while they all start at once. */
#pragma once

#include <stddef.h>
#include <sys/resource.h>

#include "config/model/config.h"

/* Pure: the limit to ask for, given the current one, the fds the config
 * needs and fs.nr_open (the kernel's ceiling for any nofile limit). The
 * soft limit always goes to the hard one; the hard one is raised to
 * `needed` (at most nr_open) only when it is below it, never lowered. */
struct rlimit fd_limit_wanted(struct rlimit current, size_t needed, rlim_t nr_open);

/* Applies fd_limit_wanted for `config` and says, once, when the hard limit
 * was raised. Without cap_sys_resource the kernel refuses a higher hard
 * limit (EPERM): then only the soft one is raised, as before, and
 * fd_budget_check says whether that is enough. */
void fd_limit_raise(const struct config *config);
