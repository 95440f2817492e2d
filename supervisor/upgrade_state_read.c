#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "config/load/config_copy.h"
#include "supervisor/control/control_handover.h"
#include "supervisor/restore.h"
#include "supervisor/supervisor_internal.h"
#include "supervisor/upgrade.h"
#include "supervisor/upgrade/task_handover.h"
#include "supervisor/upgrade_state.h"

int upgrade_state_read_cgroups(struct supervisor *supervisor, const struct handover_reader *reader,
			       char *error, size_t error_size)
{
	const json_t *state = json_object_get(reader->root, "cgroups");
	const json_t *roots = json_object_get(state, "v1_roots");
	size_t count = json_array_size(roots);
	const char **v1_roots = xcalloc(count + 1, sizeof(*v1_roots));
	for (size_t i = 0; i < count; i++)
		v1_roots[i] = json_string_value(json_array_get(roots, i));
	struct cgroup_tree_found found = {
	    .enabled = handover_bool(state, "enabled"),
	    .off_reason = handover_string(state, "off_reason"),
	    .mount_path = handover_string(state, "mount_path"),
	    .base_path = handover_string(state, "base_path"),
	    .instance_name = handover_string(state, "instance_name"),
	    .proc_root_path = handover_string(state, "proc_root_path"),
	    .controllers = handover_string(state, "controllers"),
	    .v1_roots = v1_roots,
	    .v1_root_count = count,
	};
	int failure = cgroup_tree_reopen(
	    &supervisor->cgroups, &found, (const char *const *)supervisor->group_names,
	    supervisor->group_name_count, supervisor->cgroup_owner, log_message);
	free(v1_roots);
	if (failure < 0)
		snprintf(error, error_size, "the cgroup tree %s: %s", found.base_path,
			 strerror(-failure));
	return failure;
}

int upgrade_state_read_control(struct supervisor *supervisor, const struct handover_reader *reader,
			       const struct control_server_settings *settings,
			       const struct control_server_ops *ops, char *error, size_t error_size)
{
	return control_server_handover_read(&supervisor->control, supervisor->loop, reader,
					    json_object_get(reader->root, "control"), settings, ops,
					    supervisor->groups, supervisor->group_count,
					    &supervisor->upgrade_requester, error, error_size);
}

/* What a new instance of the set is made from: its first instance's
 * definition, as the files give it. */
static const struct task_config *set_model(const struct config *config, const char *group,
					   const char *task)
{
	for (size_t g = 0; g < config->group_count; g++) {
		if (strcmp(config->groups[g].name, group) != 0)
			continue;
		for (size_t t = 0; t < config->groups[g].task_count; t++)
			if (config->groups[g].tasks[t].instance_of &&
			    strcmp(config->groups[g].tasks[t].instance_of, task) == 0)
				return &config->groups[g].tasks[t];
	}
	return NULL;
}

struct config *upgrade_state_scaled_config(const struct handover_reader *reader,
					   const struct config *config)
{
	const json_t *scaled = json_object_get(json_object_get(reader->root, "config"), "scaled");
	size_t count = json_array_size(scaled);
	if (!count)
		return NULL;
	struct instance_count *changes = xcalloc(count, sizeof(*changes));
	size_t change_count = 0;
	for (size_t i = 0; i < count; i++) {
		const json_t *set = json_array_get(scaled, i);
		const char *group = handover_string(set, "group"),
			   *task = handover_string(set, "task");
		int64_t instances = handover_int(set, "count", 0);
		const struct task_config *model =
		    group && task ? set_model(config, group, task) : NULL;
		/* A set the files do not have is not there to scale: the
		 * match of tasks that follows says so. */
		if (model && instances >= 0 && instances <= UINT32_MAX)
			changes[change_count++] =
			    (struct instance_count){group, task, (unsigned)instances, model};
	}
	struct config *result =
	    change_count ? config_with_instances(config, changes, change_count) : NULL;
	free(changes);
	return result;
}

