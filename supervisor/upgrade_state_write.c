#include <stdio.h>
#include <string.h>

#include "base/cpu_precedence.h"
#include "base/oom_protection.h"
#include "supervisor/control/control_handover.h"
#include "supervisor/http/http_server.h"
#include "supervisor/pid1/machine_init.h"
#include "supervisor/supervisor_internal.h"
#include "supervisor/upgrade/task_handover.h"
#include "supervisor/upgrade_state.h"

bool upgrade_state_possible(struct supervisor *supervisor, char *error, size_t error_size)
{
	const char *reason = NULL;
	if (supervisor->one_command)
		reason = "one-command mode (corral -- COMMAND) has no upgrade";
	else if (machine_init_active())
		reason = "not as the machine's init";
	else if (supervisor->shutting_down || supervisor->killing)
		reason = "corral is shutting down";
	else if (supervisor->exec_sessions.first || supervisor->exec_sessions.draining)
		reason = "a `corral exec` session is open";
	else if (!supervisor->config->files.expanded_count)
		reason = "the running config was not read from files, which the new corral would "
			 "build it from";
	if (reason) {
		snprintf(error, error_size, "%s", reason);
		return false;
	}
	if (!control_server_handover_possible(supervisor->control, error, error_size))
		return false;
	for (size_t i = 0; i < supervisor->group_count; i++) {
		const struct group *group = supervisor->groups[i];
		if (group->removed || group->stop_mode != GROUP_RUNNING) {
			snprintf(error, error_size, "group %s is stopping", group->config->name);
			return false;
		}
		for (const struct instance_roll *roll = group->rolls; roll; roll = roll->next)
			if (roll->outcome == ROLL_GOING) {
				snprintf(error, error_size, "a rolling restart of %s goes on",
					 roll->full_name);
				return false;
			}
		for (size_t t = 0; t < group->task_count; t++) {
			const struct task *task = group->tasks[t];
			/* A task of an older generation (a reload found it
			 * unchanged) runs what the current config says; one
			 * whose change waits (next_config) is refused there. */
			if (!task_handover_possible(task, error, error_size))
				return false;
		}
	}
	return true;
}

json_t *upgrade_group_write(const struct group *group)
{
	json_t *gates = json_array();
	for (size_t i = 0; i < STAGE_COUNT; i++)
		json_array_append_new(gates, json_boolean(group->coordinator.gate_open[i]));
	return json_pack("{s:s,s:i,s:o,s:b,s:b,s:b,s:b,s:s,s:i,s:s,s:{s:I,s:i,s:b}}", "name",
			 group->config->name, "coordinator", group->coordinator.state, "gates",
			 gates, "finished", group->finished, "starts_forbidden",
			 group->starts_forbidden, "rearm_after_stop", group->rearm_after_stop,
			 "restart_in_order", group->restart_in_order, "stop_reason",
			 group->stop_reason, "failure_restart_count", group->failure_restart_count,
			 "failure_decision", group->failure_decision, "failure_restarts",
			 "window_start_ms", (json_int_t)group->failure_restarts.window_start_ms,
			 "restarts", group->failure_restarts.restarts, "window_open",
			 group->failure_restarts.window_open);
}

static json_t *cgroups_write(const struct cgroup_tree *tree)
{
	json_t *v1_roots = json_array();
	for (size_t i = 0; i < tree->v1_root_count; i++)
		json_array_append_new(v1_roots, json_string(tree->v1_roots[i]));
	return json_pack("{s:b,s:s,s:s?,s:s?,s:s?,s:s?,s:s,s:o}", "enabled", tree->enabled,
			 "off_reason", tree->off_reason, "mount_path", tree->mount_path,
			 "base_path", tree->base_path, "instance_name", tree->instance_name,
			 "proc_root_path", tree->proc_root_path, "controllers", tree->controllers,
			 "v1_roots", v1_roots);
}

