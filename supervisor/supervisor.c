#include "supervisor/supervisor.h"
#include "isolation/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/cpu_precedence.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/oom_protection.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "config/load/profiles.h"
#include "hooks/task_dirs.h"
#include "supervisor/control/control_server.h"
#include "supervisor/kept_state.h"
#include "supervisor/pid1/fd_budget.h"
#include "supervisor/pid1/fd_limit.h"
#include "supervisor/pid1/machine_init.h"
#include "supervisor/pid1/signal_exposure.h"
#include "supervisor/pid1/signal_handling.h"
#include "supervisor/pid1/zombie_reaper.h"
#include "supervisor/probes/name_resolver.h"
#include "supervisor/reload.h"
#include "supervisor/restore.h"
#include "supervisor/supervisor_internal.h"
#include "supervisor/tasks/group.h"
#include "supervisor/upgrade.h"
#include "supervisor/upgrade/upgrade_check.h"
#include "supervisor/upgrade_state.h"

static void note_task_failed_for_good(struct services *services, struct task *task)
{
	struct supervisor *supervisor = SUPERVISOR_FROM_SERVICES(services);
	if (task->group->config->on_failure.action == GROUP_ON_FAILURE_EXIT &&
	    !supervisor->exit_for_failure[0])
		snprintf(supervisor->exit_for_failure, sizeof(supervisor->exit_for_failure),
			 "on_failure: exit of group %s (%s failed for good)",
			 task->group->config->name, task->config->full_name);
	/* A task that never started because what it waited for failed gives
	 * corral's code only when nothing else fails: the task it waited for
	 * is the cause, whichever group notices first. */
	if (supervisor->have_failure &&
	    !(supervisor->failure_is_secondary && !task->failed_by_dependency))
		return;
	supervisor->have_failure = true;
	supervisor->failure_is_secondary = task->failed_by_dependency;
	supervisor->exit_code = runner_failure_exit_code(&task->runner);
	termination_note_failure(supervisor, task);
	log_info("%s: first task to fail for good; corral will exit with code %d",
		 task->config->full_name, supervisor->exit_code);
}

/* ---- shutdown ---- */

/* `why`: for the tasks' events; `told`: for the termination message. */
static void kill_everything(struct supervisor *supervisor, const char *why, const char *told)
{
	termination_note_kill(supervisor, told);
	supervisor->killing = true;
	for (size_t i = 0; i < supervisor->group_count; i++)
		group_kill(supervisor->groups[i], why);
}

/* --shutdown-timeout or CORRAL_SHUTDOWN_TIMEOUT over the config's. */
static uint64_t shutdown_timeout_ms(const struct supervisor *supervisor)
{
	return supervisor->shutdown_timeout_source ? supervisor->shutdown_timeout_ms
						   : supervisor->config->shutdown_timeout_ms;
}

/* "30s", or "25s, from --shutdown-timeout". */
static void describe_shutdown_timeout(const struct supervisor *supervisor, char *buffer,
				      size_t size)
{
	char timeout[32];
	format_duration_ms(shutdown_timeout_ms(supervisor), timeout, sizeof(timeout));
	if (supervisor->shutdown_timeout_source)
		snprintf(buffer, size, "%s, from %s", timeout, supervisor->shutdown_timeout_source);
	else
		snprintf(buffer, size, "%s", timeout);
}

static void on_shutdown_timeout(struct loop_timer *timer)
{
	struct supervisor *supervisor = timer->data;
	char timeout[96], told[128];
	describe_shutdown_timeout(supervisor, timeout, sizeof(timeout));
	log_message("shutdown_timeout (%s) passed: killing what is left", timeout);
	snprintf(told, sizeof(told), "shutdown_timeout (%s) passed", timeout);
	kill_everything(supervisor, "shutdown_timeout passed", told);
}

/* `reason`: what corral says ("SIGTERM"); `by`: the termination message's
 * "stopped by ...". */
