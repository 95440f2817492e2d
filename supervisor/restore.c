#include "supervisor/restore.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "isolation/cgroup_fs.h"
#include "supervisor/keeper/keeper_channel.h"
#include "supervisor/keeper/keeper_loop_side.h"
#include "supervisor/kept_state.h"
#include "supervisor/supervisor_internal.h"
#include "supervisor/tasks/pid_index.h"
#include "supervisor/tasks/task_keeper.h"
#include "supervisor/upgrade.h"
#include "supervisor/upgrade/restore_document.h"

/* Taken in main, before the supervisor exists. */
static struct keeper_loop_side keeper = {.channel = -1};
static bool keeper_taken;
/* The keeper's channel and count, wherever the side was moved to. */
static int keeper_channel = -1;
static unsigned keeper_restores;

/* What the restore could not take back as it was, for its log line. */
static unsigned restored_tasks, crashed_tasks;

static unsigned kill_keepers_children(const struct pid_index *tasks);

int restore_begin(struct handover_reader *document)
{
	char error[512];
	keeper_taken = true;
	if (keeper_loop_side_take(&keeper, error, sizeof(error)) < 0) {
		log_message("no keeper: %s", error);
		return -1;
	}
	keeper_channel = keeper.channel;
	keeper_restores = keeper.restores;
	if (!keeper.restoring)
		return -1;
	int built = restore_document_build(&keeper.restored, document, error, sizeof(error));
	/* Its fds are the document's now; the table goes. */
	for (size_t i = 0; i < keeper.restored.count; i++)
		for (size_t f = 0; f < keeper.restored.items[i].fd_count; f++)
			keeper.restored.items[i].fds[f] = -1;
	kept_records_free(&keeper.restored);
	keeper.restoring = false;
	if (built < 0) {
		/* Nothing to take back from: the tasks (the keeper's children
		 * now) are not left unsupervised. */
		unsigned killed = kill_keepers_children(NULL);
		log_message("restore: cannot take the state back: %s; its %u process%s killed, "
			    "corral exits 1",
			    error, killed, killed == 1 ? "" : "es");
		_exit(1);
	}
	return 0;
}

bool restore_keeper_variables(char *keeper_fd, char *restores, size_t size)
{
	if (keeper_channel < 0)
		return false;
	snprintf(keeper_fd, size, "CORRAL_KEEPER_FD=%d", keeper_channel);
	snprintf(restores, size, "CORRAL_RESTORES=%u", keeper_restores);
	fcntl(keeper_channel, F_SETFD, 0);
	return true;
}

bool restore_keeper_present(void)
{
	return keeper.channel >= 0;
}

void restore_take_keeper(struct keeper_loop_side *into)
{
	if (!keeper_taken) {
		/* Not through main (the unit tests): as at a start. */
		char error[512];
		if (keeper_loop_side_take(&keeper, error, sizeof(error)) < 0)
			log_message("no keeper: %s", error);
	}
	*into = keeper;
	keeper = (struct keeper_loop_side){.channel = -1};
	kept_records_init(&keeper.restored);
	keeper_taken = true;
}

/* What a task was doing that cannot be taken back (a start, a stop)
 * goes: its cgroup is emptied. */
