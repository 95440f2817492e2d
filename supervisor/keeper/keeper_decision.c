#include "supervisor/keeper/keeper_decision.h"

#include <string.h>
#include <sys/wait.h>

/* Forgets the deaths older than the window. */
static void forget_old(struct keeper_deaths *deaths, uint64_t now_ms)
{
	unsigned kept = 0;
	uint64_t window = deaths->window_ms ? deaths->window_ms : KEEPER_DEATHS_WINDOW_MS;
	for (unsigned i = 0; i < deaths->count; i++)
		if (now_ms - deaths->at_ms[i] < window)
			deaths->at_ms[kept++] = deaths->at_ms[i];
	deaths->count = kept;
}

struct keeper_decision keeper_loop_ended(struct keeper_deaths *deaths, int wait_status,
					 uint64_t now_ms)
{
	if (WIFEXITED(wait_status))
		return (struct keeper_decision){KEEPER_EXIT, WEXITSTATUS(wait_status), 0};
	int signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
	forget_old(deaths, now_ms);
	if (deaths->count == KEEPER_DEATHS_ALLOWED)
		/* As a shell says a death by a signal. */
		return (struct keeper_decision){KEEPER_GIVE_UP, 128 + signal, signal};
	deaths->at_ms[deaths->count++] = now_ms;
	return (struct keeper_decision){KEEPER_RESTORE, 0, signal};
}
