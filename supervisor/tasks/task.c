#include "supervisor/tasks/task.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/log.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/log_readiness.h"
#include "supervisor/tasks/shortage_report.h"
#include "supervisor/tasks/task_keeper.h"
#include "supervisor/tasks/task_outside_wait.h"
#include "supervisor/tasks/task_schedule.h"

#define TASK_FROM_RUNNER(runner_pointer)                                                           \
	((struct task *)((char *)(runner_pointer)-offsetof(struct task, runner)))

static int pidfd_send_signal_compat(int pidfd, int signal_number)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, signal_number, NULL, 0);
}

bool task_is_dormant(const struct task *task)
{
	return task->runner.dormant && task->runner.state == TASK_DEAD;
}

bool task_has_process(const struct task *task)
{
	return task->pid > 0 || task->awaiting_empty_cgroup || task_hooks_busy(task->hooks);
}

int task_send_signal(struct task *task, int signal_number)
{
	if (task->pidfd_watch.fd < 0)
		return -ESRCH;
	if (pidfd_send_signal_compat(task->pidfd_watch.fd, signal_number) < 0)
		return -errno;
	return 0;
}

/* ---- the request a start hands to isolation/ ---- */

/* The sync window of a task in a user namespace: the maps and rlimits
 * (isolation/), then a bridge task's network. */
static int task_between(void *context, pid_t pid, int pidfd, char *error, size_t error_size)
{
	struct task *task = context;
	int failure =
	    task_isolation_between(task->isolation)(task->isolation, pid, pidfd, error, error_size);

	if (failure < 0 || !task_network_needs_between(task))
		return failure;
	return task_network_between(task, pid, error, error_size);
}

static void fill_spawn_request(struct task *task, struct spawn_request *request)
{
	*request = (struct spawn_request){
	    .executable = task->plan.executable,
	    .argv = task->config->argv,
	    .envp = NULL, /* effect_spawn: made for the spawn alone */
	    .cwd = task->config->cwd,
	    .change_ids = task->plan.change_ids,
	    .keep_groups = task->plan.keep_groups,
	    .oom_score_adj = task->plan.oom_score_adj,
	    .uid = task->plan.uid,
	    .gid = task->plan.gid,
	    .groups = task->plan.groups,
	    .group_count = task->plan.group_count,
	    .output_fd = -1, /* open_spawn_fds */
	    .separate_stderr = task->error_output != NULL,
	    .stderr_fd = -1,
	    .inherit_stdio = task->services->inherit_stdio,
	    .take_terminal = task->services->take_terminal,
	    .into_cgroup = task_cgroup_exists(&task->cgroup),
	    .cgroup_fd = -1, /* open_spawn_fds */
	    .cgroup_v1_join = task->cgroup.v1_count ? task->cgroup.v1_join_paths : NULL,
	    .notify_target = -1,
	    .isolation = task->isolation ? &task->isolation->spawn : NULL,
	    .between =
		task->isolation && task_isolation_between(task->isolation) ? task_between : NULL,
	    .between_context = task,
	    .netns_fd = task->network.netns_fd,
	};
}

/* The fds a spawn passes on and corral does not keep between runs: the
 * output pipes' write ends and the cgroup's directory. 0 or -errno. */
static int open_spawn_fds(struct task *task, struct spawn_request *request)
{
	request->output_fd = task_output_open_writer(&task->output);
	if (request->output_fd < 0)
		return request->output_fd;
	if (request->separate_stderr) {
		request->stderr_fd = task_output_open_writer(task->error_output);
		if (request->stderr_fd < 0)
			return request->stderr_fd;
	}
	if (request->into_cgroup) {
		request->cgroup_fd = task_cgroup_open_dir(&task->cgroup);
		if (request->cgroup_fd < 0)
			return request->cgroup_fd;
	}
	return 0;
}

