/* A task's cgroup while it runs: made before a start (with an isolated
 * task's device policy), watched while what a run left behind is killed
 * (cgroup.events, from the main process's exit only: an idle task holds no
 * fd for it; OOM kills are watched once per group, group_oom_watch.h), and
 * where a run ends: once the cgroup is empty. */
#include "supervisor/tasks/task.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "base/log.h"
#include "base/units.h"
#include "isolation/cgroup_fs.h"
#include "supervisor/tasks/group.h"

static void on_cgroup_events(struct loop_watch *watch, uint32_t events);
static void on_cgroup_poll(struct loop_timer *timer);

#define CGROUP_POLL_MS 50

void task_cgroup_run_init(struct task *task)
{
	task->cgroup_events_watch =
	    (struct loop_watch){.fd = -1, .callback = on_cgroup_events, .data = task};
	loop_timer_init(&task->cgroup_poll, on_cgroup_poll, task);
	task_cgroup_init(&task->cgroup);
	device_policy_init(&task->devices);
	struct cgroup_tree *tree = task->services->cgroups;
	if (task->config->isolation.enabled && !tree->enabled)
		log_message("%s: warning: isolated without a device policy: it needs a cgroup of "
			    "the task's own (see above)",
			    task->config->full_name);
	else if (task->config->isolation.enabled && !device_policy_possible())
		log_message("%s: warning: isolated without a device policy: corral runs in a user "
			    "namespace, where the kernel lets no one set one; the container's "
			    "own policy applies",
			    task->config->full_name);
}

static void watch_file(struct task *task, struct loop_watch *watch, int fd)
{
	if (fd < 0)
		return;
	watch->fd = fd;
	loop_watch_add(task->services->loop, watch, EPOLLPRI);
}

static void unwatch_file(struct task *task, struct loop_watch *watch)
{
	if (watch->fd < 0)
		return;
	loop_watch_remove(task->services->loop, watch);
	close(watch->fd);
	watch->fd = -1;
}

/* Made before the first start, again after the task was dead for good
 * (ForceRestart, restart --all), and after a run that ended with
 * cgroup.kill (see task_cgroup.killed). */
static int create_cgroup(struct task *task, char *error, size_t error_size)
{
	struct cgroup_tree *tree = task->services->cgroups;
	char warning[256];
	int failure = task_cgroup_create(&task->cgroup, tree, task->group->cgroup_fd,
					 task->group->config->name, task->config->name,
					 &task->config->resources, error, error_size, warning,
					 sizeof(warning));
	if (failure < 0)
		return failure;
	if (warning[0])
		log_message("%s: warning: %s", task->config->full_name, warning);
	if (!task_cgroup_exists(&task->cgroup))
		return 0; /* cgroups are off, and the task asks for no limit */
	/* A new cgroup's OOM counters start at 0; each run's end moves the
	 * baseline, so a spawn reads nothing. */
	task->oom_kills_reported = 0;
	task->cgroup.oom_kills_of_execs = 0;
	return 0;
}

/* Before every start: the configured devices and this start's additions
 * (prestart hooks) may differ from the last start's. */
static int apply_device_policy(struct task *task, char *error, size_t error_size)
{
	const struct isolation_config *isolation = &task->config->isolation;
	if (!isolation->enabled || !task_cgroup_exists(&task->cgroup) || !device_policy_possible())
		return 0;
	return device_policy_apply(&task->devices, &task->cgroup, isolation->devices,
				   isolation->device_count, task->additions.devices,
				   task->additions.device_count, error, error_size);
}

int task_cgroup_run_prepare(struct task *task, char *error, size_t error_size)
{
	task_usage_forget(&task->usage); /* a new run: the last figures were the old one's */
	if (task->cgroup.killed)
		task_cgroup_run_release(task);
	if (!task_cgroup_exists(&task->cgroup)) {
		int failure = create_cgroup(task, error, error_size);
		if (failure < 0)
			return failure;
	}
	return apply_device_policy(task, error, error_size) < 0 ? -EINVAL : 0;
}

void task_cgroup_run_release(struct task *task)
{
	unwatch_file(task, &task->cgroup_events_watch);
	loop_timer_cancel(task->services->loop, &task->cgroup_poll);
	device_policy_release(&task->devices);
	task_usage_forget(&task->usage);
	if (task_cgroup_exists(&task->cgroup))
		task_cgroup_remove(&task->cgroup, task->services->cgroups);
}

void task_read_stats(const struct task *task, struct task_cgroup_stats *stats)
{
	task_cgroup_stats(&task->cgroup, stats);
}

/* An oom_killed event for the kills not reported yet. Returns the kills of
 * the current run. */
static uint64_t report_oom_kills(struct task *task)
{
	uint64_t counter = task_cgroup_own_oom_kills(&task->cgroup);
	if (counter > task->oom_kills_reported) {
		uint64_t kills = counter - task->oom_kills_reported;
		task->oom_kills_reported = counter;
		task_counts_of(task)->oom_kills += kills;
		char message[TASK_EVENT_MESSAGE_MAX], limit[32] = "";
		if (task->config->resources.memory)
			format_size_bytes(task->config->resources.memory, limit, sizeof(limit));
		snprintf(message, sizeof(message),
			 "the OOM killer killed %u process%s of the task%s%s%s", (unsigned)kills,
			 kills == 1 ? "" : "es", limit[0] ? " (memory limit " : "", limit,
			 limit[0] ? ")" : "");
		task_note_event(task, TASK_EVENT_OOM_KILLED, message);
	}
	return counter > task->cgroup.oom_kills_at_start ? counter - task->cgroup.oom_kills_at_start
							 : 0;
}

