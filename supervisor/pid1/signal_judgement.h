/* A signal to corral is a request, judged as the control socket judges a
 * connection (docs/decisions.md, "Signals from tasks"): from a task,
 * SIGTERM, SIGINT and SIGQUIT ask for a shutdown, SIGHUP for a reload,
 * SIGUSR2 for an upgrade, and each is honoured only where the task's
 * `control:` list grants that right. From the kernel, from above corral's
 * pid namespace, from corral's parent or from any process that is not a
 * task, they are honoured as always. Pure: who sent it in, a verdict out. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum signal_sender_kind {
	/* ssi_pid 0: the kernel (a terminal's ^C, SI_KERNEL), or a process
	 * in a pid namespace above corral's (a container engine). */
	SIGNAL_FROM_KERNEL_OR_ABOVE,
	SIGNAL_FROM_CORRAL,  /* itself (a write to a closed pipe) */
	SIGNAL_FROM_PARENT,  /* corral's parent: systemd, a shell, s6 */
	SIGNAL_FROM_TASK,    /* a process in a task's cgroup, `task` names it */
	SIGNAL_FROM_STARTED, /* descends from corral, in no task's cgroup */
	/* It exited before corral could look (its pid gone): it cannot be
	 * told from a task. */
	SIGNAL_FROM_GONE,
	SIGNAL_FROM_OTHER, /* an operator: none of the above */
};

struct signal_sender {
	enum signal_sender_kind kind;
	pid_t pid;
	const char *task; /* SIGNAL_FROM_TASK: "web/app" */
};

enum signal_verdict {
	SIGNAL_HONOUR,
	SIGNAL_REFUSE_NOT_GRANTED,      /* a task without the right */
	SIGNAL_REFUSE_STARTED,          /* a hook, a probe: never an operator */
	SIGNAL_REFUSE_GONE_MAY_BE_TASK, /* gone, and some task could have sent it */
};

/* The control right a signal asks for (enum control_right): shutdown for
 * SIGTERM, SIGINT and SIGQUIT, reload for SIGHUP, upgrade for SIGUSR2;
 * 0 for a signal that asks for nothing (SIGUSR1, SIGCHLD). */
unsigned signal_judgement_right(int signal_number);

/* `task_rights`: the sending task's `control:` rights; `tasks_can_signal`:
 * some running task could have sent a signal to corral at all
 * (signal_exposure.h), which decides a sender that is gone. */
enum signal_verdict signal_judgement_decide(const struct signal_sender *sender, int signal_number,
					    unsigned task_rights, bool tasks_can_signal);

/* "pid 42 (task web/app)", "pid 7 (corral's parent)", "the kernel", ...
 * into `buffer`, for the lines that say what a signal did. */
void signal_judgement_describe_sender(const struct signal_sender *sender, char *buffer,
				      size_t size);