/* The child has its copies (or the spawn failed). */
static void close_spawn_fds(struct spawn_request *request)
{
	int *fds[] = {&request->output_fd, &request->stderr_fd, &request->cgroup_fd};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

/* ---- effects: what the runner asks for ---- */

static void close_process_fds(struct task *task)
{
	struct loop *loop = task->services->loop;
	if (task->pidfd_watch.fd >= 0) {
		loop_watch_remove(loop, &task->pidfd_watch);
		close(task->pidfd_watch.fd);
		task->pidfd_watch.fd = -1;
	}
	if (task->error_pipe_watch.fd >= 0) {
		loop_watch_remove(loop, &task->error_pipe_watch);
		close(task->error_pipe_watch.fd);
		task->error_pipe_watch.fd = -1;
	}
}

/* propagation: bidirectional: each source is a shared mount on the host
 * while a run binds it (isolation/host_shared_mounts.h). */
static int take_shared_mounts(struct task *task, char *error, size_t error_size)
{
	const struct isolation_config *isolation = &task->config->isolation;
	for (size_t i = 0; i < isolation->mount_count; i++) {
		if (!isolation->mounts[i].bidirectional)
			continue;
		int failure = host_shared_mounts_take(
		    task->services->shared_mounts, isolation->mounts[i].source, error, error_size);
		if (failure < 0) {
			for (size_t j = 0; j < i; j++)
				if (isolation->mounts[j].bidirectional)
					host_shared_mounts_give_back(task->services->shared_mounts,
								     isolation->mounts[j].source,
								     log_message);
			return failure;
		}
		task->shared_mounts_taken = true;
	}
	return 0;
}

void task_give_back_shared_mounts(struct task *task)
{
	if (!task->shared_mounts_taken)
		return;
	task->shared_mounts_taken = false;
	const struct isolation_config *isolation = &task->config->isolation;
	for (size_t i = 0; i < isolation->mount_count; i++)
		if (isolation->mounts[i].bidirectional)
			host_shared_mounts_give_back(task->services->shared_mounts,
						     isolation->mounts[i].source, log_message);
}

/* What a start holds before its process exists: given back, newest first,
 * when effect_spawn returns without a process (cleanup attribute), kept
 * when it has one. */
struct start_holdings {
	struct task *task;
	bool shared_mounts;
	bool network;
	bool reaper_status;
};

static void give_back_start_holdings(const struct start_holdings *held)
{
	if (held->reaper_status)
		task_reaper_status_close(held->task);
	if (held->network)
		task_network_run_ended(held->task);
	if (held->shared_mounts)
		task_give_back_shared_mounts(held->task);
}

#define _cleanup_start_holdings_ __attribute__((cleanup(give_back_start_holdings)))

static int effect_spawn(struct runner *runner, char *error, size_t error_size)
{
	struct task *task = TASK_FROM_RUNNER(runner);
	struct spawn_request request;
	struct spawn_result result;

	int prepared = task_cgroup_run_prepare(task, error, error_size);
	if (prepared < 0)
		return prepared; /* EMFILE, ENOMEM...: tried again (runner.c) */
	task_plan_refresh_executable(&task->plan, task->config);
	if (task->isolation)
		task_isolation_refresh(task->isolation, &task->plan);
	if (task->isolation &&
	    task_isolation_refresh_mounts(task->isolation, task->config, &task->additions, error,
					  error_size) < 0)
		return -EINVAL;
	if (take_shared_mounts(task, error, error_size) < 0)
		return -EINVAL;
	_cleanup_start_holdings_ struct start_holdings held = {.task = task, .shared_mounts = true};
	if (task_network_prepare_start(task, error, error_size) < 0)
		return -EINVAL;
	held.network = true;
	/* Settled at each start: a reload may have changed the task's rights. */
	if (task->isolation)
		task->isolation->spawn.hidden_control_socket =
		    task->config->control_rights ? NULL : task->services->control_socket_path;
	fill_spawn_request(task, &request);
	int failure = task_readiness_prepare_spawn(task, &request);
	if (failure < 0) {
		snprintf(error, error_size, "readiness: pipe: %s", strerror(-failure));
		return failure;
	}
	failure = task_reaper_status_prepare_spawn(task, &request);
	if (failure < 0) {
		snprintf(error, error_size, "the reaper's status socket: %s", strerror(-failure));
		return failure;
	}
	held.reaper_status = true;
	failure = open_spawn_fds(task, &request);
	if (failure == 0) {
		/* The child has exec'd (or failed) when spawn_process returns,
		 * so the array is not needed past it. */
		_cleanup_free_ char **envp = task_plan_environment(&task->plan);
		request.envp = envp;
		failure = spawn_process(task->services->spawn_slots, &request, &result);
	} else
		snprintf(result.message, sizeof(result.message), "output pipe or cgroup: %s",
			 strerror(-failure));
	close_spawn_fds(&request);
	task_readiness_spawned(task);
	task_reaper_status_spawned(task);
	task_network_spawned(task);
	if (failure < 0) {
		snprintf(error, error_size, "%s", result.message);
		return failure;
	}
	held = (struct start_holdings){0}; /* the run has them now */
	task->pid = result.pid;
	pid_index_put(task->services->task_pids, task->pid, task);
	task->has_setup_failure = false;
	task->pidfd_watch.fd = result.pidfd;
	task->error_pipe_watch.fd = result.error_fd;
	loop_watch_add(task->services->loop, &task->pidfd_watch, EPOLLIN);
	loop_watch_add(task->services->loop, &task->error_pipe_watch, EPOLLIN);
	return 0;
}

static void effect_signal(struct runner *runner, int signal_number)
{
	struct task *task = TASK_FROM_RUNNER(runner);
	if (task->config->kill_mode == KILL_MODE_CONTROL_GROUP && task->pid > 0) {
		/* A reaper (the task's own pid namespace) is left out: it
		 * would pass the signal on again to its child. */
		bool has_reaper = task->isolation && task->isolation->reaper_argv;
		if (task_cgroup_exists(&task->cgroup) &&
		    task_cgroup_signal(&task->cgroup, signal_number, has_reaper ? task->pid : 0) ==
			0)
			return;
		/* No cgroup: the task's process group (it leads its own). */
		if (!has_reaper && kill(-task->pid, signal_number) == 0)
			return;
	}
	if (task->pidfd_watch.fd >= 0)
		pidfd_send_signal_compat(task->pidfd_watch.fd, signal_number);
}

static void effect_kill_all(struct runner *runner)
{
	struct task *task = TASK_FROM_RUNNER(runner);
	/* Everything in the cgroup, daemonised grandchildren included. */
	if (task_cgroup_exists(&task->cgroup))
		task_cgroup_kill(&task->cgroup);
	if (task->pid <= 0)
		return;
	/* The task leads its own process group (setsid in the child); a
	 * process group id is not reused while any member lives. */
	kill(-task->pid, SIGKILL);
	if (task->pidfd_watch.fd >= 0)
		pidfd_send_signal_compat(task->pidfd_watch.fd, SIGKILL);
}

static void effect_arm_timer(struct runner *runner, enum runner_timer timer, uint64_t deadline_ms)
{
	struct task *task = TASK_FROM_RUNNER(runner);
	loop_timer_arm(task->services->loop, &task->timers[timer], deadline_ms);
	task_keeper_changed(task);
}

static void effect_cancel_timer(struct runner *runner, enum runner_timer timer)
{
	struct task *task = TASK_FROM_RUNNER(runner);
	loop_timer_cancel(task->services->loop, &task->timers[timer]);
	task_keeper_changed(task);
}

void task_note_event(struct task *task, enum task_event_type type, const char *message)
{
	event_log_task(task->services->events, task->config->full_name, task_event_type_name(type),
		       message, 0);
}

bool task_reap_helper(struct task *task, pid_t pid)
{
	return task_readiness_reap(task, pid) || task_hooks_reap(task->hooks, pid);
}

void task_announce_started(struct task *task)
{
	if (!task->started_unannounced)
		return;
	task->started_unannounced = false;
	event_log_task(task->services->events, task->config->full_name,
		       task_event_type_name(TASK_EVENT_STARTED), "started", task_command_pid(task));
}

static void effect_event(struct runner *runner, enum task_event_type type, const char *message)
{
	struct task *task = TASK_FROM_RUNNER(runner);
	/* The reaper's exec is what succeeded: its command's pid comes on
	 * the status socket, as a rule a moment later (task_reaper_status.c
	 * says it when it comes, or the run's end). */
	if (type == TASK_EVENT_STARTED && task->isolation && task->isolation->reaper_argv &&
	    task->command_pid <= 0) {
		task->started_unannounced = true;
		return;
	}
	task_keeper_changed(task);
	pid_t pid = type == TASK_EVENT_STARTED ? task_command_pid(task) : 0;
	event_log_task(task->services->events, task->config->full_name, task_event_type_name(type),
		       message, pid);
}

/* Readiness listens during a run, and the health probe runs once the run
 * is ready. */
static void follow_run(struct task *task)
{
	const struct runner *runner = &task->runner;
	bool running = runner->state == TASK_RUNNING;
	if (running && !task->run_seen) {
		task->run_seen = true;
		task_readiness_run_started(task);
	}
	if (runner_is_ready(runner) && !task->ready_seen) {
		task->ready_seen = true;
		task_readiness_now_ready(task);
	}
	if (!running && task->run_seen) {
		task->run_seen = task->ready_seen = false;
		task_readiness_run_ended(task);
	}
}

static void effect_changed(struct runner *runner)
{
	struct task *task = TASK_FROM_RUNNER(runner);
	follow_run(task);
	/* Dead for good (until a ForceRestart): its cgroup goes. */
	if (runner->state == TASK_DEAD && !task->awaiting_empty_cgroup)
		task_cgroup_run_release(task);
	group_mark_dirty(task->group);
	task_dependencies_changed(task);
	task_keeper_changed(task);
}

static void effect_resource_wait(struct runner *runner, const char *reason, bool first,
				 uint64_t now_ms)
{
	struct task *task = TASK_FROM_RUNNER(runner);
	if (task->services->shortage)
		shortage_report_put_off(task->services->shortage, reason, first, now_ms);
}

static void effect_resource_wait_over(struct runner *runner, bool started)
{
	struct task *task = TASK_FROM_RUNNER(runner);
	if (task->services->shortage)
		shortage_report_wait_over(task->services->shortage, started);
}

/* Its record's exits (below, with its counts). */
static struct exit_tally *effect_exit_tally(struct runner *runner);

static const struct runner_effects task_effects = {
    .spawn = effect_spawn,
    .signal = effect_signal,
    .kill_all = effect_kill_all,
    .arm_timer = effect_arm_timer,
    .cancel_timer = effect_cancel_timer,
    .event = effect_event,
    .changed = effect_changed,
    .run_hooks = task_effect_run_hooks,
    .cancel_hooks = task_effect_cancel_hooks,
    .resource_wait = effect_resource_wait,
    .resource_wait_over = effect_resource_wait_over,
    .exit_tally = effect_exit_tally,
};

/* ---- process events ---- */

static void on_error_pipe(struct loop_watch *watch, uint32_t events)
{
	struct task *task = watch->data;
	struct spawn_failure failure;
	int result = spawn_read_failure(watch->fd, &failure);
	if (result == -EAGAIN)
		return;
	loop_watch_remove(task->services->loop, watch);
	close(watch->fd);
	watch->fd = -1;
	if (result == 1) {
		/* The child exits right after; its exit reports the failure. */
		task->has_setup_failure = true;
		task->setup_failure = failure;
		return;
	}
	runner_exec_succeeded(&task->runner, loop_now_ms());
}

static struct task_exit exit_from_siginfo(const siginfo_t *info)
{
	if (info->si_code == CLD_EXITED)
		return (struct task_exit){.kind = TASK_EXIT_CODE, .code = info->si_status};
	return (struct task_exit){.kind = TASK_EXIT_SIGNAL, .signal = info->si_status};
}

static void kill_leftovers(struct task *task)
{
	if (kill(-task->pid, SIGKILL) == 0) {
		char message[TASK_EVENT_MESSAGE_MAX];
		snprintf(message, sizeof(message),
			 "processes left behind in process group %d were killed", (int)task->pid);
		effect_event(&task->runner, TASK_EVENT_LEFTOVERS_KILLED, message);
	}
}

/* How the run of a reaped process ended, and what follows. */
static void run_ended(struct task *task, const siginfo_t *info);

void task_reap(struct task *task)
{
	if (task->pidfd_watch.fd < 0)
		return;
	siginfo_t info;
	memset(&info, 0, sizeof(info));
	/* With a keeper, the process stays a zombie (WNOWAIT) until the
	 * keeper holds the task's record after its exit: if corral dies in
	 * between, the keeper reaps it and tells the next loop, so no exit
	 * is lost or counted twice. The record and the reap wait for the end
	 * of the loop's turn, after a restart this exit led to. */
	bool kept = task->services->keeper != NULL;
	int flags = WEXITED | WNOHANG | (kept ? WNOWAIT : 0);
	if (waitid(P_PIDFD, (id_t)task->pidfd_watch.fd, &info, flags) < 0) {
		/* Taken back after a restore, the process is the keeper's
		 * child: the keeper reaps it and says how it ended. */
		if (errno != ECHILD)
			return;
		if (!task->keeper_reaped) {
			/* Until the keeper says (REAPED calls this again): a
			 * level-triggered pidfd would turn the loop for nothing. */
			loop_watch_remove(task->services->loop, &task->pidfd_watch);
			return;
		}
		task->keeper_reaped = false;
		int status = task->keeper_wait_status;
		info.si_pid = task->pid;
		info.si_code = WIFEXITED(status) ? CLD_EXITED : CLD_KILLED;
		info.si_status = WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status);
		run_ended(task, &info);
		return;
	}
	if (info.si_pid == 0)
		return; /* not exited yet */
	pid_t pid = info.si_pid;
	run_ended(task, &info);
	if (kept)
		task_keeper_reap_after_record(task, pid);
}

