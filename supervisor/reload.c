/* Reload: a config loaded again and its difference applied while
 * everything else runs (docs/cli.md, "corral reload").
 *
 * 1. Load. Any error changes nothing.
 * 2. Plan: each group added, removed or kept; each task of a kept group
 *    added, removed, replaced (needs a new process), updated in place or
 *    unchanged (config_diff.h). Keys that only take effect at corral's
 *    start refuse the whole reload.
 * 3. Make what is new (groups, tasks). A failure there undoes it and
 *    refuses the reload: all or nothing.
 * 4. Apply, which cannot fail: tasks updated in place, replaced ones
 *    restarted (or rebuilt between runs, task_reload.h), removed ones
 *    stopped and freed once dead (reload_collect), links made again. */
#include "supervisor/reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "config/config_diff.h"
#include "config/config_load.h"
#include "isolation/task_isolation.h"
#include "isolation/task_plan.h"
#include "supervisor/tasks/task_reload.h"

enum step_action { STEP_KEEP, STEP_UPDATE, STEP_REPLACE, STEP_ADD, STEP_REMOVE };

static const char *const action_names[] = {
    [STEP_KEEP] = "unchanged", [STEP_UPDATE] = "updated", [STEP_REPLACE] = "replaced",
    [STEP_ADD] = "added",      [STEP_REMOVE] = "removed",
};

struct task_step {
	enum step_action action;
	struct group *group;                   /* the runtime group it is in (or will be) */
	struct task *task;                     /* NULL for STEP_ADD until made */
	struct task_config *definition;        /* in the new config; NULL for STEP_REMOVE */
	struct group_config *group_definition; /* its group's, in the new config */
	struct task_diff diff;
	char warning[256]; /* an in-place change the kernel refused */
};

struct group_step {
	enum step_action action; /* KEEP, UPDATE (its own keys), ADD, REMOVE */
	struct group *group;
	struct group_config *definition;
};

struct plan {
	struct config *config;
	struct group_step *groups;
	size_t group_count;
	struct task_step *tasks;
	size_t task_count;
	char refusal[512];
};

/* ---- step 2: the plan ---- */

static struct group *find_group(struct supervisor *supervisor, const char *name)
{
	for (size_t i = 0; i < supervisor->group_count; i++)
		if (strcmp(supervisor->groups[i]->config->name, name) == 0)
			return supervisor->groups[i];
	return NULL;
}

static struct task *find_task(struct group *group, const char *name)
{
	for (size_t i = 0; i < group->task_count; i++)
		if (strcmp(group->tasks[i]->config->name, name) == 0)
			return group->tasks[i];
	return NULL;
}

static struct task_step *add_task_step(struct plan *plan, enum step_action action,
				       struct group *group, struct task *task,
				       struct task_config *definition,
				       struct group_config *group_definition)
{
	struct task_step *step = &plan->tasks[plan->task_count++];
	*step = (struct task_step){.action = action,
				   .group = group,
				   .task = task,
				   .definition = definition,
				   .group_definition = group_definition};
	return step;
}

/* What a new process needs that corral can check now rather than at its
 * start: the user and groups exist, the isolation can be built. */
static int check_startable(const struct task_config *definition, const char *group_name,
			   char *error, size_t error_size)
{
	extern char **environ;
	struct task_plan task_plan = {0};
	struct task_isolation isolation = {0};
	char why[256];
	int result =
	    task_plan_build(&task_plan, definition, group_name, environ, NULL, why, sizeof(why));
	if (result == 0)
		result = task_isolation_build(&isolation, definition, &task_plan, why, sizeof(why));
	if (result < 0)
		snprintf(error, error_size, "%s: %s", definition->full_name, why);
	task_isolation_free(&isolation);
	task_plan_free(&task_plan);
	return result;
}

