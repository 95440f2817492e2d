/* The parts of the model that need code: stage names, built-in defaults and
 * freeing. */
#include "config/model/config.h"

#include <stdlib.h>

#include "base/xmalloc.h"
#include "config/load/config_parse.h"

int lifecycle_stage_step(enum lifecycle_stage stage)
{
	switch (stage) {
	case STAGE_PRESTART_EPHEMERAL:
	case STAGE_PRESTART_SIDECAR:
		return 0;
	case STAGE_MAIN:
		return 1;
	case STAGE_POSTSTART_EPHEMERAL:
	case STAGE_POSTSTART_SIDECAR:
		return 2;
	case STAGE_POSTSTOP:
		break;
	}
	return 3;
}

const char *lifecycle_stage_name(enum lifecycle_stage stage)
{
	switch (stage) {
	case STAGE_PRESTART_EPHEMERAL:
		return "prestart-ephemeral";
	case STAGE_PRESTART_SIDECAR:
		return "prestart-sidecar";
	case STAGE_MAIN:
		return "main";
	case STAGE_POSTSTART_EPHEMERAL:
		return "poststart-ephemeral";
	case STAGE_POSTSTART_SIDECAR:
		return "poststart-sidecar";
	case STAGE_POSTSTOP:
		return "poststop";
	}
	return "unknown-stage";
}

bool lifecycle_stage_is_sidecar(enum lifecycle_stage stage)
{
	return stage == STAGE_PRESTART_SIDECAR || stage == STAGE_POSTSTART_SIDECAR;
}

bool exit_status_set_has_code(const struct exit_status_set *set, int code)
{
	return code >= 0 && code < 256 && (set->codes[code / 64] >> (code % 64) & 1);
}

bool exit_status_set_has_signal(const struct exit_status_set *set, int signal_number)
{
	return signal_number >= 1 && signal_number <= 64 &&
	       (set->signals >> (signal_number - 1) & 1);
}

const char *group_failure_action_name(enum group_failure_action action)
{
	switch (action) {
	case GROUP_ON_FAILURE_STOP:
		return "stop";
	case GROUP_ON_FAILURE_RESTART:
		return "restart";
	case GROUP_ON_FAILURE_IGNORE:
		return "ignore";
	case GROUP_ON_FAILURE_EXIT:
		return "exit";
	}
	return "unknown";
}

struct restart_policy restart_policy_default(enum lifecycle_stage stage)
{
	struct restart_policy policy = {
	    .policy = RESTART_ALWAYS,
	    .attempts = CONFIG_DEFAULT_RESTART_ATTEMPTS,
	    .interval_ms = CONFIG_DEFAULT_RESTART_INTERVAL_MS,
	    .delay_ms = CONFIG_DEFAULT_RESTART_DELAY_MS,
	    .max_delay_ms = CONFIG_DEFAULT_RESTART_MAX_DELAY_MS,
	    .mode = RESTART_MODE_FAIL,
	};

	/* Long-running tasks are kept up; a one-shot task is retried only
	 * when it failed; cleanup after the group stopped runs once. */
	switch (stage) {
	case STAGE_MAIN:
		policy.policy = RESTART_ALWAYS;
		break;
	case STAGE_PRESTART_SIDECAR:
	case STAGE_POSTSTART_SIDECAR:
		/* Kubernetes restarts a sidecar for as long as the pod runs,
		 * backing off: a proxy or a log shipper that crashes must not
		 * take the main tasks down with it. Spent attempts wait out the
		 * window instead of failing the group. A main task keeps mode
		 * fail: its failing for good is what lets corral exit and the
		 * orchestrator's own restart policy act. */
		policy.policy = RESTART_ALWAYS;
		policy.mode = RESTART_MODE_DELAY;
		break;
	case STAGE_PRESTART_EPHEMERAL:
	case STAGE_POSTSTART_EPHEMERAL:
		policy.policy = RESTART_ON_FAILURE;
		break;
	case STAGE_POSTSTOP:
		policy.policy = RESTART_NEVER;
		break;
	}
	return policy;
}

const char *dependency_condition_name(enum dependency_condition condition)
{
	switch (condition) {
	case DEPENDS_STARTED:
		return "started";
	case DEPENDS_READY:
		return "ready";
	case DEPENDS_HEALTHY:
		return "healthy";
	case DEPENDS_COMPLETED:
		return "completed";
	case DEPENDS_EXITED:
		return "exited";
	}
	return "unknown";
}

const char *dependency_condition_wait(enum dependency_condition condition)
{
	switch (condition) {
	case DEPENDS_STARTED:
		return "to start";
	case DEPENDS_READY:
		return "to be ready";
	case DEPENDS_HEALTHY:
		return "to be healthy";
	case DEPENDS_COMPLETED:
		return "to complete";
	case DEPENDS_EXITED:
		return "to exit";
	}
	return "";
}

