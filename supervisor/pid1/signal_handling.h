/* The signals corral handles, read through a signalfd. They are blocked in
 * corral (a blocked signal is queued even for PID 1, which would otherwise
 * ignore it) and restored to defaults in every task before exec. */
#pragma once

#include <stdbool.h>

/* Blocks the handled signals and returns a CLOEXEC, non-blocking signalfd,
 * or -errno. By default SIGPIPE is ignored: a closed stdout must not kill
 * corral. With `forward_all` (one-command mode), every signal that can be
 * caught is handled, so that it can be passed on to the command; SIGPIPE
 * among them, blocked rather than ignored (an ignored signal is dropped
 * when sent, and could not be passed on). */
int signals_open(bool forward_all);

/* Unblocks them again (at exit). */
void signals_restore(bool forward_all);