/* An OOM kill is reported as it happens, even of a process that is not the
 * main one (v1 has no way to tell: its kills are counted when the run
 * ends). */
void task_report_oom_kills_while_running(struct task *task)
{
	/* A kill now may be an exec command's: its end tells (task_exec_ended). */
	if (task->execs_running)
		return;
	if ((task->pid > 0 || task->awaiting_empty_cgroup) && task_cgroup_exists(&task->cgroup))
		report_oom_kills(task);
}

/* The end of a run, once nothing of it is left: OOM kills are counted,
 * then the runner hears of the exit. */
void task_finish_run(struct task *task, struct task_exit exit)
{
	exit.oom_kills = (unsigned)report_oom_kills(task);
	task->cgroup.oom_kills_at_start = task->oom_kills_reported; /* the next run's */
	task_output_drain(&task->output);
	if (task->error_output)
		task_output_drain(task->error_output);
	task_usage_forget(&task->usage); /* its processes are gone */
	/* Before the runner hears of it: it may start the task again now. */
	task_network_run_ended(task);
	task_give_back_shared_mounts(task);
	runner_exited(&task->runner, &exit, loop_now_ms());
}

static bool cgroup_events_populated(int fd)
{
	uint64_t populated = 0;
	return cgroup_fs_pread_key(fd, "populated", &populated) == 0 && populated;
}

static void on_cgroup_events(struct loop_watch *watch, uint32_t events)
{
	struct task *task = watch->data;
	if (cgroup_events_populated(watch->fd) || !task->awaiting_empty_cgroup)
		return;
	task->awaiting_empty_cgroup = false;
	loop_timer_cancel(task->services->loop, &task->cgroup_poll);
	unwatch_file(task, watch); /* until the next run leaves something behind */
	task_finish_run(task, task->pending_exit);
}

static void on_cgroup_poll(struct loop_timer *timer)
{
	struct task *task = timer->data;
	if (!task->awaiting_empty_cgroup)
		return;
	if (task_cgroup_populated(&task->cgroup)) {
		loop_timer_arm(task->services->loop, &task->cgroup_poll,
			       loop_now_ms() + CGROUP_POLL_MS);
		return;
	}
	task->awaiting_empty_cgroup = false;
	task_finish_run(task, task->pending_exit);
}

/* kill.mode control-group, and the kill signal is out to every process:
 * those still alive when the main process ends are on their way down too,
 * and get the rest of the kill timeout (its timer SIGKILLs what is left),
 * as systemd waits for a whole unit. */
static bool leftovers_are_stopping(const struct task *task)
{
	return task->config->kill_mode == KILL_MODE_CONTROL_GROUP &&
	       task->runner.stop_intent != RUNNER_STOP_NONE && !task->runner.prekill_pending;
}

/* The main process is gone but others of the run live on in its cgroup:
 * they are killed (or, stopping under kill.mode control-group, waited
 * for), and the run ends when the cgroup is empty. */
bool task_cgroup_run_end(struct task *task, const struct task_exit *exit)
{
	if (!task_cgroup_exists(&task->cgroup))
		return false;
	if (!task_cgroup_populated(&task->cgroup))
		return false;
	if (!leftovers_are_stopping(task)) {
		task_cgroup_kill(&task->cgroup);
		char message[TASK_EVENT_MESSAGE_MAX];
		snprintf(message, sizeof(message), "processes left behind in cgroup %s were killed",
			 task->cgroup.path);
		task_note_event(task, TASK_EVENT_LEFTOVERS_KILLED, message);
	}
	task->pending_exit = *exit;
	task->awaiting_empty_cgroup = true;
	/* The end is heard from cgroup.events; opened now, it reports every
	 * change from here on. When it cannot be (corral short of fds), the
	 * cgroup is looked at. */
	if (task->cgroup_events_watch.fd < 0)
		watch_file(task, &task->cgroup_events_watch,
			   task_cgroup_open_events(&task->cgroup));
	if (task->cgroup_events_watch.fd < 0) {
		log_message("%s: cannot watch cgroup.events (%s): looking at it every %d ms "
			    "until its processes are gone",
			    task->config->full_name, strerror(errno), CGROUP_POLL_MS);
		loop_timer_arm(task->services->loop, &task->cgroup_poll,
			       loop_now_ms() + CGROUP_POLL_MS);
	}
	/* It may have emptied before the watch was rearmed. */
	if (!task_cgroup_populated(&task->cgroup))
		on_cgroup_events(&task->cgroup_events_watch, EPOLLPRI);
	return true;
}

uint64_t task_exec_started(struct task *task)
{
	task->execs_running++;
	return task_cgroup_own_oom_kills(&task->cgroup);
}

unsigned task_exec_ended(struct task *task, uint64_t kills_at_start, bool sigkilled)
{
	uint64_t kills = 0;
	/* Only a command the kernel SIGKILLed can have been OOM killed; the
	 * kills since its start are its own (one at a time, a kill of the
	 * task's in the same moment would be taken for the exec's). */
	if (sigkilled && task_cgroup_exists(&task->cgroup)) {
		uint64_t now = task_cgroup_own_oom_kills(&task->cgroup);
		kills = now > kills_at_start ? now - kills_at_start : 0;
		task->cgroup.oom_kills_of_execs += kills;
	}
	if (task->execs_running)
		task->execs_running--;
	/* What was held back while it ran, and is the task's. */
	task_report_oom_kills_while_running(task);
	return (unsigned)kills;
}
