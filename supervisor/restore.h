/* A restore: corral's loop process died (kill -9, a crash, the OOM
 * killer) and its keeper started this one with what it held
 * (docs/decisions.md, "corral outlives its own death"). The keeper's
 * records become one hand-over document (restore_document.h), read as an
 * upgrade's is (upgrade.h); what differs is here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct supervisor;
struct task;
struct keeper_loop_side;

struct handover_reader;

/* In main, before the config is read: the keeper's variables taken out
 * of the environment, and with records from a loop that died, the
 * document built from them into `document`: 0, or -1 (no restore). */
int restore_begin(struct handover_reader *document);
/* Whether this process is a loop a keeper started. */
bool restore_keeper_present(void);
/* For an exec of corral in place (an upgrade's fall-back to the binary
 * before): "CORRAL_KEEPER_FD=N" and "CORRAL_RESTORES=N" into the two
 * buffers, and the channel kept open across the exec; false without a
 * keeper. */
bool restore_keeper_variables(char *keeper_fd, char *restores, size_t size);
/* The keeper's side, for supervisor_open (moved into `into`). */
void restore_take_keeper(struct keeper_loop_side *into);

/* An upgrade's or a restore's task: its records go on under `slot`
 * (0: none). */
void restore_keep_slot(struct task *task, unsigned slot);
/* A record whose task this config does not have: the keeper forgets it. */
void restore_forget_slot(struct supervisor *supervisor, unsigned slot);

/* After a task's record was read: for a
 * record the keeper marked (`unsettled`, NULL: none) or one that could
 * not be read (`failure`), the task handled as a crash would be: what its
 * cgroup holds is killed, and its runner hears of a SIGKILL. */
void restore_task_taken(struct task *task, const char *unsettled, const char *failure);

/* Once every task was read: the log line and the `restored` event. */
void restore_finish(struct supervisor *supervisor);
