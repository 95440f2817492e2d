/* What corral's exit is told as (Kubernetes' termination message,
 * supervisor/pid1/termination_message.h): the facts, noted by supervisor.c
 * where it decides its exit code (the first task to fail for good, a
 * shutdown, what was killed), and the message written from them when
 * corral exits. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "supervisor/lifecycle/runner.h"
#include "supervisor/pid1/termination_log.h"

struct supervisor;
struct task;

struct termination_record {
	struct termination_log log;
	/* The task whose failure gives corral's exit code, as it was when it
	 * failed for good (a reload may remove it before corral exits). */
	char *task;
	char *group;
	char *failure;
	const char *rule; /* static text */
	char *decision;
	const char *on_failure; /* static text */
	char *group_decision;
	bool has_exit;
	struct task_exit exit;
	char *lines; /* its last output lines, each ending in '\n' */
	size_t lines_length;
	char *shutdown;     /* what asked for the shutdown */
	char *killed;       /* why what was left was killed */
	char *killed_tasks; /* which tasks that was */
	char *corral_error;
};

/* Opens the file, before any task starts; a refusal is said on stderr and
 * corral runs on without one. */
void termination_open(struct supervisor *supervisor);

/* `task` gives corral's exit code now (note_task_failed_for_good). */
void termination_note_failure(struct supervisor *supervisor, struct task *task);
/* A shutdown begins, asked for by `by` ("SIGTERM", "a shutdown request on
 * the control socket"). */
void termination_note_shutdown(struct supervisor *supervisor, const char *by);
/* Everything left is killed now, for `why`. Before the kill: the tasks
 * that still have processes are named. */
void termination_note_kill(struct supervisor *supervisor, const char *why);
/* corral itself failed (`what`), and exits 1 unless a task decided. */
void termination_note_corral_failure(struct supervisor *supervisor, const char *what);

/* The message, into the file; at exit, while the tasks still exist. */
void termination_write(struct supervisor *supervisor);

void termination_close(struct supervisor *supervisor);