static int plan_group_tasks(struct plan *plan, struct group *group, struct group_config *definition)
{
	for (size_t t = 0; t < definition->task_count; t++) {
		struct task_config *task_definition = &definition->tasks[t];
		struct task *task = find_task(group, task_definition->name);
		if (task && task->removed) {
			snprintf(plan->refusal, sizeof(plan->refusal),
				 "%s was removed by an earlier reload and is still stopping: "
				 "reload again once it is dead",
				 task_definition->full_name);
			return -1;
		}
		if (!task) {
			add_task_step(plan, STEP_ADD, group, NULL, task_definition, definition);
			continue;
		}
		struct task_diff diff;
		task_config_diff(task->config, task_definition, &diff);
		enum step_action action = diff.change == TASK_CHANGE_NONE       ? STEP_KEEP
					  : diff.change == TASK_CHANGE_IN_PLACE ? STEP_UPDATE
										: STEP_REPLACE;
		add_task_step(plan, action, group, task, task_definition, definition)->diff = diff;
	}
	for (size_t i = 0; i < group->task_count; i++) {
		struct task *task = group->tasks[i];
		bool kept = false;
		for (size_t t = 0; t < definition->task_count && !kept; t++)
			kept = strcmp(definition->tasks[t].name, task->config->name) == 0;
		if (!kept && !task->removed)
			add_task_step(plan, STEP_REMOVE, group, task, NULL, definition);
	}
	return 0;
}

static int make_plan(struct supervisor *supervisor, struct config *config, struct plan *plan)
{
	size_t task_total = 0;
	for (size_t g = 0; g < config->group_count; g++)
		task_total += config->groups[g].task_count;
	for (size_t g = 0; g < supervisor->group_count; g++)
		task_total += supervisor->groups[g]->task_count;
	*plan = (struct plan){.config = config};
	plan->groups =
	    xcalloc(config->group_count + supervisor->group_count + 1, sizeof(*plan->groups));
	plan->tasks = xcalloc(task_total + 1, sizeof(*plan->tasks));

	const char *fixed = config_diff_fixed_global(supervisor->config, config);
	if (fixed) {
		snprintf(plan->refusal, sizeof(plan->refusal),
			 "%s changed: it takes effect only when corral starts; nothing was "
			 "applied",
			 fixed);
		return -1;
	}
	for (size_t g = 0; g < config->group_count; g++) {
		struct group_config *definition = &config->groups[g];
		struct group *group = find_group(supervisor, definition->name);
		struct group_step *step = &plan->groups[plan->group_count++];
		*step = (struct group_step){STEP_ADD, group, definition};
		if (!group)
			continue;
		if (group->removed) {
			snprintf(plan->refusal, sizeof(plan->refusal),
				 "group %s was removed by an earlier reload and is still stopping: "
				 "reload again once it has finished",
				 definition->name);
			return -1;
		}
		fixed = config_diff_fixed_group_key(group->config, definition);
		if (fixed) {
			snprintf(plan->refusal, sizeof(plan->refusal),
				 "group %s: %s changed: it takes effect only when the group is "
				 "made; remove the group in one reload and add it back in the "
				 "next, or restart corral",
				 definition->name, fixed);
			return -1;
		}
		bool own_keys_changed = memcmp(&group->config->on_failure, &definition->on_failure,
					       sizeof(definition->on_failure)) != 0;
		step->action = own_keys_changed ? STEP_UPDATE : STEP_KEEP;
		if (plan_group_tasks(plan, group, definition) < 0)
			return -1;
	}
	for (size_t i = 0; i < supervisor->group_count; i++) {
		struct group *group = supervisor->groups[i];
		bool kept = false;
		for (size_t g = 0; g < config->group_count && !kept; g++)
			kept = strcmp(config->groups[g].name, group->config->name) == 0;
		if (!kept && !group->removed)
			plan->groups[plan->group_count++] =
			    (struct group_step){STEP_REMOVE, group, NULL};
	}
	for (size_t i = 0; i < plan->task_count; i++) {
		struct task_step *step = &plan->tasks[i];
		if ((step->action == STEP_ADD || step->action == STEP_REPLACE) &&
		    check_startable(step->definition, step->group->config->name, plan->refusal,
				    sizeof(plan->refusal)) < 0)
			return -1;
	}
	for (size_t g = 0; g < plan->group_count; g++) {
		struct group_step *step = &plan->groups[g];
		if (step->action != STEP_ADD)
			continue;
		for (size_t t = 0; t < step->definition->task_count; t++)
			if (check_startable(&step->definition->tasks[t], step->definition->name,
					    plan->refusal, sizeof(plan->refusal)) < 0)
				return -1;
	}
	return 0;
}

