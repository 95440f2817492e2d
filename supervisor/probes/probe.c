#include "supervisor/probes/probe.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/process_group.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "isolation/spawn.h"

static void on_next_run(struct loop_timer *timer);
static void on_deadline(struct loop_timer *timer);
static void on_run_exit(struct loop_watch *watch, uint32_t events);

void probe_init(struct probe *probe, const struct probe_config *config,
		const struct task_config *task, const struct task_plan *plan,
		struct probe_services *services, probe_result_function on_result, void *context)
{
	memset(probe, 0, sizeof(*probe));
	probe->config = config;
	probe->task = task;
	probe->plan = plan;
	probe->services = services;
	probe->on_result = on_result;
	probe->context = context;
	probe->error_fd = -1;
	probe->pidfd_watch = (struct loop_watch){.fd = -1, .callback = on_run_exit, .data = probe};
	probe->socket_watch.fd = -1;
	loop_timer_init(&probe->next_run, on_next_run, probe);
	loop_timer_init(&probe->deadline, on_deadline, probe);
	probe->made = true;
	if (config->kind != PROBE_EXEC)
		return;
	char buffer[PATH_MAX];
	probe->executable =
	    xstrdup(spawn_resolve_executable(config->argv[0], plan->envp, buffer, sizeof(buffer)));
}

uint64_t probe_interval_ms(const struct probe *probe)
{
	const struct probe_config *config = probe->config;
	return config->start_interval_ms && !probe->passed_once ? config->start_interval_ms
								: config->interval_ms;
}

void probe_report(struct probe *probe, bool passed, const char *why)
{
	if (!probe->active)
		return;
	probe->passed_once |= passed;
	probe->on_result(probe->context, passed, why);
}

/* A run is under way: a process, or a connection. */
static bool run_in_progress(const struct probe *probe)
{
	return probe->pid != 0 || net_probe_running(probe);
}

/* `inside`: the run joins the task, as `corral exec` does. */
static int run_inside(struct probe *probe, struct spawn_result *result, char *error,
		      size_t error_size)
{
	return probe->inside.spawn(probe->inside.context, probe->config->argv, result, error,
				   error_size);
}

/* wait_for's `path`: there or not, at once. */
static void run_path_check(struct probe *probe)
{
	loop_timer_arm(probe->services->loop, &probe->next_run,
		       loop_now_ms() + probe_interval_ms(probe));
	if (access(probe->config->path, F_OK) == 0) {
		probe_report(probe, true, "");
		return;
	}
	char error[PATH_MAX + 64];
	snprintf(error, sizeof(error), "%s: %s", probe->config->path, strerror(errno));
	probe_report(probe, false, error);
}

static void run_once(struct probe *probe)
{
	if (probe->config->kind == PROBE_PATH) {
		run_path_check(probe);
		return;
	}
	if (probe->config->kind != PROBE_EXEC) {
		net_probe_run(probe);
		return;
	}
	if (probe->config->inside && probe->inside.spawn) {
		struct spawn_result result;
		char error[160];
		uint64_t now = loop_now_ms();
		loop_timer_arm(probe->services->loop, &probe->next_run,
			       now + probe_interval_ms(probe));
		if (run_inside(probe, &result, error, sizeof(error)) < 0) {
			probe_report(probe, false, error);
			return;
		}
		probe->run_joined = true;
		probe->pid = result.pid;
		probe->timed_out = false;
		probe->error_fd = result.error_fd;
		probe->pidfd_watch.fd = result.pidfd;
		loop_watch_add(probe->services->loop, &probe->pidfd_watch, EPOLLIN);
		loop_timer_arm(probe->services->loop, &probe->deadline,
			       now + probe->config->timeout_ms);
		return;
	}
	probe->run_joined = false;
	struct spawn_slots *slots = probe->services->spawn_slots;
	struct spawn_request request = {
	    .executable = probe->executable,
	    .argv = probe->config->argv,
	    .envp = probe->plan->envp,
	    .cwd = probe->task->cwd,
	    .change_ids = probe->plan->change_ids,
	    .keep_groups = probe->plan->keep_groups,
	    .oom_score_adj = probe->plan->oom_score_adj,
	    .uid = probe->plan->uid,
	    .gid = probe->plan->gid,
	    .groups = probe->plan->groups,
	    .group_count = probe->plan->group_count,
	    .output_fd = slots->devnull_fd,
	    .notify_target = -1,
	};
	struct spawn_result result;
	uint64_t now = loop_now_ms();
	loop_timer_arm(probe->services->loop, &probe->next_run, now + probe_interval_ms(probe));
	int failure = spawn_process(slots, &request, &result);
	if (failure < 0) {
		char error[96];
		snprintf(error, sizeof(error), "clone3: %s", strerror(-failure));
		probe_report(probe, false, error);
		return;
	}
	probe->pid = result.pid;
	probe->timed_out = false;
	probe->error_fd = result.error_fd;
	probe->pidfd_watch.fd = result.pidfd;
	loop_watch_add(probe->services->loop, &probe->pidfd_watch, EPOLLIN);
	loop_timer_arm(probe->services->loop, &probe->deadline, now + probe->config->timeout_ms);
}

