/* What corral itself may do, so that a corral started as a non-root USER, or
 * in a container that gave it few capabilities, still isolates tasks with
 * what it has, and says at start which isolation it cannot give rather than
 * failing each run with EPERM. Read once: a process's capabilities do not
 * grow while it runs. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "config/model/config.h"

/* Bit N: corral has capability N in its permitted set. */
uint64_t own_permitted_capabilities(void);

/* Bit N: capability N is in corral's bounding set (and so its children's). */
uint64_t own_bounding_set(void);

/* 0 when corral may give a task without a user namespace its isolation;
 * else -1 with `error` naming what is missing and what to do. `keep`: the
 * capabilities the task will keep. */
int own_privileges_check(const struct isolation_config *config, uint64_t keep, char *error,
			 size_t error_size);
