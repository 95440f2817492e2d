#include "supervisor/keeper/keeper_main.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

int keeper_main(char *const argv[])
{
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