/* How many instances the files give the set `task` of `group`. */
static unsigned files_count(const struct config *config, const char *group, const char *task)
{
	unsigned count = 0;
	for (size_t g = 0; g < config->group_count; g++)
		if (strcmp(config->groups[g].name, group) == 0)
			for (size_t t = 0; t < config->groups[g].task_count; t++)
				count += config->groups[g].tasks[t].instance_of &&
					 strcmp(config->groups[g].tasks[t].instance_of, task) == 0;
	return count;
}

void upgrade_state_zero_sets(const struct handover_reader *reader,
			     const struct config *files_config, struct group **groups,
			     size_t group_count)
{
	const json_t *scaled = json_object_get(json_object_get(reader->root, "config"), "scaled");
	size_t index;
	const json_t *set;
	json_array_foreach(scaled, index, set)
	{
		const char *group_name = handover_string(set, "group"),
			   *task = handover_string(set, "task");
		if (!group_name || !task || handover_int(set, "count", -1) != 0)
			continue;
		const struct task_config *model = set_model(files_config, group_name, task);
		for (size_t g = 0; g < group_count && model; g++)
			if (strcmp(groups[g]->config->name, group_name) == 0)
				zero_sets_add(&groups[g]->zero_sets, task, model,
					      files_count(files_config, group_name, task));
	}
}

int upgrade_state_watch_fd(const struct handover_reader *reader)
{
	return handover_fd_get(reader, json_object_get(reader->root, "watch"), "fd");
}

static struct group *find_group(struct supervisor *supervisor, const char *name)
{
	return group_find(supervisor->groups, supervisor->group_count, name,
			  name ? strlen(name) : 0);
}

/* The document lists the tasks in the supervisor's order: the next one
 * is looked at first (`cursor`), the others only when the config's order
 * differs. */
struct task_cursor {
	size_t group, task;
};

static struct task *find_task(struct supervisor *supervisor, const char *name,
			      struct task_cursor *cursor)
{
	if (!name)
		return NULL;
	while (cursor->group < supervisor->group_count &&
	       cursor->task >= supervisor->groups[cursor->group]->task_count) {
		cursor->group++;
		cursor->task = 0;
	}
	if (cursor->group < supervisor->group_count) {
		struct task *next = supervisor->groups[cursor->group]->tasks[cursor->task];
		if (strcmp(next->config->full_name, name) == 0) {
			cursor->task++;
			return next;
		}
	}
	for (size_t i = 0; i < supervisor->group_count; i++)
		for (size_t t = 0; t < supervisor->groups[i]->task_count; t++)
			if (strcmp(supervisor->groups[i]->tasks[t]->config->full_name, name) == 0)
				return supervisor->groups[i]->tasks[t];
	return NULL;
}

static void group_read(const json_t *state, struct group *group)
{
	group->coordinator.state = (enum coordinator_state)handover_int(state, "coordinator", 0);
	const json_t *gates = json_object_get(state, "gates");
	for (size_t i = 0; i < STAGE_COUNT; i++)
		group->coordinator.gate_open[i] = json_is_true(json_array_get(gates, i));
	group->finished = handover_bool(state, "finished");
	group->starts_forbidden = handover_bool(state, "starts_forbidden");
	group->rearm_after_stop = handover_bool(state, "rearm_after_stop");
	group->restart_in_order = handover_bool(state, "restart_in_order");
	snprintf(group->stop_reason, sizeof(group->stop_reason), "%s",
		 handover_string(state, "stop_reason") ? handover_string(state, "stop_reason")
						       : "");
	group->failure_restart_count = (unsigned)handover_int(state, "failure_restart_count", 0);
	snprintf(group->failure_decision, sizeof(group->failure_decision), "%s",
		 handover_string(state, "failure_decision")
		     ? handover_string(state, "failure_decision")
		     : "");
	const json_t *restarts = json_object_get(state, "failure_restarts");
	group->failure_restarts.window_start_ms =
	    (uint64_t)handover_int(restarts, "window_start_ms", 0);
	group->failure_restarts.restarts = (unsigned)handover_int(restarts, "restarts", 0);
	group->failure_restarts.window_open = handover_bool(restarts, "window_open");
	group->dirty = true;
}

