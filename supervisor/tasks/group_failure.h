/* A group's on_failure rule (group_failure.c). For group.c only: the
 * functions at the end are group.c's own, shared with group_failure.c. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "supervisor/tasks/group.h"

/* A task failed for good: the group's on_failure rule decides. True when
 * the group stops or restarts. */
bool group_react_to_failure(struct group *group, uint64_t now_ms);

/* Tells corral of the failures that give its exit code now. */
void group_note_failures(struct group *group);

/* group.c: the group stops for good (GROUP_STOPPING) or for a restart. */
void group_begin_stop(struct group *group, enum group_stop_mode mode, const char *reason);

/* group.c: a restart of the whole group, in lifecycle order. */
void group_begin_restart_all(struct group *group, const char *reason);