static void free_plan(struct plan *plan)
{
	free(plan->groups);
	free(plan->tasks);
}

/* ---- the plan as JSON: the reply, and --dry-run ---- */

static json_t *plan_json(const struct plan *plan)
{
	json_t *groups = json_array(), *tasks = json_array();
	size_t unchanged = 0;
	for (size_t i = 0; i < plan->group_count; i++) {
		const struct group_step *step = &plan->groups[i];
		if (step->action == STEP_KEEP)
			continue;
		json_t *item = json_object();
		json_object_set_new(item, "group",
				    json_string(step->definition ? step->definition->name
								 : step->group->config->name));
		json_object_set_new(item, "action", json_string(action_names[step->action]));
		if (step->action == STEP_UPDATE)
			json_object_set_new(item, "fields", json_pack("[s]", "on_failure"));
		json_array_append_new(groups, item);
	}
	for (size_t i = 0; i < plan->group_count; i++) {
		const struct group_step *step = &plan->groups[i];
		if (step->action != STEP_ADD)
			continue;
		for (size_t t = 0; t < step->definition->task_count; t++)
			json_array_append_new(tasks, json_pack("{s:s, s:s}", "task",
							       step->definition->tasks[t].full_name,
							       "action", "added"));
	}
	for (size_t i = 0; i < plan->task_count; i++) {
		const struct task_step *step = &plan->tasks[i];
		if (step->action == STEP_KEEP) {
			unchanged++;
			continue;
		}
		json_t *item = json_object();
		const char *name =
		    step->definition ? step->definition->full_name : step->task->config->full_name;
		json_object_set_new(item, "task", json_string(name));
		json_object_set_new(item, "action", json_string(action_names[step->action]));
		if (step->diff.field_count) {
			json_t *fields = json_array();
			for (size_t f = 0; f < step->diff.field_count; f++)
				json_array_append_new(fields, json_string(step->diff.fields[f]));
			json_object_set_new(item, "fields", fields);
		}
		if (step->warning[0])
			json_object_set_new(item, "warning", json_string(step->warning));
		json_array_append_new(tasks, item);
	}
	json_t *object = json_object();
	json_object_set_new(object, "groups", groups);
	json_object_set_new(object, "tasks", tasks);
	json_object_set_new(object, "unchanged", json_integer((json_int_t)unchanged));
	return object;
}

/* ---- step 3: what is new ---- */

static void free_made(struct plan *plan)
{
	for (size_t i = 0; i < plan->group_count; i++) {
		struct group_step *step = &plan->groups[i];
		if (step->action == STEP_ADD && step->group) {
			group_free(step->group);
			free(step->group);
			step->group = NULL;
		}
	}
	for (size_t i = 0; i < plan->task_count; i++) {
		struct task_step *step = &plan->tasks[i];
		if (step->action == STEP_ADD && step->task) {
			task_free(step->task);
			free(step->task);
			step->task = NULL;
		}
	}
}