static void empty_cgroup(struct task *task)
{
	char error[256];
	if (!task_cgroup_exists(&task->cgroup) &&
	    task_cgroup_run_prepare(task, error, sizeof(error)) < 0)
		return;
	if (task_cgroup_kill(&task->cgroup) < 0 || !task->cgroup.made)
		return;
	/* Gone before the task can start again: never two runs of it at
	 * once. SIGKILL takes a few ms at most; the wait is bounded (200
	 * ms), once per task a restore could not take back. */
	char events[PATH_MAX];
	snprintf(events, sizeof(events), "%s/cgroup.events", task->cgroup.name);
	int fd = openat(task->cgroup.parent_fd, events, O_RDONLY | O_CLOEXEC);
	uint64_t populated = 1;
	for (int i = 0; fd >= 0 && i < 200; i++) {
		if (cgroup_fs_pread_key(fd, "populated", &populated) < 0 || !populated)
			break;
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	if (fd >= 0)
		close(fd);
	if (populated)
		log_message("%s: restore: its cgroup still holds processes 200 ms after "
			    "cgroup.kill",
			    task->config->full_name);
}

/* A task the keeper holds no record of: corral was starting it when it
 * died, before its first record. What it started is killed; the task
 * starts as new. */
static void take_unrecorded(struct supervisor *supervisor)
{
	for (size_t i = 0; i < supervisor->group_count; i++)
		for (size_t t = 0; t < supervisor->groups[i]->task_count; t++) {
			struct task *task = supervisor->groups[i]->tasks[t];
			if (task->keeper_restored)
				continue;
			crashed_tasks++;
			log_message("%s: restore: the keeper holds no record of it (it was being "
				    "started): what it started is killed, and it starts as new",
				    task->config->full_name);
			empty_cgroup(task);
			/* A slot of its own: the one it was given at its start may
			 * be another task's from the records. */
			task->keeper_slot = ++task->services->keeper_next_slot;
			task_keeper_changed(task);
		}
}

void restore_keep_slot(struct task *task, unsigned slot)
{
	if (!slot || !task->services->keeper)
		return;
	task->keeper_slot = slot;
	if (task->services->keeper_next_slot < slot)
		task->services->keeper_next_slot = slot;
}

void restore_forget_slot(struct supervisor *supervisor, unsigned slot)
{
	struct keeper_message message = {.kind = KEEPER_RECORD, .slot = slot};
	if (slot && supervisor->keeper.channel >= 0)
		keeper_channel_send(supervisor->keeper.channel, &message, NULL, NULL, NULL);
}

void restore_task_taken(struct task *task, const char *unsettled, const char *failure)
{
	/* Sent again as it is now, whatever the keeper held. */
	task->keeper_changed = true;
	task->keeper_restored = true;
	if (!unsettled && !failure) {
		restored_tasks++;
		return;
	}
	crashed_tasks++;
	log_message("%s: restore: not taken back as it was (%s): handled as a crash",
		    task->config->full_name, failure ? failure : unsettled);
	empty_cgroup(task);
	/* Its recorded process, if any, is killed too; its exit comes from
	 * the keeper (task_reap) and the runner decides as for a crash. */
	int killed = task_send_signal(task, SIGKILL);
	if (killed == 0)
		return;
	if (killed == -ESRCH && task->pidfd_watch.fd >= 0) {
		/* Gone and reaped already: the loop that died read its exit
		 * and went on (a restart begun, so the record still named it),
		 * and no REAPED will come for it again. Its run ends here, as
		 * killed; a REAPED still on its way finds no task by its pid. */
		task->keeper_reaped = true;
		task->keeper_wait_status = SIGKILL; /* waitpid's status for it */
		task_reap(task);
		task->keeper_reaped = false;
		return;
	}
	enum task_state state = task->runner.state;
	if (state == TASK_RUNNING || state == TASK_STARTING) {
		struct task_exit exit = {.kind = TASK_EXIT_SIGNAL, .signal = SIGKILL};
		task_finish_run(task, exit);
	}
}

/* Every child of the keeper but this loop and the processes in `tasks`
 * (NULL: none spared), each with its process group: how many. */
static unsigned kill_keepers_children(const struct pid_index *tasks)
{
	pid_t keeper_pid = getppid();
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)keeper_pid, (int)keeper_pid);
	FILE *file = fopen(path, "re");
	if (!file)
		return 0;
	unsigned killed = 0;
	long pid;
	while (fscanf(file, "%ld", &pid) == 1) {
		if ((pid_t)pid == getpid() || (tasks && pid_index_get(tasks, (pid_t)pid)))
			continue;
		if (getpgid((pid_t)pid) == (pid_t)pid)
			kill(-(pid_t)pid, SIGKILL);
		kill((pid_t)pid, SIGKILL);
		killed++;
	}
	fclose(file);
	return killed;
}

/* What the dead loop had running besides its tasks (hooks, exec probes,
 * `corral exec` commands, a check of `corral upgrade`) is the keeper's
 * now, and no loop waits for it: killed (each with its process group),
 * then run again as the new loop's states say. */
static void kill_strays(struct supervisor *supervisor)
{
	unsigned killed = kill_keepers_children(&supervisor->task_pids);
	if (killed)
		log_message("restore: %u process%s the loop before had started besides its tasks "
			    "(hooks, probes, exec commands) killed",
			    killed, killed == 1 ? "" : "es");
}

void restore_finish(struct supervisor *supervisor)
{
	kill_strays(supervisor);
	take_unrecorded(supervisor);
	char message[512];
	snprintf(message, sizeof(message),
		 "corral's loop process died; pid %d took back %u task%s as they were%s",
		 (int)getpid(), restored_tasks, restored_tasks == 1 ? "" : "s",
		 crashed_tasks ? ", and handled the others as crashes (see above)" : "");
	log_message("restore: %s", message);
	event_log_corral(&supervisor->events, corral_event_type_name(CORRAL_EVENT_RESTORED),
			 message);
	/* It was shutting down: it goes on doing so. */
	const struct handover_reader *reader = upgrade_resuming();
	if (reader && handover_bool(json_object_get(reader->root, "supervisor"), "shutting_down"))
		supervisor_begin_shutdown(supervisor, "a shutdown begun before the restore",
					  "corral");
	kept_state_changed(supervisor);
}