static void run_ended(struct task *task, const siginfo_t *reaped)
{
	siginfo_t info = *reaped;
	/* The error pipe says whether exec happened, whatever order the
	 * two fds were reported in. */
	if (task->error_pipe_watch.fd >= 0)
		on_error_pipe(&task->error_pipe_watch, EPOLLIN);
	close_process_fds(task);
	struct task_exit told;
	bool reaper_told = task_reaper_status_run_ended(task, &told);
	uint64_t now = loop_now_ms();

	if (task->has_setup_failure) {
		char message[TASK_EVENT_MESSAGE_MAX];
		struct spawn_request request;
		fill_spawn_request(task, &request);
		spawn_failure_describe(&request, &task->setup_failure, message, sizeof(message));
		task->has_setup_failure = false;
		pid_index_remove(task->services->task_pids, task->pid);
		task->pid = 0;
		task_network_run_ended(task);
		task_give_back_shared_mounts(task);
		task_output_drain(&task->output);
		if (task->error_output)
			task_output_drain(task->error_output);
		/* As shells do: 127 for a program not found, 126 otherwise. */
		bool not_found = task->setup_failure.stage == SPAWN_STAGE_EXEC &&
				 task->setup_failure.error == ENOENT;
		int code = not_found ? 127 : 126;
		runner_start_failed(&task->runner, message, code, now);
		return;
	}

	/* With a reaper, how the command itself ended. */
	struct task_exit exit = reaper_told ? told : exit_from_siginfo(&info);
	if (!task_cgroup_exists(&task->cgroup))
		kill_leftovers(task); /* no cgroup: its process group at least */
	pid_index_remove(task->services->task_pids, task->pid);
	task->pid = 0;
	if (task_cgroup_run_end(task, &exit))
		return;
	task_finish_run(task, exit);
}