static int make_new(struct supervisor *supervisor, struct plan *plan)
{
	for (size_t i = 0; i < plan->group_count; i++) {
		struct group_step *step = &plan->groups[i];
		if (step->action != STEP_ADD)
			continue;
		step->group = xmalloc(sizeof(*step->group));
		if (group_init(step->group, step->definition, &supervisor->services, plan->refusal,
			       sizeof(plan->refusal)) < 0) {
			free_made(plan);
			return -1;
		}
	}
	for (size_t i = 0; i < plan->task_count; i++) {
		struct task_step *step = &plan->tasks[i];
		if (step->action != STEP_ADD)
			continue;
		/* A task finds its place (its address on a bridge) in its
		 * group's definition: the new one, for the time of the init. */
		struct group *group = step->group;
		const struct group_config *current = group->config;
		group->config = step->group_definition;
		step->task = xmalloc(sizeof(*step->task));
		char why[256];
		int result = task_init(step->task, step->definition, group, group->config->name,
				       &supervisor->services, why, sizeof(why));
		group->config = current;
		if (result < 0) {
			snprintf(plan->refusal, sizeof(plan->refusal), "%s: %s",
				 step->definition->full_name, why);
			free_made(plan);
			return -1;
		}
	}
	return 0;
}

/* ---- step 4: apply ---- */

static void note_task(struct supervisor *supervisor, const char *full_name,
		      enum task_event_type type, const char *message)
{
	event_log_task(&supervisor->events, full_name, task_event_type_name(type), message, 0);
}

static void describe_fields(const struct task_diff *diff, char *buffer, size_t size)
{
	size_t used = 0;
	buffer[0] = '\0';
	for (size_t i = 0; i < diff->field_count && used < size; i++)
		used += (size_t)snprintf(buffer + used, size - used, "%s%s", i ? ", " : "",
					 diff->fields[i]);
}

static void apply_task_step(struct supervisor *supervisor, struct task_step *step,
			    const struct reload_options *options, uint64_t now_ms)
{
	struct task *task = step->task;
	char fields[160], message[TASK_EVENT_MESSAGE_MAX];
	describe_fields(&step->diff, fields, sizeof(fields));
	switch (step->action) {
	case STEP_KEEP:
	case STEP_ADD:
		return; /* an added task said "received" when it was made */
	case STEP_UPDATE:
		if (task_update_in_place(task, step->definition, &step->diff, step->warning,
					 sizeof(step->warning)) < 0) {
			log_message("%s: reload: %s; the old limits stay", task->config->full_name,
				    step->warning);
			snprintf(message, sizeof(message), "not updated: %.140s", step->warning);
		} else {
			snprintf(message, sizeof(message), "updated in place by a reload: %.120s",
				 fields);
		}
		note_task(supervisor, task->config->full_name, TASK_EVENT_UPDATED, message);
		return;
	case STEP_REPLACE:
		snprintf(message, sizeof(message), "replaced by a reload: %.120s changed", fields);
		note_task(supervisor, task->config->full_name, TASK_EVENT_REPLACED, message);
		task->next_config = step->definition;
		if (task->runner.state == TASK_RUNNING || task->runner.state == TASK_STARTING) {
			group_restart_task(task->group, task, now_ms);
		} else if (task->runner.state == TASK_DEAD && options->rerun_completed &&
			   task_can_take_next_config(task)) {
			task_take_next_config(task);
			if (group_force_restart_task(task->group, task, now_ms) !=
			    RUNNER_REQUEST_DONE)
				snprintf(step->warning, sizeof(step->warning),
					 "not run again: its stage gate cannot open again before "
					 "its group restarts (corral restart --all %s)",
					 task->group->config->name);
		}
		return;
	case STEP_REMOVE:
		note_task(supervisor, task->config->full_name, TASK_EVENT_REMOVED,
			  "removed from the config by a reload: it stops");
		task->removed = true;
		if (task->runner.state != TASK_DEAD)
			runner_stop(&task->runner, RUNNER_STOP_FOR_GOOD, "removed by a reload",
				    now_ms);
		return;
	}
}

