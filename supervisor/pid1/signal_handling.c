#include "supervisor/pid1/signal_handling.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <sys/signalfd.h>
#include <time.h>

static void handled_signals(bool forward_all, sigset_t *set)
{
	sigemptyset(set);
	if (forward_all) {
		/* SIGKILL and SIGSTOP cannot be blocked: sigprocmask leaves
		 * them out by itself. The real-time signals glibc keeps for
		 * itself (32, 33) are left alone. */
		for (int signal_number = 1; signal_number < SIGRTMIN; signal_number++)
			if (signal_number < 32)
				sigaddset(set, signal_number);
		for (int signal_number = SIGRTMIN; signal_number <= SIGRTMAX; signal_number++)
			sigaddset(set, signal_number);
		return;
	}
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGUSR2);
}

int signals_open(bool forward_all)
{
	sigset_t set;
	handled_signals(forward_all, &set);
	if (!forward_all)
		signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

void signals_restore(bool forward_all)
{
	sigset_t set;
	handled_signals(forward_all, &set);
	/* What came after the command ended (a late SIGTERM, the SIGPIPE of
	 * a write to a closed stdout) must not take corral down with its
	 * default action, and change its exit code, once unblocked. */
	if (forward_all) {
		const struct timespec now = {0, 0};
		while (sigtimedwait(&set, NULL, &now) > 0)
			;
	}
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}
