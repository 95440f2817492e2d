#include "config/model/config_diff.h"

#include <string.h>

/* ---- equality of the parts of a definition ---- */

static bool strings_equal(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

/* NULL-terminated lists; NULL is the empty list. */
static bool lists_equal(char *const *a, char *const *b)
{
	static char *const empty[] = {NULL};
	a = a ? a : empty;
	b = b ? b : empty;
	for (; *a && *b; a++, b++)
		if (strcmp(*a, *b) != 0)
			return false;
	return !*a && !*b;
}

static bool probes_equal(const struct probe_config *a, const struct probe_config *b)
{
	return a->kind == b->kind && lists_equal(a->argv, b->argv) &&
	       strings_equal(a->host, b->host) && a->port == b->port &&
	       strings_equal(a->path, b->path) && lists_equal(a->headers, b->headers) &&
	       a->interval_ms == b->interval_ms && a->timeout_ms == b->timeout_ms &&
	       a->start_interval_ms == b->start_interval_ms &&
	       a->initial_delay_ms == b->initial_delay_ms && a->inside == b->inside;
}

static bool resources_equal(const struct resources_config *a, const struct resources_config *b)
{
	return a->memory == b->memory && a->memory_high == b->memory_high &&
	       a->has_memory_swap == b->has_memory_swap && a->memory_swap == b->memory_swap &&
	       a->cpu_millicores == b->cpu_millicores && a->cpu_weight == b->cpu_weight &&
	       a->pids == b->pids && strings_equal(a->cpuset, b->cpuset) &&
	       a->io_weight == b->io_weight && a->optional == b->optional;
}

/* A limit that is set in `a` and not in `b`: the cgroup would keep it, as
 * nothing writes "no limit" back; a new cgroup (a new process) drops it. */
static bool resources_limit_removed(const struct resources_config *a,
				    const struct resources_config *b)
{
	return (a->memory && !b->memory) || (a->memory_high && !b->memory_high) ||
	       (a->has_memory_swap && !b->has_memory_swap) ||
	       (a->cpu_millicores && !b->cpu_millicores) || (a->cpu_weight && !b->cpu_weight) ||
	       (a->pids && !b->pids) || (a->cpuset && !b->cpuset) ||
	       (a->io_weight && !b->io_weight);
}

static bool mounts_equal(const struct mount_config *a, const struct mount_config *b, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (!strings_equal(a[i].type, b[i].type) ||
		    !strings_equal(a[i].source, b[i].source) ||
		    !strings_equal(a[i].target, b[i].target) ||
		    !lists_equal(a[i].options, b[i].options) || a[i].readonly != b[i].readonly ||
		    a[i].propagation != b[i].propagation ||
		    a[i].bidirectional != b[i].bidirectional)
			return false;
	return true;
}

static bool devices_equal(const struct device_config *a, const struct device_config *b,
			  size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (!strings_equal(a[i].source, b[i].source) ||
		    !strings_equal(a[i].target, b[i].target) ||
		    a[i].permissions != b[i].permissions)
			return false;
	return true;
}

static bool id_maps_equal(const struct id_map_range *a, size_t a_count,
			  const struct id_map_range *b, size_t b_count)
{
	return a_count == b_count && (!a_count || memcmp(a, b, a_count * sizeof(*a)) == 0);
}

static bool isolation_equal(const struct isolation_config *a, const struct isolation_config *b)
{
	return a->enabled == b->enabled && a->namespaces == b->namespaces &&
	       strings_equal(a->hostname, b->hostname) && a->init == b->init &&
	       a->capabilities == b->capabilities && a->seccomp.kind == b->seccomp.kind &&
	       a->seccomp.default_action == b->seccomp.default_action &&
	       lists_equal(a->seccomp.allow, b->seccomp.allow) &&
	       lists_equal(a->seccomp.deny, b->seccomp.deny) &&
	       a->no_new_privileges == b->no_new_privileges && a->rlimit_count == b->rlimit_count &&
	       (a->rlimit_count == 0 ||
		memcmp(a->rlimits, b->rlimits, a->rlimit_count * sizeof(a->rlimits[0])) == 0) &&
	       a->umask == b->umask && strings_equal(a->rootfs, b->rootfs) &&
	       a->readonly_rootfs == b->readonly_rootfs && a->mount_count == b->mount_count &&
	       mounts_equal(a->mounts, b->mounts, a->mount_count) &&
	       a->device_count == b->device_count &&
	       devices_equal(a->devices, b->devices, a->device_count) &&
	       id_maps_equal(a->uid_map, a->uid_map_count, b->uid_map, b->uid_map_count) &&
	       id_maps_equal(a->gid_map, a->gid_map_count, b->gid_map, b->gid_map_count) &&
	       a->network == b->network;
}

static bool hooks_equal(const struct task_config *a, const struct task_config *b)
{
	if (a->hook_count != b->hook_count)
		return false;
	for (size_t i = 0; i < a->hook_count; i++) {
		const struct hook_config *x = &a->hooks[i], *y = &b->hooks[i];
		if (!strings_equal(x->name, y->name) || x->stage != y->stage ||
		    !lists_equal(x->argv, y->argv) || x->timeout_ms != y->timeout_ms)
			return false;
	}
	return true;
}

static bool watches_equal(const struct task_config *a, const struct task_config *b)
{
	if (a->watch_count != b->watch_count)
		return false;
	for (size_t i = 0; i < a->watch_count; i++) {
		const struct watch_config *x = &a->watches[i], *y = &b->watches[i];
		if (!lists_equal(x->paths, y->paths) || x->action != y->action ||
		    x->signal != y->signal || x->debounce_ms != y->debounce_ms)
			return false;
	}
	return true;
}

/* By name and meaning: the indices say where the target sits in its
 * config, which another task's addition may shift. */
static bool dependencies_equal(const struct task_config *a, const struct task_config *b)
{
	if (a->after_count != b->after_count)
		return false;
	for (size_t i = 0; i < a->after_count; i++) {
		const struct task_dependency *x = &a->after[i], *y = &b->after[i];
		if (!strings_equal(x->name, y->name) || x->condition != y->condition ||
		    x->restart != y->restart || x->implicit != y->implicit ||
		    x->timeout_ms != y->timeout_ms || x->optional != y->optional)
			return false;
	}
	return true;
}

static bool wait_for_equal(const struct task_config *a, const struct task_config *b)
{
	if (a->wait_for_count != b->wait_for_count)
		return false;
	for (size_t i = 0; i < a->wait_for_count; i++) {
		const struct wait_target *x = &a->wait_for[i], *y = &b->wait_for[i];
		if (!strings_equal(x->text, y->text) || x->timeout_ms != y->timeout_ms ||
		    x->probe.interval_ms != y->probe.interval_ms)
			return false;
	}
	return true;
}

static bool restart_equal(const struct restart_policy *a, const struct restart_policy *b)
{
	return a->policy == b->policy && a->attempts == b->attempts &&
	       a->interval_ms == b->interval_ms && a->delay_ms == b->delay_ms &&
	       a->max_delay_ms == b->max_delay_ms && a->mode == b->mode &&
	       memcmp(&a->success_exit, &b->success_exit, sizeof(a->success_exit)) == 0 &&
	       memcmp(&a->no_restart_exit, &b->no_restart_exit, sizeof(a->no_restart_exit)) == 0;
}

/* ---- the verdict ---- */

static void note(struct task_diff *diff, bool differs, const char *field, enum task_change change)
{
	if (!differs)
		return;
	if (diff->field_count < TASK_CHANGE_FIELDS_MAX)
		diff->fields[diff->field_count++] = field;
	if (change > diff->change)
		diff->change = change;
}

void task_config_diff(const struct task_config *a, const struct task_config *b,
		      struct task_diff *diff)
{
	const enum task_change replace = TASK_CHANGE_REPLACE, in_place = TASK_CHANGE_IN_PLACE;
	memset(diff, 0, sizeof(*diff));
	note(diff, !lists_equal(a->argv, b->argv), "command", replace);
	note(diff, !lists_equal(a->env, b->env), "env", replace);
	note(diff, !strings_equal(a->cwd, b->cwd), "cwd", replace);
	note(diff,
	     a->oom_score_adj_set != b->oom_score_adj_set || a->oom_score_adj != b->oom_score_adj,
	     "oom_score_adj", replace);
	note(diff, !strings_equal(a->user, b->user), "user", replace);
	note(diff, !lists_equal(a->groups, b->groups), "groups", replace);
	note(diff, a->stage != b->stage, "lifecycle", replace);
	note(diff, !restart_equal(&a->restart, &b->restart), "restart", in_place);
	note(diff,
	     a->kill_signal != b->kill_signal || a->kill_timeout_ms != b->kill_timeout_ms ||
		 a->kill_mode != b->kill_mode,
	     "kill", in_place);
	note(diff, !resources_equal(&a->resources, &b->resources), "resources",
	     resources_limit_removed(&a->resources, &b->resources) ? replace : in_place);
	/* The kind decides what the process is given (NOTIFY_SOCKET, an fd);
	 * the probe and timeout only what corral does. */
	const struct readiness_config *ready_a = readiness_of(a), *ready_b = readiness_of(b);
	bool readiness_kind = ready_a->kind != ready_b->kind || ready_a->fd != ready_b->fd ||
			      ready_a->watchdog_ms != ready_b->watchdog_ms;
	note(diff,
	     readiness_kind || !probes_equal(&ready_a->probe, &ready_b->probe) ||
		 ready_a->timeout_ms != ready_b->timeout_ms ||
		 ready_a->continuous != ready_b->continuous ||
		 ready_a->start_period_ms != ready_b->start_period_ms ||
		 ready_a->failures != ready_b->failures ||
		 !strings_equal(ready_a->log_ready, ready_b->log_ready) ||
		 !strings_equal(ready_a->log_not_ready, ready_b->log_not_ready),
	     "readiness", readiness_kind ? replace : in_place);
	note(diff,
	     !probes_equal(&health_of(a)->probe, &health_of(b)->probe) ||
		 health_of(a)->failures != health_of(b)->failures,
	     "health", in_place);
	note(diff, !isolation_equal(&a->isolation, &b->isolation), "isolation", replace);
	note(diff,
	     !lists_equal(a->cdi.devices, b->cdi.devices) ||
		 !lists_equal(a->cdi.spec_dirs, b->cdi.spec_dirs),
	     "cdi", replace);
	note(diff, a->task_dirs != b->task_dirs, "task_dirs", replace);
	note(diff, a->manual_start != b->manual_start, "autostart", in_place);
	/* Read by the reload that replaces the instances, never by a process. */
	note(diff,
	     a->update.strategy != b->update.strategy ||
		 a->update.max_unavailable != b->update.max_unavailable ||
		 a->update.min_ready_set != b->update.min_ready_set ||
		 a->update.min_ready != b->update.min_ready,
	     "update", in_place);
	note(diff,
	     a->schedule.set != b->schedule.set ||
		 !strings_equal(a->schedule.cron_text, b->schedule.cron_text) ||
		 a->schedule.every_ms != b->schedule.every_ms ||
		 a->schedule.concurrency != b->schedule.concurrency ||
		 a->schedule.missed != b->schedule.missed ||
		 !strings_equal(a->schedule.time_zone, b->schedule.time_zone),
	     "schedule", replace);
	note(diff,
	     a->log_mode != b->log_mode || a->log_history != b->log_history ||
		 !strings_equal(a->log_dir, b->log_dir) || a->log_max_size != b->log_max_size ||
		 a->log_keep != b->log_keep || a->log_shared_dir != b->log_shared_dir ||
		 a->log_rate_limit != b->log_rate_limit ||
		 a->log_separate_streams != b->log_separate_streams,
	     "log", a->log_separate_streams != b->log_separate_streams ? replace : in_place);
	note(diff, !hooks_equal(a, b), "hooks", replace);
	note(diff, !dependencies_equal(a, b), "after", replace);
	/* Like `after`: what a start waits for, held by the waiting task. */
	note(diff, !wait_for_equal(a, b), "wait_for", replace);
	/* The rights are looked up at each request; but whether the socket
	 * is hidden in the task's mount namespace was settled when its
	 * process was made. */
	bool socket_shown_differs = (a->control_rights == 0) != (b->control_rights == 0) &&
				    (b->isolation.namespaces & ISOLATION_NS_MOUNT);
	note(diff, a->control_rights != b->control_rights, "control",
	     socket_shown_differs ? replace : in_place);
	/* corral watches; the process is not told. */
	note(diff, !watches_equal(a, b), "watch", in_place);
}

#define SWAP(a, b)                                                                                 \
	do {                                                                                       \
		__typeof__(a) swap_ = (a);                                                         \
		(a) = (b);                                                                         \
		(b) = swap_;                                                                       \
	} while (0)

/* Two pointers to what each config owns, or NULL. */
#define SWAP_HELD(a, b)                                                                            \
	do {                                                                                       \
		if ((a) && (b))                                                                    \
			SWAP(*(a), *(b));                                                          \
		else                                                                               \
			SWAP(a, b);                                                                \
	} while (0)

void task_config_swap_resources(struct task_config *into, struct task_config *from)
{
	SWAP(into->resources, from->resources);
}

void task_config_swap_in_place_fields(struct task_config *into, struct task_config *from)
{
	SWAP(into->restart, from->restart);
	SWAP(into->kill_signal, from->kill_signal);
	SWAP(into->kill_timeout_ms, from->kill_timeout_ms);
	SWAP(into->kill_mode, from->kill_mode);
	SWAP(into->resources, from->resources);
	/* Contents where both have one (in place, a readiness keeps its kind,
	 * fd and watchdog), since a running probe points into the kept one;
	 * a health check added or removed is made again (task_reload.c). */
	SWAP_HELD(into->readiness, from->readiness);
	SWAP_HELD(into->health, from->health);
	SWAP(into->log_mode, from->log_mode);
	SWAP(into->log_history, from->log_history);
	SWAP(into->log_dir, from->log_dir);
	SWAP(into->log_max_size, from->log_max_size);
	SWAP(into->log_keep, from->log_keep);
	SWAP(into->log_shared_dir, from->log_shared_dir);
	SWAP(into->log_rate_limit, from->log_rate_limit);
	SWAP(into->manual_start, from->manual_start);
	SWAP(into->update, from->update);
	SWAP(into->control_rights, from->control_rights);
	SWAP(into->watches, from->watches);
	SWAP(into->watch_count, from->watch_count);
}

const char *config_diff_fixed_global(const struct config *a, const struct config *b)
{
	if (!strings_equal(a->socket_path, b->socket_path))
		return "socket";
	if (!strings_equal(a->control_group, b->control_group))
		return "control.group";
	if (a->control_idle_timeout_ms != b->control_idle_timeout_ms)
		return "control.idle_timeout";
	if (a->control_connections_per_user != b->control_connections_per_user)
		return "control.connections_per_user";
	if (!strings_equal(a->task_dirs_root, b->task_dirs_root))
		return "task_dirs_root";
	if (!strings_equal(a->termination_log, b->termination_log))
		return "termination_log";
	return NULL;
}

const char *config_diff_fixed_group_key(const struct group_config *a, const struct group_config *b)
{
	if (!strings_equal(a->network.bridge, b->network.bridge) ||
	    a->network.subnet != b->network.subnet ||
	    a->network.prefix_length != b->network.prefix_length)
		return "network";
	return NULL;
}
