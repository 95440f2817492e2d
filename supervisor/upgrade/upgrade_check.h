/* The new binary's check before `corral upgrade` execs it: `BINARY
 * --handover-format` must print the format this corral writes.
 *
 * Run as the loop runs everything else: started through the one spawn
 * path (isolation/spawn.h, no isolation, executing the very fd corral
 * opened), its output read by the loop, its exit seen through its pidfd,
 * and a timer for the bound. Nothing waits: corral serves every other
 * request meanwhile, and the caller hears the verdict through `done`. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/loop.h"
#include "isolation/spawn.h"

/* How long the new binary may take to say its format. */
#define UPGRADE_CHECK_TIMEOUT_MS 5000

struct upgrade_check;

/* The verdict: `passed`, or not with `why` ("PATH --handover-format exited
 * with code 1: not a corral that can take over"). The check's process and
 * fds are gone by then (it may exec); `check` is freed at the next
 * upgrade_check_collect. */
typedef void upgrade_check_done_fn(void *context, bool passed, const char *error);

/* Starts `path` (opened as `binary_fd`, which stays the caller's) with
 * --handover-format. 0 with *out, or -errno with `why` (nothing started). */
int upgrade_check_start(struct upgrade_check **out, struct loop *loop, struct spawn_slots *slots,
			int binary_fd, const char *path, upgrade_check_done_fn *done, void *context,
			char *error, size_t error_size);

/* The SIGCHLD sweep found `pid` exited: when it is the check's process,
 * the check ends here (true), before the sweep could reap it unseen. */
bool upgrade_check_reap(struct upgrade_check *check, pid_t pid);

/* The one who asked went away: the process is killed; `done` comes when
 * its exit is seen, not passed. */
void upgrade_check_kill(struct upgrade_check *check);

/* corral is exiting: killed, its fds closed, without waiting. */
void upgrade_check_free(struct upgrade_check *check);

/* After each batch of the loop's events: frees the checks that ended
 * (their watches may be named by an event of the batch until then). */
void upgrade_check_collect(void);