/* The group's tasks as the new definition orders them, then the ones
 * still stopping after a removal. */
static void order_group_tasks(struct group *group, const struct group_config *definition,
			      struct plan *plan)
{
	size_t capacity = definition->task_count + group->task_count;
	struct task **tasks = xcalloc(capacity + 1, sizeof(*tasks));
	size_t count = 0;
	for (size_t t = 0; t < definition->task_count; t++)
		for (size_t i = 0; i < plan->task_count; i++) {
			struct task_step *step = &plan->tasks[i];
			if (step->group == group && step->definition == &definition->tasks[t])
				tasks[count++] = step->task;
		}
	for (size_t i = 0; i < group->task_count; i++)
		if (group->tasks[i]->removed)
			tasks[count++] = group->tasks[i];
	free(group->tasks);
	group->tasks = tasks;
	group->task_count = count;
	group->coordinator_views =
	    xreallocarray(group->coordinator_views, count + 1, sizeof(*group->coordinator_views));
}

static void remember_group_name(struct supervisor *supervisor, const char *name)
{
	for (size_t i = 0; i < supervisor->group_name_count; i++)
		if (strcmp(supervisor->group_names[i], name) == 0)
			return;
	supervisor->group_names =
	    xreallocarray(supervisor->group_names, supervisor->group_name_count + 1,
			  sizeof(*supervisor->group_names));
	supervisor->group_names[supervisor->group_name_count++] = xstrdup(name);
	supervisor->cgroups.group_names = (const char *const *)supervisor->group_names;
	supervisor->cgroups.group_count = supervisor->group_name_count;
}

static void apply(struct supervisor *supervisor, struct plan *plan,
		  const struct reload_options *options)
{
	uint64_t now = loop_now_ms();
	/* Removed tasks first: they are marked before the groups' task lists
	 * are ordered again. */
	for (size_t i = 0; i < plan->task_count; i++)
		if (plan->tasks[i].action == STEP_REMOVE)
			apply_task_step(supervisor, &plan->tasks[i], options, now);
	for (size_t i = 0; i < plan->task_count; i++)
		if (plan->tasks[i].action == STEP_ADD)
			runner_received(&plan->tasks[i].task->runner);

	size_t capacity = plan->group_count + supervisor->group_count;
	struct group **groups = xcalloc(capacity + 1, sizeof(*groups));
	size_t count = 0;
	for (size_t i = 0; i < plan->group_count; i++) {
		struct group_step *step = &plan->groups[i];
		if (step->action == STEP_REMOVE)
			continue;
		if (step->action != STEP_ADD) {
			order_group_tasks(step->group, step->definition, plan);
			step->group->config = step->definition;
			group_mark_dirty(step->group);
		}
		remember_group_name(supervisor, step->definition->name);
		groups[count++] = step->group;
	}
	for (size_t i = 0; i < supervisor->group_count; i++)
		if (supervisor->groups[i]->removed)
			groups[count++] = supervisor->groups[i];
	for (size_t i = 0; i < plan->group_count; i++)
		if (plan->groups[i].action == STEP_REMOVE) {
			plan->groups[i].group->removed = true;
			groups[count++] = plan->groups[i].group;
		}
	free(supervisor->groups);
	supervisor->groups = groups;
	supervisor->group_count = count;
	supervisor->config = plan->config;
	supervisor_apply_settings(supervisor);
	task_dependencies_relink(supervisor->groups, supervisor->group_count, plan->config);
	supervisor_groups_changed(supervisor);

	for (size_t i = 0; i < plan->task_count; i++)
		if (plan->tasks[i].action != STEP_REMOVE)
			apply_task_step(supervisor, &plan->tasks[i], options, now);
	for (size_t i = 0; i < plan->group_count; i++)
		if (plan->groups[i].action == STEP_REMOVE)
			group_stop(plan->groups[i].group, "removed from the config by a reload",
				   now);
}

/* ---- the request ---- */

