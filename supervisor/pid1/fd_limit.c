#include "supervisor/pid1/fd_limit.h"

#include <stdio.h>

#include "base/log.h"
#include "supervisor/pid1/fd_budget.h"

/* What a task holds besides fd_budget's count from its spawn until its
 * exec is confirmed (the error pipe, which the loop reads later): every
 * task of a stage is spawned in one turn of the loop, so at a stage's start
 * they all hold it at once. Measured: 1000 tasks under 2600 fds on a host
 * where one holds 2 ran short at the 788th start, 1400 under 4267 in the
 * VM (3 each) at the 947th: about 1.3 to 1.5 more a task. */
#define FDS_OF_A_START 2

/* The kernel's default fs.nr_open, for a /proc that cannot be read. */
#define DEFAULT_NR_OPEN ((rlim_t)1 << 20)

struct rlimit fd_limit_wanted(struct rlimit current, size_t needed, rlim_t nr_open)
{
	struct rlimit wanted = current;
	if (current.rlim_max != RLIM_INFINITY && (rlim_t)needed > current.rlim_max) {
		rlim_t hard = (rlim_t)needed < nr_open ? (rlim_t)needed : nr_open;
		if (hard > current.rlim_max)
			wanted.rlim_max = hard;
	}
	wanted.rlim_cur = wanted.rlim_max;
	return wanted;
}

static rlim_t read_nr_open(void)
{
	FILE *file = fopen("/proc/sys/fs/nr_open", "re");
	unsigned long long value = 0;
	if (file) {
		if (fscanf(file, "%llu", &value) != 1)
			value = 0;
		fclose(file);
	}
	return value ? (rlim_t)value : DEFAULT_NR_OPEN;
}

static size_t task_count(const struct config *config)
{
	size_t tasks = 0;
	for (size_t g = 0; g < config->group_count; g++)
		tasks += config->groups[g].task_count;
	return tasks;
}

void fd_limit_raise(const struct config *config)
{
	struct rlimit current;
	if (getrlimit(RLIMIT_NOFILE, &current) < 0)
		return;
	size_t tasks = task_count(config), running = fd_budget(config);
	size_t needed = running + FDS_OF_A_START * tasks;
	struct rlimit wanted = fd_limit_wanted(current, needed, read_nr_open());
	if (wanted.rlim_max > current.rlim_max) {
		if (setrlimit(RLIMIT_NOFILE, &wanted) == 0) {
			log_info(
			    "RLIMIT_NOFILE: hard limit raised from %llu to %llu: %zu task%s need "
			    "about %zu fds, and %d more each while they start (corral has "
			    "cap_sys_resource)",
			    (unsigned long long)current.rlim_max,
			    (unsigned long long)wanted.rlim_max, tasks, tasks == 1 ? "" : "s",
			    running, FDS_OF_A_START);
			return;
		}
		/* EPERM without cap_sys_resource: the soft limit alone, as before. */
		wanted.rlim_max = wanted.rlim_cur = current.rlim_max;
	}
	if (wanted.rlim_cur > current.rlim_cur)
		setrlimit(RLIMIT_NOFILE, &wanted);
}
