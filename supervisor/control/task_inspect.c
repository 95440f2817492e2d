/* `corral inspect`: what a task's current (or last) run really got, after
 * group defaults, its prestart hooks and CDI, and where each mount, device
 * and variable came from (docs/cli.md). */
#include "supervisor/control/task_inspect.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <unistd.h>

#include "base/json_text.h"
#include "hooks/hook_protocol.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task.h"
#include "supervisor/tasks/task_schedule.h"

/* Names that usually hold a secret (PASSWORD, API_TOKEN, AWS_SECRET_KEY,
 * ...): their values are masked unless asked. */
bool inspect_name_is_secret(const char *name, size_t length)
{
	static const char *const words[] = {"PASSWORD",   "PASSWD",  "SECRET",  "TOKEN",
					    "CREDENTIAL", "PRIVATE", "API_KEY", "ACCESS_KEY",
					    "_KEY",       NULL};
	char upper[128];
	if (length >= sizeof(upper))
		length = sizeof(upper) - 1;
	for (size_t i = 0; i < length; i++)
		upper[i] = (char)toupper((unsigned char)name[i]);
	upper[length] = '\0';
	for (const char *const *word = words; *word; word++) {
		const char *found = strstr(upper, *word);
		/* "_KEY" only at the end: SSH_KEY, not KEYBOARD_LAYOUT. */
		if (found && (strcmp(*word, "_KEY") != 0 || found[4] == '\0'))
			return true;
	}
	return strcmp(upper, "KEY") == 0;
}

static json_t *string_list(char *const *strings)
{
	json_t *list = json_array();
	for (char *const *string = strings; string && *string; string++)
		json_array_append_new(list, json_string_lossy(*string, strlen(*string)));
	return list;
}

/* A prestart hook's name as `from` says it: "hook NAME", "cdi", "task_dirs". */
static void hook_source(const struct task_hook *hook, char *buffer, size_t size)
{
	if (hook->exec)
		snprintf(buffer, size, "hook %s", hook->name);
	else
		snprintf(buffer, size, "%s", hook->name);
}

/* Where NAME=... in the environment comes from: the last prestart hook
 * that set it, else the config, else corral. */
static void env_source(const struct task *task, const char *entry, size_t name_length, char *buffer,
		       size_t size)
{
	snprintf(buffer, size, "corral's environment");
	for (char **env = task->config->env; env && *env; env++)
		if (strncmp(*env, entry, name_length + 1) == 0)
			snprintf(buffer, size, "config");
	if (strncmp(entry, "CORRAL_", 7) == 0 || strncmp(entry, "NOTIFY_SOCKET=", 14) == 0 ||
	    strncmp(entry, "WATCHDOG_USEC=", 14) == 0)
		snprintf(buffer, size, "corral");
	for (size_t i = 0; task->hooks && i < task->hooks->count; i++) {
		const struct task_hook *hook = &task->hooks->hooks[i];
		for (char **env = hook->last.env; env && *env; env++)
			if (strncmp(*env, entry, name_length + 1) == 0)
				hook_source(hook, buffer, size);
	}
}

static json_t *environment_json(const struct task *task, bool show_secrets)
{
	json_t *list = json_array();
	char **envp = task_plan_environment(&task->plan);
	for (char *const *entry = envp; *entry; entry++) {
		const char *equals = strchr(*entry, '=');
		if (!equals)
			continue;
		size_t name_length = (size_t)(equals - *entry);
		char from[96];
		env_source(task, *entry, name_length, from, sizeof(from));
		bool masked = !show_secrets && inspect_name_is_secret(*entry, name_length);
		json_t *item = json_object();
		json_object_set_new(item, "name", json_string_lossy(*entry, name_length));
		json_object_set_new(item, "value",
				    masked ? json_string("***")
					   : json_string_lossy(equals + 1, strlen(equals + 1)));
		json_object_set_new(item, "from", json_string(from));
		json_array_append_new(list, item);
	}
	free(envp);
	return list;
}

