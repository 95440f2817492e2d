#include "supervisor/pid1/zombie_reaper.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

bool reaper_init(void)
{
	if (getpid() == 1)
		return true;
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	return false;
}

unsigned reaper_sweep(const struct reaper_ops *ops)
{
	unsigned orphans = 0;
	for (;;) {
		siginfo_t info;
		memset(&info, 0, sizeof(info));
		if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0 || info.si_pid == 0)
			return orphans;
		if (ops->reap_task(ops->context, info.si_pid))
			continue; /* the task reaped it through its pidfd */
		/* Not a task: an orphan that was reparented to us. */
		waitpid(info.si_pid, NULL, WNOHANG);
		orphans++;
	}
}

/* Children of corral as the kernel lists them (needs no /proc walk). */
static size_t read_children(pid_t *children, size_t capacity)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	FILE *file = fopen(path, "re");
	if (!file)
		return 0;
	size_t count = 0;
	int pid;
	while (count < capacity && fscanf(file, "%d", &pid) == 1)
		children[count++] = pid;
	fclose(file);
	return count;
}

unsigned reaper_kill_remaining_children(void)
{
	unsigned killed = 0;
	pid_t children[256];
	size_t count;
	while ((count = read_children(children, 256)) > 0) {
		for (size_t i = 0; i < count; i++) {
			kill(children[i], SIGKILL);
			waitpid(children[i], NULL, 0);
			killed++;
		}
	}
	return killed;
}