static void on_pidfd(struct loop_watch *watch, uint32_t events)
{
	task_reap(watch->data);
}

static void on_timer(struct loop_timer *timer)
{
	struct task *task = timer->data;
	enum runner_timer which = (enum runner_timer)(timer - task->timers);
	if (which == RUNNER_TIMER_READINESS)
		task_readiness_start_timed_out(task);
	runner_timer_fired(&task->runner, which, loop_now_ms());
}

/* A partial line or held bytes changed: the keeper's record too. */
static void task_output_kept(const struct output_sinks *sinks)
{
	task_keeper_changed((struct task *)((char *)sinks - offsetof(struct task, sinks)));
}

void task_sinks_changed(struct task *task)
{
	struct output_sink_list *list = &task->sinks;
	struct services *services = task->services;
	output_sink_list_clear(list);
	output_sink_list_add(list, &output_stdout_sink_ops, services->sink);
	output_sink_list_add(list, &line_ring_sink_ops, &task->logs);
	if (task->log_file)
		output_sink_list_add(list, &log_file_sink_ops, task->log_file);
	if (services->log_followers && task->log_followers)
		output_sink_list_add(list, services->log_followers, task);
	if (task->readiness.probes && task->readiness.probes->log)
		output_sink_list_add(list, &log_readiness_sink_ops, task);
}