static void on_next_run(struct loop_timer *timer)
{
	struct probe *probe = timer->data;
	/* A run still going when the next is due is left to its deadline. */
	if (probe->active && !run_in_progress(probe))
		run_once(probe);
	else if (probe->active)
		loop_timer_arm(probe->services->loop, &probe->next_run,
			       loop_now_ms() + probe_interval_ms(probe));
}

static void on_deadline(struct loop_timer *timer)
{
	struct probe *probe = timer->data;
	if (net_probe_running(probe)) {
		net_probe_timed_out(probe);
		return;
	}
	probe->timed_out = true;
	process_group_kill(probe->pid);
}

static void describe_exit(struct probe *probe, const siginfo_t *info, char *error,
			  size_t error_size)
{
	struct spawn_failure failure;
	if (probe->run_joined &&
	    probe->inside.read_failure(probe->inside.context, probe->error_fd, error, error_size))
		return;
	if (!probe->run_joined && spawn_read_failure(probe->error_fd, &failure) == 1) {
		struct spawn_request request = {.executable = probe->executable,
						.cwd = probe->task->cwd,
						.uid = probe->plan->uid,
						.gid = probe->plan->gid};
		spawn_failure_describe(&request, &failure, error, error_size);
	} else if (probe->timed_out) {
		char timeout[32];
		format_duration_ms(probe->config->timeout_ms, timeout, sizeof(timeout));
		snprintf(error, error_size, "timed out after %s", timeout);
	} else if (info->si_code == CLD_EXITED) {
		snprintf(error, error_size, "exited with code %d", info->si_status);
	} else {
		snprintf(error, error_size, "killed by %s", signal_name(info->si_status));
	}
}

/* A run's fds and timer released. Also all that is done for a killed run
 * that has not exited yet, at a reload or corral's exit: it is not waited
 * for (a killed process may take its time: a file system that does not
 * answer), and the loop's SIGCHLD sweep reaps it as any child it does not
 * know. */
static void let_run_go(struct probe *probe)
{
	if (probe->run_joined)
		probe->inside.release(probe->inside.context);
	loop_watch_remove(probe->services->loop, &probe->pidfd_watch);
	close(probe->pidfd_watch.fd);
	probe->pidfd_watch.fd = -1;
	close(probe->error_fd);
	probe->error_fd = -1;
	probe->pid = 0;
	loop_timer_cancel(probe->services->loop, &probe->deadline);
}

/* The run ended: reap it, then report (if still wanted). */
static void finish_run(struct probe *probe)
{
	siginfo_t info;
	/* What the run left behind goes with it. */
	if (!process_group_reap(probe->pidfd_watch.fd, probe->pid, true, &info))
		return;
	char error[160] = "";
	bool passed = info.si_code == CLD_EXITED && info.si_status == 0 && !probe->timed_out;
	if (!passed)
		describe_exit(probe, &info, error, sizeof(error));
	let_run_go(probe);
	probe_report(probe, passed, error);
}

static void on_run_exit(struct loop_watch *watch, uint32_t events)
{
	finish_run(watch->data);
}

bool probe_reap(struct probe *probe, pid_t pid)
{
	if (probe->pid <= 0 || probe->pid != pid)
		return false;
	finish_run(probe);
	return true;
}

void probe_start_after(struct probe *probe, uint64_t delay_ms)
{
	probe->active = true;
	probe->passed_once = false;
	if (probe->config->initial_delay_ms > delay_ms)
		delay_ms = probe->config->initial_delay_ms;
	if (delay_ms)
		loop_timer_arm(probe->services->loop, &probe->next_run, loop_now_ms() + delay_ms);
	else if (!run_in_progress(probe))
		run_once(probe);
}

void probe_start(struct probe *probe)
{
	probe_start_after(probe, 0);
}

void probe_stop(struct probe *probe)
{
	probe->active = false;
	loop_timer_cancel(probe->services->loop, &probe->next_run);
	process_group_kill(probe->pid);
	if (net_probe_running(probe)) {
		net_probe_cancel(probe);
		loop_timer_cancel(probe->services->loop, &probe->deadline);
	}
}

void probe_free(struct probe *probe)
{
	if (!probe->made)
		return;
	probe_stop(probe);
	if (probe->pid > 0)
		finish_run(probe); /* reaped, when the killed run has exited already */
	if (probe->pid > 0)
		let_run_go(probe);
	loop_timer_cancel(probe->services->loop, &probe->deadline);
	free(probe->executable);
	probe->executable = NULL;
	probe->made = false;
}
