/* The signals corral handles, read through a signalfd. They are blocked in
 * corral (a blocked signal is queued even for PID 1, which would otherwise
 * ignore it) and restored to defaults in every task before exec. */
#pragma once

/* Blocks the handled signals and returns a CLOEXEC, non-blocking signalfd,
 * or -errno. SIGPIPE is ignored: a closed stdout must not kill corral. */
int signals_open(void);

/* Unblocks them again (at exit). */
void signals_restore(void);