void supervisor_begin_shutdown(struct supervisor *supervisor, const char *reason, const char *by)
{
	if (supervisor->shutting_down) {
		if (!supervisor->killing) {
			char told[96];
			log_message("%s again: killing every task now", reason);
			snprintf(told, sizeof(told), "%s again", by);
			kill_everything(supervisor, "second shutdown request", told);
		}
		return;
	}
	supervisor->shutting_down = true;
	termination_note_shutdown(supervisor, by);
	parent_notify_stopping(&supervisor->parent, shutdown_timeout_ms(supervisor));
	char timeout[96];
	describe_shutdown_timeout(supervisor, timeout, sizeof(timeout));
	/* A group's on_failure: exit asked nothing that could be sent again. */
	bool asked = reason != supervisor->exit_for_failure;
	log_message("%s: shutting down gracefully (at most %s; %s)", reason, timeout,
		    asked ? "send it again to kill now" : "SIGTERM or `corral shutdown` kills now");
	uint64_t now = loop_now_ms();
	loop_timer_arm(supervisor->loop, &supervisor->shutdown_timer,
		       now + shutdown_timeout_ms(supervisor));
	/* Every group is stopping before any settles: a task waits for its
	 * dependents in other groups too (`after:` across groups), which it
	 * can only tell once their group stops as well. */
	for (size_t i = 0; i < supervisor->group_count; i++)
		group_stop_begin(supervisor->groups[i], "shutdown requested");
	for (size_t i = 0; i < supervisor->group_count; i++)
		group_settle(supervisor->groups[i], now);
}

void supervisor_apply_settings(struct supervisor *supervisor)
{
	int format = supervisor->log_format_option >= 0 ? supervisor->log_format_option
							: (int)supervisor->config->log_format;
	supervisor->sink.format = (enum output_format)format;
	log_set_json(format == LOG_FORMAT_JSON);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned automatic = cpus > 2 ? (unsigned)cpus * 4 : 8;
	supervisor->hook_limiter.max =
	    supervisor->config->hook_concurrency ? supervisor->config->hook_concurrency : automatic;
}

void supervisor_groups_changed(struct supervisor *supervisor)
{
	supervisor->services.groups = supervisor->groups;
	supervisor->services.group_count = supervisor->group_count;
	supervisor->control_context.groups = supervisor->groups;
	supervisor->control_context.group_count = supervisor->group_count;
	supervisor->http_sources.groups = supervisor->groups;
	supervisor->http_sources.group_count = supervisor->group_count;
}

/* ---- signals and reaping ---- */

static bool reap_if_task(void *context, pid_t pid)
{
	struct supervisor *supervisor = context;
	/* A task's main process, as a rule: found by pid (pid_index.h).
	 * Should waitid on its pidfd have failed, the reaper takes the
	 * zombie rather than see it again forever. */
	struct task *owner = pid_index_get(&supervisor->task_pids, pid);
	if (owner && owner->pid == pid) {
		task_reap(owner);
		return owner->pid != pid;
	}
	/* Else a task's probe run or hook, which it reaps itself. */
	for (size_t i = 0; i < supervisor->group_count; i++) {
		struct group *group = supervisor->groups[i];
		for (size_t t = 0; t < group->task_count; t++) {
			struct task *task = group->tasks[t];
			if (task_reap_helper(task, pid))
				return true;
		}
	}
	return exec_sessions_reap(&supervisor->exec_sessions, pid) ||
	       upgrade_reap_check(supervisor, pid);
}

/* One-command mode: whatever corral gets but SIGCHLD is the command's. */
static void forward_to_command(struct supervisor *supervisor, const struct signalfd_siginfo *info)
{
	struct task *command = supervisor->groups[0]->tasks[0];
	one_command_forward(supervisor->one_command, command->pid, command->pidfd_watch.fd, info);
}

static void on_signal(struct loop_watch *watch, uint32_t events)
{
	struct supervisor *supervisor = watch->data;
	struct signalfd_siginfo info;
	while (read(watch->fd, &info, sizeof(info)) == (ssize_t)sizeof(info)) {
		if (supervisor->one_command && info.ssi_signo != SIGCHLD) {
			forward_to_command(supervisor, &info);
			continue;
		}
		switch (info.ssi_signo) {
		case SIGCHLD: {
			struct reaper_ops ops = {.reap_task = reap_if_task, .context = supervisor};
			reaper_sweep(&ops);
			break;
		}
		default:
			signal_requests_handle(supervisor, &info);
			break;
		}
	}
}

/* ---- set-up and the main loop ---- */

static void name_groups(struct supervisor *supervisor)
{
	const struct config *config = supervisor->config;
	supervisor->group_names = xcalloc(config->group_count, sizeof(*supervisor->group_names));
	for (size_t i = 0; i < config->group_count; i++)
		supervisor->group_names[i] = xstrdup(config->groups[i].name);
	supervisor->group_name_count = config->group_count;
	/* The config's path says whose leftovers are this corral's to clean;
	 * a one-command corral cleans none. */
	supervisor->cgroup_owner = supervisor->one_command ? NULL : realpath(config->path, NULL);
	if (!supervisor->one_command && !supervisor->cgroup_owner)
		supervisor->cgroup_owner = xstrdup(config->path);
}

