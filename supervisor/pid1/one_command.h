/* One-command mode, `corral [OPTIONS] -- COMMAND [ARG]...`: COMMAND is the
 * only task, and corral behaves as tini and dumb-init do, so that an image
 * can swap `tini --` or `dumb-init --` for `corral --`.
 *
 * It is the ordinary supervisor running a config made in memory (one group,
 * one main task, restart never: one_command_config), with this struct in
 * its run options for what differs: every signal corral gets is passed on,
 * the command has corral's stdio and terminal, and corral is quiet. The
 * cgroup, the pidfds, reaping and the killing of leftovers are the
 * supervisor's own. docs/decisions.md says why it is not a second,
 * smaller supervisor. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <sys/signalfd.h>
#include <sys/types.h>

#include "config/model/config.h"

struct one_command {
	/* -c: signals go to the command alone (tini's default). Otherwise to
	 * its whole process group (dumb-init's setsid mode; tini's -g): the
	 * command leads a session of its own, as every corral task does. */
	bool single_child;
	/* -r S:R: signal S is passed on as R; 0 drops it. -1: unchanged. */
	int rewrite[NSIG];
	/* stdin was corral's controlling terminal and corral let go of it,
	 * for the command to take (one_command_release_terminal). */
	bool terminal_released;
};

/* No rewrite but dumb-init's defaults, applied when a signal is passed on:
 * in setsid mode (not -c) SIGTSTP, SIGTTIN and SIGTTOU become SIGSTOP,
 * since the command's process group is orphaned (its parent, corral, is in
 * another session) and the kernel drops those three for an orphaned group;
 * with -c they go as they are. */
void one_command_init(struct one_command *mode);

/* Parses -r's "S:R" (numbers or names: "TERM:INT", "15:0") into the
 * table. Returns 0, or -1 when it is not a catchable signal pair. */
int one_command_parse_rewrite(struct one_command *mode, const char *text);

/* When stdin is corral's controlling terminal: lets go of it (TIOCNOTTY),
 * so that the command's session can take it and a shell in it has job
 * control (dumb-init does the same). The SIGHUP and SIGCONT the kernel
 * sends a session leader's group for this are not for the command, and are
 * ignored while it happens. Call before the signals are blocked. */
void one_command_release_terminal(struct one_command *mode);

/* A signal corral received, passed on to the command `pid` (0: it is not
 * running; nothing is sent) as the mode says. A job-control stop from a
 * terminal also stops corral itself, as dumb-init does, so that the shell
 * that started it sees the job stopped; SIGCONT resumes both. */
void one_command_forward(const struct one_command *mode, pid_t pid, int pidfd,
			 const struct signalfd_siginfo *info);

/* The config of one-command mode: group "main", task "command" running
 * argv (copied), restart never; exit codes in `expected` (tini's -e)
 * count as success. NULL on an internal error (said on stderr). */
struct config *one_command_config(char *const *argv, const struct exit_status_set *expected);
