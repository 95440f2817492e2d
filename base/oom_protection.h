#ifndef CORRAL_OOM_PROTECTION_H
#define CORRAL_OOM_PROTECTION_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

/* corral keeps itself out of the OOM killer's choice: in a memory-limited
 * cgroup (a container's) a task that runs out picks a victim among every
 * process there, corral included, and corral's death takes every task
 * with it. At start corral lowers its own oom_score_adj to -999 (what
 * containerd and the kubelet give themselves; -1000 would make it
 * unkillable even when it is the one at fault), which needs
 * CAP_SYS_RESOURCE; every process it starts goes back to the value corral
 * started with, so tasks are chosen exactly as before. */

/* Logs what it did (or why not, with -v). `started_with`: the value the
 * corral before an upgrade's exec started with (its hand-over says it),
 * or OOM_PROTECTION_OWN: this process's own. */
#define OOM_PROTECTION_OWN INT_MIN
void oom_protection_start(int started_with);

/* The value corral started with. */
int oom_protection_started_with(void);

/* True, with the value corral started with, when corral lowered its own
 * score: every process it starts must go back to that value. */
bool oom_protection_children_score(int *score);

#endif
