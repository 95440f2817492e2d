#include "supervisor/keeper/keeper_main.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/log.h"
#include "supervisor/keeper/keeper.h"
#include "supervisor/keeper/keeper_handoff.h"
#include "supervisor/keeper/keeper_notify.h"

struct keeper_binary {
	int fd;
	char *const *argv;
	struct keeper_notify notify;
};

bool keeper_main_wanted(bool option)
{
	const char *wanted = getenv(KEEPER_WANTED_ENV);
	return option || (wanted && strcmp(wanted, "1") == 0);
}

static pid_t start_loop(void *context, int channel, const struct kept_records *records,
			unsigned restores)
{
	struct keeper_binary *binary = context;
	return keeper_exec_loop(binary->fd, binary->argv, channel, records, restores);
}

static void pass_notify(void *context, pid_t loop)
{
	struct keeper_binary *binary = context;
	keeper_notify_pass(&binary->notify, loop);
}

static void told(void *context, const struct keeper_decision *decision, unsigned restores)
{
	(void)context;
	if (decision->action == KEEPER_RESTORE)
		log_message("keeper: corral's loop process died by %s: starting it again with "
			    "its tasks (restore %u)",
			    strsignal(decision->signal), restores + 1);
	else if (decision->action == KEEPER_GIVE_UP)
		log_message("keeper: corral's loop process died by %s, the %s time within %d s: "
			    "giving up",
			    strsignal(decision->signal), "too many",
			    KEEPER_DEATHS_WINDOW_MS / 1000);
}

/* The keeper holds two or three fds a task, under the numbers the loop
 * gave them: as many as the loop may open, and more than the soft
 * limit it was started with (1024 by default). It raises its own to the
 * kernel's ceiling where it may (cap_sys_resource), else to its hard
 * limit; each loop is given back the limits the keeper started with
 * (keeper_handoff.h), and raises its own as corral always did. */
static void raise_fd_limit(void)
{
	struct rlimit started;
	if (getrlimit(RLIMIT_NOFILE, &started) < 0)
		return;
	keeper_handoff_loop_fd_limit(&started);
	unsigned long long ceiling = 0;
	FILE *nr_open = fopen("/proc/sys/fs/nr_open", "re");
	if (nr_open) {
		if (fscanf(nr_open, "%llu", &ceiling) != 1)
			ceiling = 0;
		fclose(nr_open);
	}
	struct rlimit wanted = {(rlim_t)ceiling, (rlim_t)ceiling};
	if (ceiling <= started.rlim_max || setrlimit(RLIMIT_NOFILE, &wanted) < 0) {
		wanted.rlim_cur = wanted.rlim_max = started.rlim_max;
		setrlimit(RLIMIT_NOFILE, &wanted);
	}
}

int keeper_main(char *const argv[])
{
	raise_fd_limit();
	/* The file as it is now, opened once: a restore runs this very
	 * binary even if the file is replaced (as `corral upgrade` does). */
	int binary = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (binary < 0) {
		log_message("keeper: cannot open its own binary: %s", strerror(errno));
		return 1;
	}
	/* Tasks orphaned by a loop's death come to the keeper, which reaps
	 * them and tells the next loop how they ended. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	struct keeper_binary context = {binary, argv, {.relay = -1, .parent = -1}};
	/* Under systemd: the loop's READY=1 and pings go through the keeper,
	 * the unit's MainPID (keeper_notify.h). */
	int relayed = keeper_notify_open(&context.notify);
	if (relayed < 0)
		log_message("keeper: cannot relay NOTIFY_SOCKET for the loop: %s; it is told "
			    "directly",
			    strerror(-relayed));
	struct keeper_settings settings = {.start_loop = start_loop,
					   .context = &context,
					   .told = told,
					   .watched_fd = context.notify.relay,
					   .readable =
					       context.notify.relay >= 0 ? pass_notify : NULL};
	/* For the restore soak only (tests/soak/restore_soak.py). */
	const char *window = getenv("CORRAL_TEST_KEEPER_WINDOW_MS");
	if (window)
		settings.deaths_window_ms = strtoull(window, NULL, 10);
	int code = keeper_run(&settings);
	keeper_notify_close(&context.notify);
	close(binary);
	return code;
}