/* Lines read and not yet matched by a readiness.log pattern: the pipes
 * wait for them (log_readiness.h). */
static bool task_lines_behind(const struct output_sinks *sinks)
{
	const struct task *task =
	    (const struct task *)((const char *)sinks - offsetof(struct task, sinks));
	return task->readiness.probes && task->readiness.probes->log &&
	       log_readiness_behind(task->readiness.probes->log);
}

int task_open_stderr_writer(void *context)
{
	struct task *task = context;
	return task_output_open_writer(task->error_output ? task->error_output : &task->output);
}

void task_apply_output_settings(struct task *task)
{
	struct task_output *outputs[] = {&task->output, task->error_output};
	for (size_t i = 0; i < 2 && outputs[i]; i++) {
		outputs[i]->drop_when_full = task->config->log_mode == LOG_MODE_NON_BLOCKING;
		task_output_set_rate_limit(outputs[i], task->config->log_rate_limit);
	}
}

void task_open_log_file(struct task *task)
{
	const struct task_config *config = task->config;
	if (!config->log_dir)
		return; /* most tasks: no file, and no room kept for one */
	task->log_file = xmalloc(sizeof(*task->log_file));
	log_file_open(task->log_file, task->services->loop, config->log_dir, config->full_name,
		      config->log_max_size, config->log_keep, config->log_shared_dir);
	task_sinks_changed(task);
}

