/* OOM kills as they happen, watched once per group (cgroup v2 with the
 * memory controller), not once per task.
 *
 * Why: the kernel counts an OOM kill in the task's memory.events and in
 * each ancestor's up to the root, and wakes a poller of any of them
 * (EPOLLPRI). One watch on the group's file (root/<group>/memory.events)
 * sees every kill in its tasks; corral then reads the counters of the
 * tasks that run, and reports those that went up, so an idle task holds no
 * fd for this. The kernel's memory_localevents mount option wakes only the
 * task's own file: there a kill is reported when the task's run ends, as
 * on cgroup v1. */
#pragma once

struct group;

/* Watches the group's memory.events when it has one. Never fails: without
 * it, kills are counted at the end of each run. */
void group_oom_watch_open(struct group *group);
void group_oom_watch_close(struct group *group);