/* Every group and task of the document must be in the config this corral
 * loaded, and the other way round: the same definitions run on. */
static int match_counts(struct supervisor *supervisor, const json_t *groups, const json_t *tasks,
			char *error, size_t error_size)
{
	size_t task_count = 0;
	for (size_t i = 0; i < supervisor->group_count; i++)
		task_count += supervisor->groups[i]->task_count;
	if (json_array_size(groups) == supervisor->group_count &&
	    json_array_size(tasks) == task_count)
		return 0;
	snprintf(error, error_size,
		 "the config it loaded has %zu groups and %zu tasks, the running one %zu and %zu",
		 supervisor->group_count, task_count, json_array_size(groups),
		 json_array_size(tasks));
	return -EINVAL;
}

static void recent_events_read(const json_t *recent, struct event_log *events)
{
	size_t index;
	json_t *line;
	json_array_foreach(recent, index, line)
	{
		if (json_is_string(line))
			line_ring_append(&events->recent, 0, 0, json_string_value(line),
					 json_string_length(line));
	}
}

struct record_claims {
	struct supervisor *supervisor;
	struct task_cursor cursor;
};

/* A handed-over record goes back to its task; one whose task this
 * config does not have is given back. */
static void claim_record(void *context, struct task_record *record)
{
	struct record_claims *claims = context;
	struct task *task = find_task(claims->supervisor, record->name, &claims->cursor);
	if (!task || (task->record && task->record != record)) {
		task_records_give_back(&claims->supervisor->task_records, record);
		return;
	}
	task->record = record;
	task->runner.exits = &record->exits;
}

/* The tasks' counts and exits: the records the old corral wrote them in
 * (task_records.h), mapped again. 0, or -EINVAL with `error`. */
static int records_read(struct supervisor *supervisor, const struct handover_reader *reader,
			char *error, size_t error_size)
{
	const json_t *chunks = json_object_get(reader->root, "task_records");
	size_t count = json_array_size(chunks);
	int *fds = xcalloc(count + 1, sizeof(*fds));
	for (size_t i = 0; i < count; i++) {
		fds[i] = handover_fd_get(reader, json_array_get(chunks, i), "fd");
		if (fds[i] < 0) {
			snprintf(error, error_size,
				 "task records: chunk %zu names no handed-over fd", i);
			free(fds);
			return -EINVAL;
		}
	}
	/* Records this corral made already (none: nothing counted before
	 * the loop turns) would be claimed over. */
	int failure = task_records_adopt(&supervisor->task_records, fds, count, error, error_size);
	free(fds);
	if (failure < 0)
		return failure;
	struct record_claims claims = {.supervisor = supervisor};
	task_records_visit(&supervisor->task_records, claim_record, &claims);
	return 0;
}

/* A restore may hold records of a group's tasks but none of the group
 * (corral killed before its first record of it): its lifecycle goes where
 * the tasks show, not back to init. */
static void resume_groups_not_kept(struct supervisor *supervisor, const json_t *groups)
{
	for (size_t i = 0; i < supervisor->group_count; i++) {
		struct group *group = supervisor->groups[i];
		bool kept = false;
		size_t index;
		const json_t *state;
		json_array_foreach(groups, index, state)
		{
			const char *name = handover_string(state, "name");
			kept |= name && strcmp(name, group->config->name) == 0;
		}
		if (!kept)
			group_resume_lifecycle(group);
	}
}