static json_t *mount_json(const struct mount_config *mount, const char *from)
{
	json_t *item = json_object();
	json_object_set_new(item, "type", json_string(mount->type ? mount->type : "bind"));
	json_object_set_new(item, "source",
			    mount->source ? json_string(mount->source) : json_null());
	json_object_set_new(item, "target", json_string(mount->target));
	json_object_set_new(item, "readonly", json_boolean(mount->readonly));
	json_object_set_new(item, "from", json_string(from));
	return item;
}

static json_t *device_json(const struct device_config *device, const char *from)
{
	char permissions[4] = "";
	size_t used = 0;
	if (device->permissions & DEVICE_READ)
		permissions[used++] = 'r';
	if (device->permissions & DEVICE_WRITE)
		permissions[used++] = 'w';
	if (device->permissions & DEVICE_MKNOD)
		permissions[used++] = 'm';
	return json_pack("{s:s, s:s, s:s, s:s}", "source", device->source, "target",
			 device_config_target(device), "permissions", permissions, "from", from);
}

/* The configured ones first, then each prestart hook's in list order: the
 * order they are applied in. */
static void add_mounts_and_devices(const struct task *task, json_t *object)
{
	const struct isolation_config *isolation = &task->config->isolation;
	json_t *mounts = json_array(), *devices = json_array();
	for (size_t i = 0; i < isolation->mount_count; i++)
		json_array_append_new(mounts, mount_json(&isolation->mounts[i], "config"));
	for (size_t i = 0; i < isolation->device_count; i++)
		json_array_append_new(devices, device_json(&isolation->devices[i], "config"));
	for (size_t h = 0; task->hooks && h < task->hooks->count; h++) {
		const struct task_hook *hook = &task->hooks->hooks[h];
		char from[96];
		hook_source(hook, from, sizeof(from));
		for (size_t i = 0; i < hook->last.mount_count; i++)
			json_array_append_new(mounts, mount_json(&hook->last.mounts[i], from));
		for (size_t i = 0; i < hook->last.device_count; i++)
			json_array_append_new(devices, device_json(&hook->last.devices[i], from));
	}
	json_object_set_new(object, "mounts", mounts);
	json_object_set_new(object, "devices", devices);
}

static json_t *capabilities_json(const struct task *task)
{
	if (!task->isolation)
		return json_string("corral's");
	const struct capability_plan *capabilities = &task->isolation->capabilities;
	json_t *list = json_array();
	for (unsigned cap = 0; cap <= capabilities->last_cap && cap < 64; cap++)
		if (capabilities->keep & (UINT64_C(1) << cap)) {
			char *name = cap_to_name((cap_value_t)cap);
			json_array_append_new(list, json_string(name ? name : "?"));
			cap_free(name);
		}
	return list;
}

static const char *seccomp_name(const struct isolation_config *isolation)
{
	if (!isolation->enabled)
		return "none";
	switch (isolation->seccomp.kind) {
	case SECCOMP_PROFILE_DEFAULT:
		return "default";
	case SECCOMP_PROFILE_UNCONFINED:
		return "unconfined";
	case SECCOMP_PROFILE_CUSTOM:
		break;
	}
	return "custom";
}

/* An instance of a task written with `instances:`: its number, its
 * task's instances as configured and now (`corral scale`), and how a
 * reload replaces them (`update:`); null for a task of its own. */
static json_t *instances_json(const struct task *task)
{
	const struct task_config *config = task->config;
	if (!config->instance_of)
		return json_null();
	unsigned configured, now;
	group_instance_counts(task->group, config->instance_of, &configured, &now);
	char set[160];
	snprintf(set, sizeof(set), "%s/%s", task->group->config->name, config->instance_of);
	json_t *update = config->update.strategy == UPDATE_ROLLING
			     ? json_pack("{s:s, s:i}", "strategy", "rolling", "max_unavailable",
					 config->update.max_unavailable)
			     : json_pack("{s:s}", "strategy", "recreate");
	/* Written: what any roll of the set keeps ready (else null: the
	 * roll's instances less its max_unavailable). */
	json_object_set_new(update, "min_ready",
			    config->update.min_ready_set ? json_integer(config->update.min_ready)
							 : json_null());
	return json_pack("{s:s, s:i, s:i, s:i, s:o}", "task", set, "number", config->instance,
			 "configured", configured, "now", now, "update", update);
}