static void open_cgroup_tree(struct supervisor *supervisor)
{
	const struct config *config = supervisor->config;
	cgroup_tree_open(&supervisor->cgroups, machine_init_active(),
			 (const char *const *)supervisor->group_names, config->group_count,
			 supervisor->cgroup_owner, log_message);
	struct cgroup_tree *tree = &supervisor->cgroups;
	if (!tree->enabled)
		log_info("tasks run without cgroups of their own: %s", tree->off_reason);
	else
		log_info("cgroup %s: one cgroup per task; controllers: %s", tree->root_path,
			 tree->controllers[0] ? tree->controllers : "none in cgroup v2");
}

static bool any_task_dirs(const struct config *config)
{
	for (size_t i = 0; i < config->group_count; i++)
		for (size_t j = 0; j < config->groups[i].task_count; j++)
			if (config->groups[i].tasks[j].task_dirs)
				return true;
	return false;
}

static int supervisor_open(struct supervisor *supervisor, const struct config *config,
			   const struct run_options *options)
{
	memset(supervisor, 0, sizeof(*supervisor));
	supervisor->keeper.channel = -1;
	char handover_error[512];
	supervisor->handover = upgrade_resuming();
	/* An upgrade's new corral runs the counts `corral scale` set, not
	 * the files': the config it runs lives as a reload's would. */
	const struct config *files_config = config;
	struct config *scaled =
	    supervisor->handover ? upgrade_state_scaled_config(supervisor->handover, config) : NULL;
	if (scaled) {
		supervisor->generations = xcalloc(1, sizeof(*supervisor->generations));
		supervisor->generations[supervisor->generation_count++] =
		    (struct config_generation){scaled, true};
		config = scaled;
	}
	supervisor->config = config;
	supervisor->started_wall_ms = wall_clock_ms();
	supervisor->one_command = options->one_command;
	supervisor->shutdown_timeout_ms = options->shutdown_timeout_ms;
	supervisor->shutdown_timeout_source = options->shutdown_timeout_source;
	supervisor->termination.log.fd = -1;
	/* Before any task's environment is made from corral's. */
	parent_notify_take_environment(&supervisor->parent, options->one_command != NULL);
	/* Taken in main (restore.h); its death stops corral. */
	restore_take_keeper(&supervisor->keeper);
	if (supervisor->keeper.channel >= 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		/* The keeper goes where corral goes in its cgroup tree, and back
		 * out of it before the tree is removed. */
		cgroup_tree_move_with(getppid());
	}
	supervisor->signal_watch.fd = -1;
	supervisor->spawn_slots = (struct spawn_slots){.stdin_fd = -1,
						       .output_fd = -1,
						       .stderr_fd = -1,
						       .error_fd = -1,
						       .notify_fd = -1,
						       .sync_fd = -1,
						       .namespace_fd = -1,
						       .reaper_fd = -1,
						       .reaper_status_fd = -1,
						       .executable_fd = -1,
						       .devnull_fd = -1};
	supervisor->cgroups = (struct cgroup_tree){.base_fd = -1, .root_fd = -1, .v1_suffix = ""};
	supervisor->network = (struct network_host)NETWORK_HOST_INIT;
	/* Before anything can fail: supervisor_close() cancels it. */
	loop_timer_init(&supervisor->shutdown_timer, on_shutdown_timeout, supervisor);
	signal_requests_prepare(supervisor);
	watch_set_init(&supervisor->watches, &supervisor->services, supervisor_reload_from_watch,
		       supervisor);
	fd_limit_raise(config);
	char fd_warning[320];
	if (fd_budget_check(config, false, fd_warning, sizeof(fd_warning)) < 0)
		log_message("warning: %s", fd_warning);
	/* As PID 1 of its own pid namespace, the kernel keeps SIGSTOP and
	 * SIGKILL from the tasks away from corral (signal_exposure.h). */
	char exposure[1024];
	if (!options->one_command && getpid() != 1 &&
	    signal_exposure_warning(config, geteuid(), exposure, sizeof(exposure)))
		log_message("warning: %s", exposure);

	/* First, so that the slots sit below every per-task fd. */
	int failure = spawn_slots_open(&supervisor->spawn_slots);
	if (failure < 0) {
		log_message("cannot open /dev/null: %s", strerror(-failure));
		return failure;
	}

	failure = loop_create(&supervisor->loop);
	if (failure < 0) {
		log_message("cannot create the event loop: %s", strerror(-failure));
		return failure;
	}
	/* Before any task can run, and plant a link where the file goes. */
	termination_open(supervisor);
	supervisor->exec_sessions.loop = supervisor->loop;
	parent_notify_start(&supervisor->parent, supervisor->loop);
	network_spares_init(&supervisor->network_spares, supervisor->loop, &supervisor->network);
	/* Taken over as it is (not truncated) by upgrade_state_read. */
	failure =
	    event_log_open(&supervisor->events, supervisor->handover ? NULL : options->events_path);
	if (failure < 0) {
		log_message("cannot open the event log %s: %s", options->events_path,
			    strerror(-failure));
		return failure;
	}
	/* The command writes to corral's stdout itself: corral's sink must
	 * not make it non-blocking under it, and has nothing to write. */
	output_stdout_open(&supervisor->sink, supervisor->loop,
			   options->one_command ? supervisor->spawn_slots.devnull_fd
						: STDOUT_FILENO,
			   OUTPUT_SINK_CAPACITY);
	supervisor->log_format_option = options->log_format;
	supervisor_apply_settings(supervisor);
	name_groups(supervisor);
	if (!supervisor->handover)
		open_cgroup_tree(supervisor);
	else if (upgrade_state_read_cgroups(supervisor, supervisor->handover, handover_error,
					    sizeof(handover_error)) < 0)
		upgrade_fall_back(handover_error);
	if (any_task_dirs(config))
		supervisor->task_dirs_root =
		    task_dirs_instance_root(config->task_dirs_root, getpid());
	supervisor->services = (struct services){
	    .loop = supervisor->loop,
	    .sink = &supervisor->sink,
	    .events = &supervisor->events,
	    .spawn_slots = &supervisor->spawn_slots,
	    .cgroups = &supervisor->cgroups,
	    .network = &supervisor->network,
	    .network_spares = &supervisor->network_spares,
	    .task_pids = &supervisor->task_pids,
	    .records = &supervisor->task_records,
	    .keeper = supervisor->keeper.channel >= 0 ? &supervisor->keeper : NULL,
	    .shared_mounts = &supervisor->shared_mounts,
	    .task_dirs_root = supervisor->task_dirs_root,
	    .hook_limiter = &supervisor->hook_limiter,
	    .exec_sessions = &supervisor->exec_sessions,
	    .task_failed_for_good = note_task_failed_for_good,
	    .roll_said = supervisor_tell_roll_followers,
	    .log_followers = &supervisor_log_followers_sink,
	    .keep_running = options->keep_running,
	    .taking_over = supervisor->handover != NULL,
	    .inherit_stdio = options->one_command != NULL,
	    .take_terminal = options->one_command && options->one_command->terminal_released,
	    .shortage = &supervisor->shortage,
	    .probes = {.loop = supervisor->loop,
		       .spawn_slots = &supervisor->spawn_slots,
		       .network = &supervisor->network},
	    /* Slots 0 and 1 are corral's own (kept_state.c). */
	    .keeper_next_slot = 1,
	};
	shortage_report_init(&supervisor->shortage, &supervisor->services);
	signal_requests_open(supervisor);
	int signal_fd = signals_open(options->one_command != NULL);
	if (signal_fd < 0) {
		log_message("cannot set up signal handling: %s", strerror(-signal_fd));
		return signal_fd;
	}
	supervisor->signal_watch =
	    (struct loop_watch){.fd = signal_fd, .callback = on_signal, .data = supervisor};
	loop_watch_add(supervisor->loop, &supervisor->signal_watch, EPOLLIN);

	supervisor->groups = xcalloc(config->group_count, sizeof(*supervisor->groups));
	supervisor->services.groups = supervisor->groups;
	for (size_t i = 0; i < config->group_count; i++) {
		char error[512];
		supervisor->group_count = supervisor->services.group_count = i + 1;
		supervisor->groups[i] = xmalloc(sizeof(*supervisor->groups[i]));
		failure = group_init(supervisor->groups[i], &config->groups[i],
				     &supervisor->services, error, sizeof(error));
		if (failure < 0) {
			log_message("%s", error);
			return failure;
		}
	}
	task_dependencies_link(supervisor->groups, supervisor->group_count, config);
	/* Sets `corral scale` took to 0 have no task in the config it runs:
	 * their definition comes from the files, as the old corral kept it. */
	if (supervisor->handover)
		upgrade_state_zero_sets(supervisor->handover, files_config, supervisor->groups,
					supervisor->group_count);
	/* An upgrade's inotify fd, with its watches: no new instance needed. */
	if (supervisor->handover)
		watch_set_adopt(&supervisor->watches, upgrade_state_watch_fd(supervisor->handover));
	watch_set_sync(&supervisor->watches);
	supervisor->events.on_event = supervisor_publish_event;
	supervisor->events.on_event_context = supervisor;
	kept_state_open(supervisor);
	/* tini and dumb-init have none; a one-command corral leaves no socket
	 * behind to collide with another corral's. */
	if (options->one_command)
		return 0;
	return supervisor_open_doors(supervisor, options);
}