static void recent_event(void *context, uint64_t time_ms, unsigned tag, const char *text,
			 size_t length)
{
	(void)time_ms;
	(void)tag;
	json_array_append_new(context, json_stringn(text, length));
}

static json_t *events_write(struct handover_writer *writer, struct event_log *events)
{
	json_t *recent = json_array();
	line_ring_visit(&events->recent, 0, recent_event, recent);
	if (events->file)
		fflush(events->file);
	return json_pack("{s:o,s:o}", "fd",
			 handover_fd(writer, events->file ? fileno(events->file) : -1), "recent",
			 recent);
}

/* The memfds of the tasks' records (task_records.h): the new corral maps
 * them and finds each task's by its name. Their counts are not copied
 * into the document: they are where the counting wrote them. */
static json_t *records_write(struct handover_writer *writer, const struct task_records *records)
{
	json_t *chunks = json_array();
	for (size_t i = 0; i < records->chunk_count; i++) {
		int fd = task_records_chunk_fd(records, i);
		if (fd >= 0)
			json_array_append_new(chunks,
					      json_pack("{s:o}", "fd", handover_fd(writer, fd)));
	}
	return chunks;
}

/* The bytes the running definitions were read from: the new corral
 * builds the same ones, whatever the files hold now. */
static json_t *config_write(struct handover_writer *writer, const struct config *config)
{
	const struct config_files *files = &config->files;
	json_t *texts = json_array(), *expanded = json_array();
	for (size_t i = 0; i < files->count; i++)
		json_array_append_new(
		    texts,
		    json_pack("{s:s,s:o}", "path", files->items[i].path, "text",
			      handover_blob(writer, files->items[i].text, files->items[i].size)));
	for (size_t i = 0; i < files->expanded_count; i++)
		json_array_append_new(expanded, json_string(files->expanded[i]));
	/* corral scale's counts, which the files do not give. */
	json_t *scaled = json_array();
	for (size_t i = 0; i < config->scaled_count; i++)
		json_array_append_new(scaled,
				      json_pack("{s:s,s:s,s:i}", "group", config->scaled[i].group,
						"task", config->scaled[i].task, "count",
						(int)config->scaled[i].count));
	return json_pack("{s:o,s:o,s:b,s:o}", "files", texts, "expanded", expanded, "plain",
			 files->plain, "scaled", scaled);
}

void upgrade_state_write(struct supervisor *supervisor, struct handover_writer *writer,
			 const struct control_client *requester)
{
	json_t *root = writer->root;
	json_t *groups = json_array(), *tasks = json_array();
	for (size_t i = 0; i < supervisor->group_count; i++) {
		const struct group *group = supervisor->groups[i];
		json_array_append_new(groups, upgrade_group_write(group));
		for (size_t t = 0; t < group->task_count; t++) {
			/* Lines a log file holds for its next flush are written now:
			 * the new corral opens the file again, empty-handed. */
			struct task *task = group->tasks[t];
			if (task->log_file) {
				log_file_flush(task->log_file);
				/* The new corral opens it again, counting from 0:
				 * what it lost so far goes into the record. */
				if (task->log_file->lost_lines) {
					task_counts_of(task)->earlier_lost_log_lines +=
					    task->log_file->lost_lines;
					task->log_file->lost_lines = 0;
				}
			}
			json_array_append_new(tasks, task_handover_write(writer, group->tasks[t]));
		}
	}
	json_object_set_new(root, "groups", groups);
	json_object_set_new(root, "tasks", tasks);
	upgrade_state_write_corral(supervisor, writer, requester);
	json_object_set_new(root, "supervisor", upgrade_counters_write(supervisor));
}

