#include "base/oom_protection.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"

#define PROTECTED_SCORE -999

static bool lowered;
static int first_score;

static int read_score(const char *path, int *score)
{
	FILE *file = fopen(path, "re");
	if (!file)
		return -1;
	int read = fscanf(file, "%d", score);
	fclose(file);
	return read == 1 ? 0 : -1;
}

/* 0, or -1 with errno. */
static int write_score(const char *path, int score)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char text[12];
	int length = snprintf(text, sizeof(text), "%d", score);
	int result = write(fd, text, (size_t)length) == length ? 0 : -1;
	int saved = errno;
	close(fd);
	errno = saved;
	return result;
}

void oom_protection_start(void)
{
	const char *own = "/proc/self/oom_score_adj";
	if (read_score(own, &first_score) < 0) {
		log_info("oom_score_adj: cannot read %s (%s): corral is not protected from the "
			 "OOM killer",
			 own, strerror(errno));
		return;
	}
	if (first_score <= PROTECTED_SCORE)
		return; /* already as protected, or more: tasks inherit it as before */
	if (write_score(own, PROTECTED_SCORE) < 0) {
		/* EACCES without cap_sys_resource: every default container, so
		 * on every start; said with -v only. Any other error is news. */
		bool unprivileged = errno == EACCES || errno == EPERM;
		char why[96];
		snprintf(why, sizeof(why), "%s: %s",
			 unprivileged ? "needs cap_sys_resource" : "failed", strerror(errno));
		if (unprivileged)
			log_debug("oom_score_adj: corral stays at %d, as its tasks (lowering it to "
				  "%d %s)",
				  first_score, PROTECTED_SCORE, why);
		else
			log_info("oom_score_adj: corral stays at %d, as its tasks (lowering it to "
				 "%d %s)",
				 first_score, PROTECTED_SCORE, why);
		return;
	}
	lowered = true;
	log_info("oom_score_adj: corral at %d, its tasks at %d, the value it started with",
		 PROTECTED_SCORE, first_score);
}

bool oom_protection_children_score(int *score)
{
	if (lowered)
		*score = first_score;
	return lowered;
}

void oom_protection_reset_child(pid_t pid)
{
	if (!lowered)
		return;
	char path[40];
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	/* It may be gone already (ENOENT, ESRCH): then there is nothing to protect. */
	write_score(path, first_score);
}

void oom_protection_set_own(const char *task_value)
{
	const char *own = "/proc/self/oom_score_adj";
	if (task_value[0])
		write_score(own, atoi(task_value));
	else if (lowered)
		write_score(own, first_score);
}
