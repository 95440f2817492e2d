/* The supervisor's state in the hand-over document (handover.h): what
 * upgrade_state_write.c writes before the exec and upgrade_state_read.c takes back after
 * it. Each part that holds run-time state has its pair beside it:
 * task_handover.c (a task), control/control_handover.c (the control
 * socket and its clients); this pair does the rest (groups, cgroups,
 * the event log, stdout) and calls those. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/handover.h"

struct supervisor;
struct config;
struct group;
struct control_client;
struct control_server_settings;
struct control_server_ops;

/* false with `why` when the state cannot be handed over now: corral
 * runs on as it is. */
bool upgrade_state_possible(struct supervisor *supervisor, char *error, size_t error_size);

/* Everything into `writer`; the event log is flushed. */
void upgrade_state_write(struct supervisor *supervisor, struct handover_writer *writer,
			 const struct control_client *requester);
/* Its parts, which the keeper's records hold apart (kept_state.c):
 * corral's own (the config's texts, the cgroup tree, the listening
 * sockets, the event log; what changes rarely), a group's lifecycle, and
 * corral's counters. */
void upgrade_state_write_corral(struct supervisor *supervisor, struct handover_writer *writer,
				const struct control_client *requester);
json_t *upgrade_group_write(const struct group *group);
json_t *upgrade_counters_write(const struct supervisor *supervisor);

/* ---- upgrade_state_read.c, in the new corral's supervisor_open ---- */

/* The config the old corral ran when `corral scale` had changed it:
 * `config` (built from the files' bytes) with the scaled counts; NULL
 * when nothing was scaled. The caller owns it. */
struct config *upgrade_state_scaled_config(const struct handover_reader *reader,
					   const struct config *config);

/* After the groups are built from the scaled config: the sets it scaled to
 * 0 are kept in their groups' zero_sets, defined as the files define them,
 * so that status shows them and a scale up makes them again. */
void upgrade_state_zero_sets(const struct handover_reader *reader,
			     const struct config *files_config, struct group **groups,
			     size_t group_count);

/* The cgroup tree as the old corral had it. 0, or -errno with `error`. */
int upgrade_state_read_cgroups(struct supervisor *supervisor, const struct handover_reader *reader,
			       char *error, size_t error_size);
/* The control socket and its clients (supervisor->control and
 * ->upgrade_requester). 0, or -errno with `error`. */
int upgrade_state_read_control(struct supervisor *supervisor, const struct handover_reader *reader,
			       const struct control_server_settings *settings,
			       const struct control_server_ops *ops, char *error,
			       size_t error_size);
/* The inotify fd of `watch:` (watch_set_adopt), or -1: taken before the
 * watches are made, so that no new instance is needed. */
int upgrade_state_watch_fd(const struct handover_reader *reader);
/* Once every group and task exists: their state, the event log, stdout.
 * 0, or -EINVAL with `error` (nothing read from a handed-over fd yet). */
int upgrade_state_read(struct supervisor *supervisor, const struct handover_reader *reader,
		       char *error, size_t error_size);
