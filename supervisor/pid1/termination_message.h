/* corral's termination message (Kubernetes' terminationMessagePath): why it
 * exited, in a few lines a person reads in `kubectl describe pod`. Composed
 * from the facts supervisor.c recorded where it decided its exit code, not
 * guessed afterwards. Pure: facts in, text out; termination_log.h writes it.
 *
 * The text, head first:
 *   web/app failed for good: exited with code 3, 3 restarts within 1m spent; corral exited with
 * code 3 last exit: exited with code 3 rule: restart.attempts: not restarting: exited with code 3
 * (3 restarts allowed within 1m); failed for good group web: on_failure stop: the group stopped
 *   last 2 lines of web/app:
 *   connecting to db:5432
 *   fatal: connection refused
 * or one line for a clean exit ("all tasks completed; corral exited with
 * code 0", "stopped by SIGTERM: every task stopped; corral exited with code
 * 0"). At most TERMINATION_MESSAGE_MAX bytes, always valid UTF-8: what does
 * not fit is cut from the end (the oldest of the output lines go first,
 * then the end of a line), never from the head. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "supervisor/lifecycle/runner.h"

/* The kubelet reads at most the last 4096 bytes of the file: a longer
 * message would lose its head, which says the most. */
#define TERMINATION_MESSAGE_MAX 4096

enum termination_cause {
	TERMINATION_COMPLETED,     /* every group finished by itself */
	TERMINATION_TASK_FAILED,   /* a task failed for good: corral exits with its code */
	TERMINATION_SHUTDOWN,      /* a shutdown was asked for, and done */
	TERMINATION_CORRAL_FAILED, /* corral's own failure (its event loop) */
};

/* Strings may be NULL where they say none; they need not be UTF-8. */
struct termination_facts {
	enum termination_cause cause;
	int exit_code; /* corral's */
	/* One-command mode (`corral -- COMMAND`): `task` is the command's
	 * program, and its exit is told whether it failed or not. */
	bool one_command;

	/* TERMINATION_TASK_FAILED (and the command in one-command mode). */
	const char *task; /* "web/app" */
	bool has_exit;    /* it ran: `exit` says how its last run ended */
	struct task_exit exit;
	const char *failure; /* why it failed for good (runner_failure) */
	/* The rule that decided ("restart.attempts", "restart.no_restart_exit",
	 * "restart.policy", "after") and what it decided. */
	const char *rule;
	const char *decision;
	const char *group;
	const char *on_failure;     /* the group's action: "stop", "restart", "ignore" */
	const char *group_decision; /* what on_failure decided, or NULL */

	/* What asked for a shutdown ("SIGTERM", "corral shutdown"), or NULL. */
	const char *shutdown;
	/* Why what was left was killed ("shutdown_timeout (30s) passed",
	 * "a second SIGTERM"), or NULL; the tasks it killed, or NULL. */
	const char *killed;
	const char *killed_tasks;
	/* Tasks whose failure on_failure: ignore left ("g/t, g/u"), or NULL. */
	const char *ignored;
	const char *corral_error; /* TERMINATION_CORRAL_FAILED: what failed */

	/* What a task wrote into the file itself (Kubernetes' own use of
	 * it), kept after the head. */
	const char *task_message;
	size_t task_message_length;
	/* The task's last output lines, oldest first, each ending in '\n'. */
	const char *lines;
	size_t lines_length;
};

/* Writes the message into `out` (no NUL) and returns its length, at most
 * TERMINATION_MESSAGE_MAX. */
size_t termination_message_compose(const struct termination_facts *facts,
				   char out[TERMINATION_MESSAGE_MAX]);