/* After every task is gone: nothing holds the directories any more. */
static void remove_task_dirs(struct supervisor *supervisor)
{
	if (!supervisor->task_dirs_root)
		return;
	char error[512];
	if (task_dirs_remove(supervisor->task_dirs_root, error, sizeof(error)) < 0)
		log_message("%s", error);
	free(supervisor->task_dirs_root);
	supervisor->task_dirs_root = NULL;
}

static void supervisor_close(struct supervisor *supervisor)
{
	parent_notify_close(&supervisor->parent, supervisor->exit_code);
	/* Before the control socket: a session's end is said to its client. */
	exec_sessions_close(&supervisor->exec_sessions);
	upgrade_cancel(supervisor);
	upgrade_check_collect();
	if (supervisor->loop)
		kept_state_close(supervisor);
	control_server_close(supervisor->control);
	supervisor->control = NULL;
	http_server_close(supervisor->http);
	supervisor->http = NULL;
	task_dependencies_unlink(supervisor->groups, supervisor->group_count);
	watch_set_close(&supervisor->watches);
	/* The tasks' last output goes out, waiting (bounded) for stdout. */
	if (supervisor->loop)
		output_stdout_begin_close(&supervisor->sink);
	for (size_t i = 0; i < supervisor->group_count; i++) {
		group_free(supervisor->groups[i]);
		free(supervisor->groups[i]);
	}
	free(supervisor->groups);
	/* Normally given back as each run ended; this is for the rest. */
	host_shared_mounts_close(&supervisor->shared_mounts, log_message);
	remove_task_dirs(supervisor);
	if (supervisor->services.notify_dir) {
		rmdir(supervisor->services.notify_dir);
		free(supervisor->services.notify_dir);
	}
	/* After the tasks, whose lookups are cancelled with their probes. */
	name_resolver_free(supervisor->services.probes.resolver);
	network_spares_close(&supervisor->network_spares);
	pid_index_free(&supervisor->task_pids);
	task_records_free(&supervisor->task_records); /* after the tasks gave theirs back */
	keeper_loop_side_free(&supervisor->keeper);
	shortage_report_free(&supervisor->shortage);
	network_host_close(&supervisor->network);
	cgroup_tree_close(&supervisor->cgroups);
	for (size_t i = 0; i < supervisor->group_name_count; i++)
		free(supervisor->group_names[i]);
	free(supervisor->group_names);
	free(supervisor->cgroup_owner);
	if (supervisor->loop)
		loop_timer_cancel(supervisor->loop, &supervisor->shutdown_timer);
	if (supervisor->signal_watch.fd >= 0) {
		loop_watch_remove(supervisor->loop, &supervisor->signal_watch);
		close(supervisor->signal_watch.fd);
	}
	signals_restore(supervisor->one_command != NULL);
	signal_requests_close(supervisor);
	if (supervisor->loop)
		output_stdout_close(&supervisor->sink);
	output_json_lines_free(&supervisor->follower_lines);
	spawn_slots_close(&supervisor->spawn_slots);
	event_log_close(&supervisor->events);
	loop_free(supervisor->loop);
	termination_close(supervisor);
	reload_free_generations(supervisor);
}