int upgrade_state_read(struct supervisor *supervisor, const struct handover_reader *reader,
		       char *error, size_t error_size)
{
	const json_t *root = reader->root;
	const json_t *groups = json_object_get(root, "groups");
	const json_t *tasks = json_object_get(root, "tasks");
	/* A restore takes back what it has records of, task by task
	 * (restore.h); an upgrade all or nothing. */
	bool restoring = upgrade_restoring();
	if (!restoring && match_counts(supervisor, groups, tasks, error, error_size) < 0)
		return -EINVAL;
	size_t index;
	json_t *state;
	json_array_foreach(groups, index, state)
	{
		struct group *group = find_group(supervisor, handover_string(state, "name"));
		if (!group && restoring)
			continue;
		if (!group) {
			snprintf(error, error_size, "group %s is not in the config it loaded",
				 handover_string(state, "name"));
			return -EINVAL;
		}
		group_read(state, group);
	}
	struct task_cursor cursor = {0};
	json_array_foreach(tasks, index, state)
	{
		struct task *task = find_task(supervisor, handover_string(state, "name"), &cursor);
		if (!task && restoring) {
			/* Its task is gone from the config: its record too. */
			restore_forget_slot(supervisor,
					    (unsigned)handover_int(state, "keeper_slot", 0));
			continue;
		}
		if (!task) {
			snprintf(error, error_size, "task %s is not in the config it loaded",
				 handover_string(state, "name"));
			return -EINVAL;
		}
		int failure = task_handover_read(reader, state, task, error, error_size);
		restore_keep_slot(task, (unsigned)handover_int(state, "keeper_slot", 0));
		if (restoring) {
			restore_task_taken(task, handover_string(state, "restore_unsettled"),
					   failure < 0 ? error : NULL);
			continue;
		}
		if (failure < 0)
			return failure;
	}
	if (restoring)
		resume_groups_not_kept(supervisor, groups);
	const json_t *events = json_object_get(root, "events");
	int failure;
	if (event_log_adopt(&supervisor->events, handover_fd_get(reader, events, "fd")) < 0) {
		snprintf(error, error_size, "the event log: %s", strerror(errno));
		return -EINVAL;
	}
	recent_events_read(json_object_get(events, "recent"), &supervisor->events);
	const json_t *output = json_object_get(root, "stdout");
	const char *pending;
	size_t pending_length;
	if (handover_blob_get(reader, json_object_get(output, "pending"), &pending,
			      &pending_length))
		output_stdout_adopt(&supervisor->sink, pending, pending_length,
				    (int)handover_int(output, "saved_flags", 0));
	const json_t *own = json_object_get(root, "supervisor");
	supervisor->have_failure = handover_bool(own, "have_failure");
	supervisor->failure_is_secondary = handover_bool(own, "failure_is_secondary");
	supervisor->exit_code = (int)handover_int(own, "exit_code", 0);
	supervisor->counters.reloads_succeeded =
	    (uint64_t)handover_int(own, "reloads_succeeded", 0);
	supervisor->counters.reloads_failed = (uint64_t)handover_int(own, "reloads_failed", 0);
	const json_t *requests = json_object_get(own, "control_requests");
	for (unsigned i = 0; i < CONTROL_COMMAND_COUNT; i++)
		supervisor->counters.control_requests[i] =
		    (uint64_t)handover_int(requests, control_command_name(i), 0);
	supervisor->started_wall_ms =
	    (uint64_t)handover_int(own, "started_wall_ms", (int64_t)supervisor->started_wall_ms);
	supervisor->sink.dropped_lines = (uint64_t)handover_int(own, "output_dropped_lines", 0);
	/* This corral is one more upgrade (a document without the count is
	 * an older corral's: its upgrades were not counted). */
	supervisor->counters.upgrades = (uint64_t)handover_int(own, "upgrades", 0) + !restoring;
	/* The keeper counts the loops that died: its count, not the last
	 * record's (which a kill may have caught before it was sent). */
	supervisor->counters.restores =
	    supervisor->keeper.channel >= 0
		? supervisor->keeper.restores
		: (uint64_t)handover_int(own, "restores", 0) + restoring;
	supervisor->shortage.put_off_total = (uint64_t)handover_int(own, "starts_put_off", 0);
	failure = records_read(supervisor, reader, error, error_size);
	if (failure < 0)
		return failure;
	/* Last, when nothing can fail any more: the device programs were
	 * copied by each task that had one. */
	json_array_foreach(tasks, index, state)
	{
		int program = handover_fd_get(reader, state, "device_program_fd");
		if (program >= 0 && fcntl(program, F_GETFD) >= 0)
			close(program);
	}
	return 0;
}
