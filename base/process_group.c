#include "base/process_group.h"

#include <string.h>
#include <sys/wait.h>

void process_group_kill(pid_t leader)
{
	if (leader <= 0)
		return;
	kill(-leader, SIGKILL);
	kill(leader, SIGKILL);
}

bool process_group_reap(int pidfd, pid_t leader, bool kill_rest, siginfo_t *info)
{
	memset(info, 0, sizeof(*info));
	if (waitid(P_PIDFD, (id_t)pidfd, info, WEXITED | WNOHANG | WNOWAIT) < 0 ||
	    info->si_pid == 0)
		return false;
	if (kill_rest)
		kill(-leader, SIGKILL);
	siginfo_t reaped;
	waitid(P_PIDFD, (id_t)pidfd, &reaped, WEXITED | WNOHANG);
	return true;
}