const char *dependency_condition_failed(enum dependency_condition condition)
{
	switch (condition) {
	case DEPENDS_STARTED:
		return "not started";
	case DEPENDS_READY:
		return "not ready";
	case DEPENDS_HEALTHY:
		return "not healthy";
	case DEPENDS_COMPLETED:
		return "not completed";
	case DEPENDS_EXITED:
		return "not exited";
	}
	return "";
}

bool resources_config_has_limits(const struct resources_config *resources)
{
	return resources->memory || resources->memory_high || resources->has_memory_swap ||
	       resources->cpu_millicores || resources->cpu_weight || resources->pids ||
	       resources->cpuset || resources->io_weight;
}

const char *probe_kind_name(enum probe_kind kind)
{
	static const char *const names[] = {
	    [PROBE_NONE] = "none", [PROBE_EXEC] = "exec", [PROBE_TCP] = "tcp",
	    [PROBE_HTTP] = "http", [PROBE_UNIX] = "unix", [PROBE_PATH] = "path",
	};
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

void probe_config_free(struct probe_config *probe)
{
	string_vector_free(probe->argv);
	free(probe->host);
	free(probe->path);
	string_vector_free(probe->headers);
	free(probe->port_template.text);
	free(probe->port_template.where);
	free(probe->path_template.text);
	free(probe->path_template.where);
	probe->port_template = probe->path_template = (struct probe_template){0};
	probe->argv = probe->headers = NULL;
	probe->host = probe->path = NULL;
}

const char *watch_action_name(enum watch_action action)
{
	switch (action) {
	case WATCH_ACTION_RESTART:
		return "restart";
	case WATCH_ACTION_SIGNAL:
		return "signal";
	case WATCH_ACTION_RELOAD:
		return "reload";
	}
	return "unknown";
}

void watch_configs_free(struct watch_config *watches, size_t count)
{
	for (size_t i = 0; i < count; i++)
		string_vector_free(watches[i].paths);
	free(watches);
}

void config_task_free(struct task_config *task)
{
	free(task->name);
	free(task->full_name);
	string_vector_free(task->argv);
	string_vector_free(task->env);
	free(task->cwd);
	free(task->user);
	free(task->resources.cpuset);
	free(task->instance_of);
	schedule_config_free(&task->schedule);
	free(task->log_dir);
	if (task->readiness) {
		probe_config_free(&task->readiness->probe);
		free(task->readiness->log_ready);
		free(task->readiness->log_not_ready);
	}
	free(task->readiness);
	if (task->health)
		probe_config_free(&task->health->probe);
	free(task->health);
	free(task->isolation.hostname);
	free(task->isolation.rlimits);
	free(task->isolation.rootfs);
	mount_configs_free(task->isolation.mounts, task->isolation.mount_count);
	string_vector_free(task->isolation.seccomp.allow);
	string_vector_free(task->isolation.seccomp.deny);
	string_vector_free(task->cdi.devices);
	string_vector_free(task->cdi.spec_dirs);
	hook_configs_free(task->hooks, task->hook_count);
	free(task->isolation.uid_map);
	free(task->isolation.gid_map);
	string_vector_free(task->groups);
	device_configs_free(task->isolation.devices, task->isolation.device_count);
	for (size_t i = 0; i < task->after_count; i++)
		free(task->after[i].name);
	free(task->after);
	for (size_t i = 0; i < task->wait_for_count; i++) {
		probe_config_free(&task->wait_for[i].probe);
		free(task->wait_for[i].text);
	}
	free(task->wait_for);
	watch_configs_free(task->watches, task->watch_count);
}

void config_group_free(struct group_config *group)
{
	free(group->name);
	free(group->network.bridge);
	for (size_t i = 0; i < group->task_count; i++)
		config_task_free(&group->tasks[i]);
	free(group->tasks);
}

/* Also frees a model the loader abandoned half-built: every array is
 * allocated zeroed at its final size, so unset members are NULL. */
void config_free(struct config *config)
{
	if (!config)
		return;
	for (size_t i = 0; i < config->group_count; i++)
		config_group_free(&config->groups[i]);
	free(config->groups);
	free(config->path);
	for (size_t i = 0; i < config->source_count; i++)
		free(config->sources[i]);
	free(config->sources);
	config_files_free(&config->files);
	free(config->socket_path);
	free(config->control_group);
	free(config->task_dirs_root);
	free(config->http.listen);
	free(config->termination_log);
	for (size_t i = 0; i < config->notify_ready_group_count; i++)
		free(config->notify_ready_groups[i]);
	free(config->notify_ready_groups);
	string_vector_free(config->profiles);
	string_vector_free(config->profiles_unlisted);
	for (size_t i = 0; i < config->scaled_count; i++) {
		free(config->scaled[i].group);
		free(config->scaled[i].task);
	}
	free(config->scaled);
	free(config);
}