void task_close_log_file(struct task *task)
{
	if (!task->log_file)
		return;
	/* A reload reopens it: what this one lost stays counted. */
	if (task->log_file->lost_lines)
		task_counts_of(task)->earlier_lost_log_lines += task->log_file->lost_lines;
	log_file_close(task->log_file);
	free(task->log_file);
	task->log_file = NULL;
	task_sinks_changed(task);
}

static struct task_record *record_of(struct task *task)
{
	if (!task->record)
		task->record = task_records_take(task->services ? task->services->records : NULL,
						 task->config->full_name);
	return task->record;
}

struct task_counts *task_counts_of(struct task *task)
{
	return &record_of(task)->counts;
}

const struct task_counts *task_counts_seen(const struct task *task)
{
	return task->record ? &task->record->counts : NULL;
}

static struct exit_tally *effect_exit_tally(struct runner *runner)
{
	return &record_of(runner->context)->exits;
}

/* Of its current pipes. */
static uint64_t dropped_by_outputs(const struct task *task)
{
	return task->output.dropped_lines +
	       (task->error_output ? task->error_output->dropped_lines : 0);
}

uint64_t task_dropped_lines(const struct task *task)
{
	return dropped_by_outputs(task) +
	       (task->record ? task->record->counts.earlier_dropped_lines : 0);
}

struct task_record *task_detach_record(struct task *task)
{
	if (dropped_by_outputs(task))
		task_counts_of(task)->earlier_dropped_lines += dropped_by_outputs(task);
	struct task_record *record = task->record;
	task->record = NULL;
	return record;
}

uint64_t task_lost_log_lines(const struct task *task)
{
	return (task->log_file ? task->log_file->lost_lines : 0) +
	       (task->record ? task->record->counts.earlier_lost_log_lines : 0);
}

