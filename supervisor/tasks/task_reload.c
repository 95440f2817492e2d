/* A task's side of a reload (supervisor/reload.c): a new definition taken
 * in place by the running task, or taken between two runs by a task
 * rebuilt around its runner. */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task.h"
#include "supervisor/tasks/task_reload.h"

/* ---- in place ---- */

/* A probe's command is resolved when it is made: made again, and started
 * again when the run it watches is under way. */
static void remake_probes(struct task *task)
{
	struct task_readiness *readiness = &task->readiness;
	bool readiness_active = readiness->probes && readiness->probes->readiness_probe.active;
	bool health_active = readiness->probes && readiness->probes->health_probe.active;
	if (readiness->probes) {
		probe_free(&readiness->probes->readiness_probe);
		probe_free(&readiness->probes->health_probe);
		memset(&readiness->probes->readiness_probe, 0,
		       sizeof(readiness->probes->readiness_probe));
		memset(&readiness->probes->health_probe, 0,
		       sizeof(readiness->probes->health_probe));
	}
	task_readiness_init_probes(task); /* allocates them when the config now has one */
	bool running_ready = runner_is_ready(&task->runner);
	const struct readiness_config *wanted = readiness_of(task->config);
	if (wanted->kind == READINESS_PROBE &&
	    (readiness_active ? !running_ready || wanted->continuous
			      : running_ready && wanted->continuous))
		probe_start(&readiness->probes->readiness_probe);
	/* Not continuous any more: what it lost it has back. */
	if (!wanted->continuous && runner_ready_lost(&task->runner))
		runner_ready(&task->runner, "readiness.continuous turned off");
	if ((health_active || running_ready) && health_of(task->config)->probe.kind != PROBE_NONE)
		probe_start(&readiness->probes->health_probe);
}

/* Nomad's Update hook: a running task's update hooks hear what changed,
 * and are not waited for; a failure is a hook_failed event. */
static void run_update_hooks(struct task *task, const struct task_diff *diff)
{
	if (task->runner.state != TASK_RUNNING)
		return;
	struct hook_facts facts = {.run = task->runner.restart_count,
				   .pid = task_command_pid(task)};
	size_t used = 0;
	for (size_t i = 0; i < diff->field_count && used < sizeof(facts.changed); i++)
		used += (size_t)snprintf(facts.changed + used, sizeof(facts.changed) - used, "%s%s",
					 i ? "," : "", diff->fields[i]);
	task_hooks_run(task->hooks, HOOK_STAGE_UPDATE, &facts);
}

int task_update_in_place(struct task *task, struct task_config *definition,
			 const struct task_diff *diff, struct limit_refusal *refusal, char *error,
			 size_t error_size)
{
	/* The running task keeps its definition object: every pointer into
	 * it (probes, hooks, the runner) stays good. */
	struct task_config *own = (struct task_config *)task->config;
	task_config_swap_in_place_fields(own, definition);
	for (size_t i = 0; i < diff->field_count; i++) {
		const char *field = diff->fields[i];
		int refused;
		if (strcmp(field, "resources") == 0 &&
		    (refused = task_cgroup_update_limits(
			 &task->cgroup, task->services->cgroups, task->group->config->name,
			 own->name, &own->resources, refusal, error, error_size)) < 0) {
			/* The old limits stay, in the config and, as far as the
			 * kernel lets them back, in the cgroup. */
			char ignored[256];
			struct limit_refusal ignored_refusal;
			task_config_swap_resources(own, definition);
			task_cgroup_update_limits(
			    &task->cgroup, task->services->cgroups, task->group->config->name,
			    own->name, &own->resources, &ignored_refusal, ignored, sizeof(ignored));
			return refused;
		}
		if (strcmp(field, "readiness") == 0 || strcmp(field, "health") == 0)
			remake_probes(task);
		/* autostart turned on: a task that never ran starts now. */
		if (strcmp(field, "autostart") == 0 && !own->manual_start && task_is_dormant(task))
			group_force_restart_task(task->group, task, loop_now_ms());
		if (strcmp(field, "log") == 0) {
			line_ring_resize(&task->logs, own->log_history);
			task_apply_output_settings(task);
			task_close_log_file(task);
			task_open_log_file(task);
		}
	}
	run_update_hooks(task, diff);
	return 0;
}

/* ---- between two runs ---- */

bool task_can_take_next_config(const struct task *task)
{
	const struct runner *runner = &task->runner;
	if (!task->next_config || task_has_process(task) || task_hooks_busy(task->hooks))
		return false;
	/* A restart delay's timer belongs to the runner kept across the
	 * rebuild: wait for it to fire. */
	return runner_ready_to_start(runner) || runner->state == TASK_DEAD;
}

/* What a rebuild keeps: the run history and the links to other tasks. */
struct kept_state {
	struct runner runner;
	struct line_ring logs;
	unsigned log_followers;
	struct task_link *after;
	size_t after_count;
	struct task **dependents;
	size_t dependent_count;
	size_t stop_position;
	bool restart_held;
	bool failed_by_dependency;
	bool rolling;
	struct task_record *record;
};

void task_take_next_config(struct task *task)
{
	const struct task_config *definition = task->next_config;
	struct group *group = task->group;
	struct services *services = task->services;
	struct kept_state kept = {
	    .runner = task->runner,
	    .logs = task->logs,
	    .log_followers = task->log_followers,
	    .after = task->after,
	    .after_count = task->after_count,
	    .dependents = task->dependents,
	    .dependent_count = task->dependent_count,
	    .stop_position = task->stop_position,
	    .restart_held = task->restart_held,
	    .failed_by_dependency = task->failed_by_dependency,
	    .rolling = task->rolling,
	};
	memset(&task->logs, 0, sizeof(task->logs));
	task->runner.texts = NULL; /* kept.runner's now */
	task->runner.exits = NULL;
	task_close_log_file(task);              /* counts what it lost, */
	kept.record = task_detach_record(task); /* and what the pipes dropped */
	task_free(task);

	char error[256];
	int result =
	    task_init(task, definition, group, group->config->name, services, error, sizeof(error));
	line_ring_free(&task->logs);
	task->logs = kept.logs;
	line_ring_resize(&task->logs, definition->log_history);
	task->log_followers = kept.log_followers;
	task_sinks_changed(task);
	task->after = kept.after;
	task->after_count = kept.after_count;
	task->dependents = kept.dependents;
	task->dependent_count = kept.dependent_count;
	task->stop_position = kept.stop_position;
	task->restart_held = kept.restart_held;
	task->failed_by_dependency = kept.failed_by_dependency;
	task->rolling = kept.rolling;
	task->record = kept.record;
	kept.runner.config = definition;
	task->runner = kept.runner;
	if (result < 0) {
		/* The reload checked the user and the plan: what is left is
		 * running out of fds or memory. */
		log_message("%s: cannot take its new definition: %s", definition->full_name, error);
		if (task->runner.state != TASK_DEAD)
			runner_fail_unstarted(&task->runner, error);
	}
	group_mark_dirty(group);
}