static bool all_done(const struct supervisor *supervisor)
{
	/* --keep-running: finished groups wait for `corral restart --all`. */
	if (supervisor->services.keep_running && !supervisor->shutting_down && !supervisor->killing)
		return false;
	for (size_t i = 0; i < supervisor->group_count; i++) {
		const struct group *group = supervisor->groups[i];
		if (group_has_processes(group))
			return false;
		if (!group->finished && !supervisor->killing)
			return false;
	}
	return true;
}

/* Until no group has anything left to do: a task's change can concern a
 * group settled before it, when a dependency crosses groups. Then corral's
 * parent hears of what changed. */
static void settle_groups(struct supervisor *supervisor)
{
	uint64_t now = loop_now_ms();
	bool any_dirty, settled = false;
	do {
		any_dirty = false;
		for (size_t i = 0; i < supervisor->group_count; i++) {
			struct group *group = supervisor->groups[i];
			if (!group->dirty)
				continue;
			any_dirty = settled = true;
			group_settle(group, now);
		}
	} while (any_dirty);
	if (supervisor->exit_for_failure[0] && !supervisor->shutting_down) {
		supervisor_begin_shutdown(supervisor, supervisor->exit_for_failure,
					  supervisor->exit_for_failure);
		settled = true;
	}
	if (settled)
		parent_notify_tasks_changed(&supervisor->parent, supervisor->config,
					    supervisor->groups, supervisor->group_count);
}