json_t *task_inspect_json(const struct task *task, bool show_secrets)
{
	const struct task_config *config = task->config;
	const struct isolation_config *isolation = &config->isolation;
	json_t *object = json_object();
	json_object_set_new(object, "task", json_string(config->full_name));
	json_object_set_new(object, "state", json_string(task_schedule_shown_state(task)));
	pid_t pid = task_command_pid(task);
	json_object_set_new(object, "pid", pid > 0 ? json_integer(pid) : json_null());
	json_object_set_new(object, "cgroup",
			    task->cgroup.path ? json_string(task->cgroup.path) : json_null());
	json_object_set_new(object, "command", string_list(config->argv));
	json_object_set_new(object, "executable",
			    task->plan.executable ? json_string(task->plan.executable)
						  : json_null());
	json_object_set_new(object, "cwd", config->cwd ? json_string(config->cwd) : json_null());
	json_t *user = json_object();
	json_object_set_new(user, "uid",
			    json_integer(task->plan.change_ids ? task->plan.uid : getuid()));
	json_object_set_new(user, "gid",
			    json_integer(task->plan.change_ids ? task->plan.gid : getgid()));
	json_t *groups = json_array();
	for (size_t i = 0; i < task->plan.group_count; i++)
		json_array_append_new(groups, json_integer(task->plan.groups[i]));
	json_object_set_new(user, "groups", groups);
	json_object_set_new(object, "user", user);
	json_object_set_new(object, "env", environment_json(task, show_secrets));
	json_object_set_new(object, "secrets_masked", json_boolean(!show_secrets));
	json_object_set_new(object, "namespaces",
			    namespace_list_json(isolation->enabled ? isolation->namespaces : 0));
	json_object_set_new(object, "hostname",
			    isolation->enabled && isolation->hostname
				? json_string(isolation->hostname)
				: json_null());
	json_object_set_new(object, "rootfs",
			    isolation->enabled && isolation->rootfs ? json_string(isolation->rootfs)
								    : json_null());
	add_mounts_and_devices(task, object);
	json_object_set_new(object, "capabilities", capabilities_json(task));
	json_object_set_new(object, "seccomp", json_string(seccomp_name(isolation)));
	json_object_set_new(object, "no_new_privileges",
			    json_boolean(isolation->enabled && isolation->no_new_privileges));
	json_object_set_new(object, "resources", resources_json(&config->resources));
	json_t *after = json_array();
	for (size_t i = 0; i < config->after_count; i++)
		json_array_append_new(
		    after, json_pack("{s:s, s:s}", "task", config->after[i].name, "condition",
				     dependency_condition_name(config->after[i].condition)));
	json_object_set_new(object, "after", after);
	json_object_set_new(object, "instances", instances_json(task));
	json_t *hooks = json_array();
	for (size_t i = 0; task->hooks && i < task->hooks->count; i++) {
		const struct task_hook *hook = &task->hooks->hooks[i];
		char name[96];
		hook_source(hook, name, sizeof(name));
		json_array_append_new(hooks, json_pack("{s:s, s:s}", "name", name, "stage",
						       hook_stage_name(hook->stage)));
	}
	json_object_set_new(object, "hooks", hooks);
	/* Before its first run, what hooks and CDI add is not known yet. */
	bool ran = task->runner.has_exited || task->runner.state == TASK_RUNNING;
	json_object_set_new(object, "prestart_ran", json_boolean(ran));
	return object;
}
