/* `corral upgrade [BINARY]` and SIGUSR2: corral execs a new binary (or
 * its own again) in its own process, and every task runs on: the state
 * goes over in a hand-over document (handover.h), as systemd's
 * daemon-reexec and s6-svscan's exec do.
 *
 * Before: the binary is opened once (a file others could replace is
 * refused), run with --handover-format through that fd, asynchronously,
 * and must print the format this corral writes; nothing is done
 * otherwise. The exec is of that same fd. After the exec,
 * the new corral reads the document, takes every task, pipe and
 * connection over, and answers the client that asked. A new corral that
 * cannot read the document, load the config or take a task over execs
 * the old binary (kept open as an fd, even if its file was replaced)
 * with the same document, and that one answers with why. corral's pid
 * stays the same throughout: as PID 1 it never exits. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/handover.h"

struct supervisor;
struct control_client;

/* main's argv, which the exec gives the new corral (its options, its
 * config paths). */
void upgrade_remember_command_line(int argc, char **argv);
/* That argv (NULL-terminated). */
char *const *upgrade_command_line(void);

/* `corral --handover-format`: what a corral about to exec this binary
 * asks. Prints "corral VERSION handover-format N". */
int upgrade_print_format(void);

/* Opens `binary` ("": corral's own, as it is on disk now), refuses one
 * that others could replace (upgrade_binary.h), and starts its check
 * (upgrade_check.h): 0 when started, or -errno with `why` (nothing was
 * changed). When the check passes, corral execs that very file with the
 * state handed over; when it fails, or the exec does, the event log says
 * why and so does the reply to `requester` (the client that asked, which
 * waits meanwhile: control_client_wait), or corral's log when NULL
 * (SIGUSR2). A second upgrade while one is checked is refused. */
int upgrade_run(struct supervisor *supervisor, struct control_client *requester, const char *binary,
		char *error, size_t error_size);

/* The SIGCHLD sweep found `pid` exited: true when it was the check's. */
bool upgrade_reap_check(struct supervisor *supervisor, pid_t pid);

/* corral is exiting: a check under way is killed and forgotten. */
void upgrade_cancel(struct supervisor *supervisor);

/* In the new corral, first thing in main: reads the document named by
 * $CORRAL_HANDOVER_FD, if any (the variable is taken out of the
 * environment, so that no task inherits it). A document this corral
 * cannot read sends it back to the old binary. */
void upgrade_resume_begin(void);

/* The document being taken over, or NULL for an ordinary start. */
const struct handover_reader *upgrade_resuming(void);
/* The document being taken over is a restore's: corral's loop process
 * died and its keeper started this one (restore.h). */
bool upgrade_restoring(void);

/* The new corral cannot take the state over (`why`): back to the old
 * binary with the same document. Returns only when not resuming. */
void upgrade_fall_back(const char *error);

/* After supervisor_open took the tasks and connections over: the
 * handed-over fds are close-on-exec again, the old binary's fd closed,
 * and the client that asked is answered. */
void upgrade_finish(struct supervisor *supervisor);
