#include "base/cpu_precedence.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "base/log.h"

static bool lowered;
static int first_nice;

void cpu_precedence_start(int started_with)
{
	errno = 0;
	int own = getpriority(PRIO_PROCESS, 0);
	if (own == -1 && errno) {
		log_info("nice: cannot read corral's own (%s): it goes before its tasks for the "
			 "CPU no more than they do",
			 strerror(errno));
		return;
	}
	first_nice = started_with == CPU_PRECEDENCE_OWN ? own : started_with;
	int wanted =
	    first_nice - CPU_PRECEDENCE_STEPS < -20 ? -20 : first_nice - CPU_PRECEDENCE_STEPS;
	if (own <= wanted) {
		/* An upgrade's exec: lowered already. A corral started at
		 * -20 goes before its tasks only if they are higher. */
		lowered = own < first_nice;
		return;
	}
	if (setpriority(PRIO_PROCESS, 0, wanted) < 0) {
		/* EACCES without CAP_SYS_NICE: a default container, so on
		 * every start; said with -v only. Any other error is news. */
		int failure = errno;
		if (failure == EACCES || failure == EPERM)
			log_debug("nice: corral stays at %d, as its tasks (lowering it to %d needs "
				  "cap_sys_nice: %s)",
				  own, wanted, strerror(failure));
		else
			log_info(
			    "nice: corral stays at %d, as its tasks (lowering it to %d failed: "
			    "%s)",
			    own, wanted, strerror(failure));
		return;
	}
	lowered = true;
	log_debug("nice: corral at %d, its tasks at %d, the value it started with", wanted,
		  first_nice);
}

int cpu_precedence_started_with(void)
{
	return first_nice;
}

bool cpu_precedence_children_nice(int *nice)
{
	if (lowered)
		*nice = first_nice;
	return lowered;
}