/* One pipe for both streams, or (log.streams: separate) one each. */
static int open_outputs(struct task *task, char *error, size_t error_size)
{
	const struct task_config *config = task->config;
	struct services *services = task->services;
	bool separate = config->log_separate_streams;
	output_sink_list_init(&task->sinks);
	task->sinks.sinks.behind = task_lines_behind;
	task->sinks.sinks.kept = task_output_kept;
	task_sinks_changed(task);
	int result = task_output_open(
	    &task->output, services->loop, services->sink, &task->sinks.sinks, config->full_name,
	    separate ? OUTPUT_STREAM_STDOUT : OUTPUT_STREAM_MERGED, services->taking_over);
	if (result == 0 && separate) {
		task->error_output = xmalloc(sizeof(*task->error_output));
		result = task_output_open(task->error_output, services->loop, services->sink,
					  &task->sinks.sinks, config->full_name,
					  OUTPUT_STREAM_STDERR, services->taking_over);
	}
	if (result < 0) {
		snprintf(error, error_size, "output pipe: %s", strerror(-result));
		return result;
	}
	task_apply_output_settings(task);
	return 0;
}

int task_init(struct task *task, const struct task_config *config, struct group *group,
	      const char *group_name, struct services *services, char *error, size_t error_size)
{
	extern char **environ;
	memset(task, 0, sizeof(*task));
	task->config = config;
	task->group = group;
	task->services = services;
	task->pidfd_watch = (struct loop_watch){.fd = -1, .callback = on_pidfd, .data = task};
	task->error_pipe_watch =
	    (struct loop_watch){.fd = -1, .callback = on_error_pipe, .data = task};
	task_cgroup_run_init(task);
	task_reaper_status_init(task);
	task_network_init(task, (size_t)(config - group->config->tasks));
	task->output.watch.fd = -1;
	task->output.write_fd = -1;
	for (int i = 0; i < RUNNER_TIMER_COUNT; i++)
		loop_timer_init(&task->timers[i], on_timer, task);
	runner_init(&task->runner, config, &task_effects, task);
	loop_timer_init(&task->schedule_timer, NULL, task); /* armed at the end */
	task_dependencies_init(task);

	int failure = task_readiness_open(task, error, error_size);
	if (failure < 0)
		return failure;
	struct task_notify *notify = task->readiness.notify;
	char *corral_env[] = {notify ? notify->env : NULL, notify ? notify->watchdog_env : NULL,
			      NULL};
	if (task_plan_build(&task->plan, config, group_name, environ, corral_env, error,
			    error_size) < 0)
		return -EINVAL;
	task_readiness_init_probes(task);
	if (config->isolation.enabled) {
		task->isolation = xmalloc(sizeof(*task->isolation));
		if (task_isolation_build(task->isolation, config, &task->plan, error, error_size) <
		    0)
			return -EINVAL;
	}
	line_ring_init(&task->logs, config->log_history);
	task_open_log_file(task);
	failure = open_outputs(task, error, error_size);
	if (failure < 0)
		return failure;
	task_keeper_open(task);
	task_hooks_open(task, group_name);
	task_schedule_open(task);
	return 0;
}

void task_free(struct task *task)
{
	struct loop *loop = task->services->loop;
	outside_wait_end(task);
	if (task->pid)
		pid_index_remove(task->services->task_pids, task->pid);
	for (int i = 0; i < RUNNER_TIMER_COUNT; i++)
		loop_timer_cancel(loop, &task->timers[i]);
	task_dependencies_wait_over(task);
	task_schedule_close(task);
	close_process_fds(task);
	task_reaper_status_close(task);
	task_hooks_close(task);
	task_cgroup_run_release(task);
	task_network_run_ended(task);
	task_give_back_shared_mounts(task);
	task_readiness_close(task);
	if (task->isolation) {
		task_isolation_free(task->isolation);
		free(task->isolation);
		task->isolation = NULL;
	}
	task_output_close(&task->output);
	if (task->error_output) {
		task_output_close(task->error_output);
		free(task->error_output);
		task->error_output = NULL;
	}
	task_close_log_file(task);
	line_ring_free(&task->logs);
	task_plan_free(&task->plan);
	runner_free(&task->runner);
	task_keeper_forget(task);
	task_records_give_back(task->services->records, task->record);
	task->record = NULL;
}
