#include "supervisor/signals.h"

#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>

static void handled_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGUSR2);
}

int signals_open(void)
{
	sigset_t set;
	handled_signals(&set);
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

void signals_restore(void)
{
	sigset_t set;
	handled_signals(&set);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}
