#include "base/oom_protection.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/log.h"

#define PROTECTED_SCORE -999

static bool lowered;
static int first_score;

/* 0, or -errno (-EINVAL for a file that holds no number). */
static int read_score(const char *path, int *score)
{
	_cleanup_fclose_ FILE *file = fopen(path, "re");
	if (!file)
		return -errno;
	errno = 0;
	if (fscanf(file, "%d", score) == 1)
		return 0;
	return errno ? -errno : -EINVAL;
}

/* 0, or -errno. */
static int write_score(const char *path, int score)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char text[12];
	int length = snprintf(text, sizeof(text), "%d", score);
	ssize_t written = write(fd, text, (size_t)length);
	if (written < 0)
		return -errno;
	return written == length ? 0 : -EIO;
}

void oom_protection_start(int started_with)
{
	const char *own = "/proc/self/oom_score_adj";
	int own_score;
	int failure = read_score(own, &own_score);
	if (failure < 0) {
		log_info("oom_score_adj: cannot read %s (%s): corral is not protected from the "
			 "OOM killer",
			 own, strerror(-failure));
		return;
	}
	first_score = started_with == OOM_PROTECTION_OWN ? own_score : started_with;
	if (own_score <= PROTECTED_SCORE) {
		/* Already as protected, or more: tasks inherit it as before;
		 * or an upgrade's exec, lowered already by the corral before. */
		lowered = own_score < first_score;
		return;
	}
	failure = write_score(own, PROTECTED_SCORE);
	if (failure < 0) {
		/* EACCES without cap_sys_resource: every default container, so
		 * on every start; said with -v only. Any other error is news. */
		bool unprivileged = failure == -EACCES || failure == -EPERM;
		char error[96];
		snprintf(error, sizeof(error), "%s: %s",
			 unprivileged ? "needs cap_sys_resource" : "failed", strerror(-failure));
		if (unprivileged)
			log_debug("oom_score_adj: corral stays at %d, as its tasks (lowering it to "
				  "%d %s)",
				  first_score, PROTECTED_SCORE, error);
		else
			log_info("oom_score_adj: corral stays at %d, as its tasks (lowering it to "
				 "%d %s)",
				 first_score, PROTECTED_SCORE, error);
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

int oom_protection_started_with(void)
{
	return first_score;
}