json_t *upgrade_counters_write(const struct supervisor *supervisor)
{
	/* GET /metrics' counters go on from where they were. */
	json_t *requests = json_object();
	for (unsigned i = 0; i < CONTROL_COMMAND_COUNT; i++)
		json_object_set_new(
		    requests, control_command_name(i),
		    json_integer((json_int_t)supervisor->counters.control_requests[i]));
	return json_pack("{s:b,s:b,s:i,s:I,s:I,s:I,s:o,s:I,s:I,s:I,s:I,s:b}", "have_failure",
			 supervisor->have_failure, "failure_is_secondary",
			 supervisor->failure_is_secondary, "exit_code", supervisor->exit_code,
			 "started_wall_ms", (json_int_t)supervisor->started_wall_ms,
			 "reloads_succeeded", (json_int_t)supervisor->counters.reloads_succeeded,
			 "reloads_failed", (json_int_t)supervisor->counters.reloads_failed,
			 "control_requests", requests, "output_dropped_lines",
			 (json_int_t)supervisor->sink.dropped_lines, "upgrades",
			 (json_int_t)supervisor->counters.upgrades, "restores",
			 (json_int_t)supervisor->counters.restores, "starts_put_off",
			 (json_int_t)supervisor->shortage.put_off_total, "shutting_down",
			 supervisor->shutting_down);
}

void upgrade_state_write_corral(struct supervisor *supervisor, struct handover_writer *writer,
				const struct control_client *requester)
{
	json_t *root = writer->root;
	json_object_set_new(root, "config", config_write(writer, supervisor->config));
	json_object_set_new(root, "cgroups", cgroups_write(&supervisor->cgroups));
	/* What corral lowers for itself and gives its tasks back: the next
	 * corral starts lowered already (oom_protection.h, cpu_precedence.h). */
	json_object_set_new(root, "started_with",
			    json_pack("{s:i,s:i}", "oom_score_adj", oom_protection_started_with(),
				      "nice", cpu_precedence_started_with()));
	/* A keeper's record of corral holds no chunk: they come and go in
	 * records of their own (kept_state.c), 16 fds a message at most. */
	json_object_set_new(root, "task_records",
			    writer->for_restore ? json_array()
						: records_write(writer, &supervisor->task_records));
	json_object_set_new(root, "events", events_write(writer, &supervisor->events));
	const struct output_stdout *sink = &supervisor->sink;
	/* A keeper's record holds no bytes waiting for stdout: they change
	 * with every line (docs/decisions.md says what a restore loses). */
	size_t pending = writer->for_restore ? 0 : sink->end - sink->start;
	json_object_set_new(root, "stdout",
			    json_pack("{s:o,s:i}", "pending",
				      handover_blob(writer, sink->buffer + sink->start, pending),
				      "saved_flags", sink->saved_flags));
	json_object_set_new(
	    root, "control",
	    writer->for_restore
		? control_server_listener_write(writer, supervisor->control)
		: control_server_handover_write(writer, supervisor->control, requester));
	/* The HTTP endpoint's listening socket: a probe that connects during
	 * the exec waits in its backlog. */
	json_object_set_new(
	    root, "http",
	    json_pack("{s:o}", "fd",
		      handover_fd(writer, http_server_listening_fd(supervisor->http))));
	/* The inotify fd of `watch:`, with its watches and the events not
	 * read yet: a new one could fail, a task having taken the last
	 * instance of the user's (fs.inotify.max_user_instances). */
	json_object_set_new(
	    root, "watch",
	    json_pack("{s:o}", "fd", handover_fd(writer, supervisor->watches.dirs.fd)));
	/* corral's own parent (systemd's Type=notify): its variables were
	 * taken out of the environment at the start; the new corral is
	 * given them again, and goes on with the watchdog's pings. */
	const struct parent_notify *parent = &supervisor->parent;
	if (parent->enabled)
		json_object_set_new(root, "parent",
				    json_pack("{s:s,s:I}", "notify_socket", parent->socket_name,
					      "watchdog_usec",
					      (json_int_t)parent->watchdog_interval_ms * 2000));
}