int supervisor_run(const struct config *config, const struct run_options *options)
{
	struct supervisor supervisor;
	bool taking_over = upgrade_resuming() != NULL;
	/* One-command mode opens no socket: nothing to collide with. An
	 * upgrade's new corral takes over the socket that is there. */
	if (!options->one_command && !taking_over &&
	    supervisor_control_socket_taken(config, options))
		return 1;
	bool machine_init = machine_init_active();
	bool pid1 = reaper_init();
	/* First, so that every later message (the tasks' "received" among
	 * them) reads as part of this run. */
	log_info("%s %zu group%s from %s%s", taking_over ? "taking over" : "running",
		 config->group_count, config->group_count == 1 ? "" : "s", config->path,
		 machine_init ? " as the machine's init"
		 : pid1       ? " as PID 1"
			      : "");
	if (config->profiles) {
		char active[256];
		profiles_describe((const char *const *)config->profiles, active, sizeof(active));
		log_info("profiles active: %s", active);
	}
	/* After an upgrade's exec, what the first corral started with: this
	 * one starts lowered already. */
	const struct handover_reader *resumed = upgrade_resuming();
	const json_t *started_with =
	    resumed ? json_object_get(resumed->root, "started_with") : NULL;
	oom_protection_start((int)handover_int(started_with, "oom_score_adj", OOM_PROTECTION_OWN));
	int children_score;
	if (oom_protection_children_score(&children_score))
		spawn_reset_oom_score_adj_to(children_score);
	/* One-command mode is tini's: corral goes before nobody there. */
	if (!options->one_command) {
		cpu_precedence_start((int)handover_int(started_with, "nice", CPU_PRECEDENCE_OWN));
		int children_nice;
		if (cpu_precedence_children_nice(&children_nice))
			spawn_reset_nice_to(children_nice);
	}
	if (supervisor_open(&supervisor, config, options) < 0) {
		upgrade_fall_back("it could not set up (see the lines above)");
		supervisor.exit_code = 1;
		termination_note_corral_failure(&supervisor,
						"it could not set up (its log says why)");
		termination_write(&supervisor);
		supervisor_close(&supervisor);
		return 1;
	}
	if (taking_over) {
		char error[1024];
		if (upgrade_state_read(&supervisor, supervisor.handover, error, sizeof(error)) < 0)
			upgrade_fall_back(error);
		upgrade_finish(&supervisor);
		supervisor.handover = NULL;
	}

	settle_groups(&supervisor);
	while (!all_done(&supervisor)) {
		int turn = loop_run_once(supervisor.loop);
		if (turn < 0) {
			char failure[128];
			snprintf(failure, sizeof(failure), "its event loop failed: %s",
				 strerror(-turn));
			log_message("event loop failed: %s; killing every task", strerror(-turn));
			termination_note_corral_failure(&supervisor, failure);
			kill_everything(&supervisor, "event loop failure", failure);
			if (!supervisor.have_failure)
				supervisor.exit_code = 1;
			break;
		}
		settle_groups(&supervisor);
		reload_collect(&supervisor);
		exec_sessions_collect(&supervisor.exec_sessions);
		if (supervisor.control)
			control_server_collect(supervisor.control);
		http_server_collect(supervisor.http);
		upgrade_check_collect();
	}

	unsigned leftovers = reaper_kill_remaining_children();
	if (leftovers)
		log_info("%u leftover process%s killed and reaped at exit", leftovers,
			 leftovers == 1 ? "" : "es");
	int exit_code = supervisor.exit_code;
	termination_write(&supervisor);
	supervisor_close(&supervisor);
	return exit_code;
}
