/* A helper process corral starts in a session of its own (a hook, a probe
 * run): it leads its process group, and what it forks stays in that group
 * unless it leaves on purpose. Killing it means killing the group. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* SIGKILL to the group `leader` leads, then to the leader itself: the
 * group first, while the leader's pid (unreaped) keeps its id from being
 * reused. Nothing for a leader of 0 (none runs). */
void process_group_kill(pid_t leader);

/* When the leader behind `pidfd` has exited: its exit in `info`, then,
 * with `kill_rest`, SIGKILL to what it left in its group (its unreaped pid
 * still holds the group id, so the id names no one else), then it is
 * reaped; true. false while it still runs. */
bool process_group_reap(int pidfd, pid_t leader, bool kill_rest, siginfo_t *info);
