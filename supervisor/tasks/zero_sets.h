/* Tasks written with `instances:` that `corral scale` took to 0
 * (kubectl scale --replicas=0): no instance runs, but the task stays
 * defined. Its definition lived in its instances, so a copy is kept here,
 * what a later scale up makes its instances from; and the set keeps its
 * group up, as a Deployment at 0 replicas still exists. A reload goes
 * back to the config's count and forgets them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/model/config.h"

struct zero_set {
	char *task;               /* the name written with `instances:`: "web" */
	struct task_config model; /* owned: what a scale up makes instances from */
	unsigned configured;      /* what the config says */
};

struct zero_sets {
	struct zero_set *items;
	size_t count;
};

/* The set named `task`, or NULL. */
const struct zero_set *zero_sets_find(const struct zero_sets *sets, const char *task);

/* `task` is at 0 now: `model` is copied. */
void zero_sets_add(struct zero_sets *sets, const char *task, const struct task_config *model,
		   unsigned configured);

/* `task` has instances again (a scale up), or never had none. */
void zero_sets_remove(struct zero_sets *sets, const char *task);

/* A reload: every count is the config's again. */
void zero_sets_clear(struct zero_sets *sets);