static json_t *refused(struct supervisor *supervisor, const char *path, const char *reason,
		       json_t *errors)
{
	char message[768];
	snprintf(message, sizeof(message), "reload of %s refused: %s", path, reason);
	event_log_corral(&supervisor->events, corral_event_type_name(CORRAL_EVENT_RELOAD_REFUSED),
			 message);
	/* The config's errors also go to corral's own log, however the reload
	 * came (SIGHUP or `corral reload`): what an operator finds later. */
	for (size_t i = 0; i < json_array_size(errors); i++)
		log_message("%s", json_string_value(json_array_get(errors, i)));
	json_t *reply = json_object();
	json_object_set_new(reply, "ok", json_false());
	json_object_set_new(reply, "error", json_string(message));
	if (errors)
		json_object_set_new(reply, "errors", errors);
	return reply;
}

json_t *reload_run(struct supervisor *supervisor, const struct reload_options *options)
{
	/* A path given, or every file and directory the running config came
	 * from. */
	const struct config *current = supervisor->config;
	const char *const *sources =
	    options->path ? &options->path : (const char *const *)current->sources;
	size_t source_count = options->path ? 1 : current->source_count;
	if (!source_count) {
		sources = (const char *const *)&current->path;
		source_count = 1;
	}
	const char *path = sources[0];
	struct config_diagnostics diagnostics = {0};
	struct config *config = config_load_paths(sources, source_count, &diagnostics);
	if (!config) {
		json_t *errors = json_array();
		for (size_t i = 0; i < diagnostics.count; i++) {
			char line[1024];
			config_diagnostic_format(&diagnostics, i, path, line, sizeof(line));
			json_array_append_new(errors, json_string(line));
		}
		char reason[64];
		snprintf(reason, sizeof(reason), "%zu error%s in the config", diagnostics.count,
			 diagnostics.count == 1 ? "" : "s");
		config_diagnostics_free(&diagnostics);
		return refused(supervisor, path, reason, errors);
	}

	struct plan plan;
	char message[600];
	if (make_plan(supervisor, config, &plan) == 0 && !options->dry_run) {
		/* Before the new tasks say they are received. */
		snprintf(message, sizeof(message), "reload of %s", path);
		event_log_corral(&supervisor->events,
				 corral_event_type_name(CORRAL_EVENT_RELOAD_STARTED), message);
		make_new(supervisor, &plan);
	}
	if (plan.refusal[0]) {
		json_t *reply = refused(supervisor, path, plan.refusal, NULL);
		free_plan(&plan);
		config_free(config);
		return reply;
	}
	json_t *reply = json_object();
	json_object_set_new(reply, "ok", json_true());
	json_object_set_new(reply, "path", json_string(path));
	json_object_set_new(reply, "dry_run", json_boolean(options->dry_run));
	if (options->dry_run) {
		json_object_set_new(reply, "plan", plan_json(&plan));
		free_plan(&plan);
		config_free(config);
		return reply;
	}
	apply(supervisor, &plan, options);
	supervisor->generations =
	    xreallocarray(supervisor->generations, supervisor->generation_count + 1,
			  sizeof(*supervisor->generations));
	supervisor->generations[supervisor->generation_count++] =
	    (struct config_generation){config, true};
	json_t *summary = plan_json(&plan);
	json_object_set_new(reply, "plan", summary);
	snprintf(message, sizeof(message), "reload of %s applied: %zu task change%s", path,
		 json_array_size(json_object_get(summary, "tasks")),
		 json_array_size(json_object_get(summary, "tasks")) == 1 ? "" : "s");
	event_log_corral(&supervisor->events, corral_event_type_name(CORRAL_EVENT_RELOAD_FINISHED),
			 message);
	free_plan(&plan);
	return reply;
}

/* ---- after each settle: what a reload left to free ---- */

static bool task_is_gone(const struct task *task)
{
	return task->removed && task->runner.state == TASK_DEAD && !task_has_process(task) &&
	       !task_hooks_busy(task->hooks);
}

static bool free_removed_tasks(struct supervisor *supervisor, struct group *group)
{
	size_t kept = 0;
	bool freed = false;
	for (size_t i = 0; i < group->task_count; i++) {
		struct task *task = group->tasks[i];
		if (!task_is_gone(task)) {
			group->tasks[kept++] = task;
			continue;
		}
		if (supervisor->control)
			control_server_forget(supervisor->control, CONTROL_FOLLOW_LOGS, task);
		exec_sessions_forget_task(&supervisor->exec_sessions, task);
		task_free(task);
		free(task);
		freed = true;
	}
	group->task_count = kept;
	return freed;
}

static bool group_is_gone(const struct group *group)
{
	if (!group->removed || !group->finished || group_has_processes(group))
		return false;
	for (size_t i = 0; i < group->task_count; i++)
		if (task_hooks_busy(group->tasks[i]->hooks))
			return false;
	return true;
}

static bool in_config(const struct config *config, const void *pointer)
{
	for (size_t g = 0; g < config->group_count; g++) {
		const struct group_config *group = &config->groups[g];
		if (pointer == group)
			return true;
		if ((const void *)group->tasks <= pointer &&
		    pointer < (const void *)(group->tasks + group->task_count))
			return true;
	}
	return false;
}

static bool generation_in_use(const struct supervisor *supervisor, const struct config *config)
{
	if (config == supervisor->config)
		return true;
	for (size_t g = 0; g < supervisor->group_count; g++) {
		const struct group *group = supervisor->groups[g];
		if (in_config(config, group->config))
			return true;
		for (size_t t = 0; t < group->task_count; t++) {
			const struct task *task = group->tasks[t];
			if (in_config(config, task->config) ||
			    (task->next_config && in_config(config, task->next_config)))
				return true;
		}
	}
	return false;
}

static void free_unused_generations(struct supervisor *supervisor)
{
	size_t kept = 0;
	for (size_t i = 0; i < supervisor->generation_count; i++) {
		struct config_generation *generation = &supervisor->generations[i];
		if (generation->owned && !generation_in_use(supervisor, generation->config))
			config_free(generation->config);
		else
			supervisor->generations[kept++] = *generation;
	}
	supervisor->generation_count = kept;
}

void reload_collect(struct supervisor *supervisor)
{
	if (!supervisor->generation_count)
		return; /* no reload yet: nothing can be waiting */
	bool changed = false;
	size_t kept = 0;
	for (size_t i = 0; i < supervisor->group_count; i++) {
		struct group *group = supervisor->groups[i];
		changed |= free_removed_tasks(supervisor, group);
		if (!group_is_gone(group)) {
			supervisor->groups[kept++] = group;
			continue;
		}
		for (size_t t = 0; t < group->task_count; t++) {
			exec_sessions_forget_task(&supervisor->exec_sessions, group->tasks[t]);
			if (supervisor->control)
				control_server_forget(supervisor->control, CONTROL_FOLLOW_LOGS,
						      group->tasks[t]);
		}
		if (supervisor->control)
			control_server_forget(supervisor->control, CONTROL_FOLLOW_LOGS_GROUP,
					      group);
		group_free(group);
		free(group);
		changed = true;
	}
	supervisor->group_count = kept;
	if (changed) {
		task_dependencies_relink(supervisor->groups, supervisor->group_count,
					 supervisor->config);
		supervisor_groups_changed(supervisor);
	}
	free_unused_generations(supervisor);
}

void reload_free_generations(struct supervisor *supervisor)
{
	for (size_t i = 0; i < supervisor->generation_count; i++)
		if (supervisor->generations[i].owned)
			config_free(supervisor->generations[i].config);
	free(supervisor->generations);
	supervisor->generations = NULL;
	supervisor->generation_count = 0;
}
