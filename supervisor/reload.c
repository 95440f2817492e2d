/* Reload: a config loaded again and its difference applied while
 * everything else runs (docs/cli.md, "corral reload").
 *
 * 1. Load. Any error changes nothing.
 * 2. Plan (supervisor/lifecycle/reload_plan.h, pure): what runs and the
 *    new config in, each group and task added, removed, replaced, updated
 *    in place or kept out, or a refusal. Then what only the machine can
 *    say: the users and isolation of each task that will start.
 * 3. Make what is new (groups, tasks). A failure there undoes it and
 *    refuses the reload: all or nothing.
 * 4. Apply, which cannot fail: tasks updated in place, replaced ones
 *    restarted (or rebuilt between runs, task_reload.h), removed ones
 *    stopped and freed once dead (reload_collect), links made again. */
#include "supervisor/reload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "config/load/config_load.h"
#include "config/model/config_diff.h"
#include "isolation/task_isolation.h"
#include "isolation/task_plan.h"
#include "supervisor/lifecycle/reload_plan.h"
#include "supervisor/tasks/task_reload.h"

/* A task step of the plan bound to the runtime objects it acts on. */
struct bound_task {
	struct group *group; /* the runtime group it is in */
	struct task *task;   /* NULL for an added one until made */
	char warning[256];   /* an in-place change the kernel refused */
	bool refused;        /* ... and which limit, in the reply's "refused" */
	struct limit_refusal refusal;
	bool rolled; /* replaced by a rolling restart, begun once all is applied */
};

/* The plan and what it acts on: the runtime group of each group step
 * (made for an added one) and the bound task of each task step. */
struct reload {
	struct config *config;
	struct reload_plan plan;
	struct group **groups;
	struct bound_task *tasks;
	bool scale; /* corral scale's: instances added and removed, nothing else */
};

/* ---- step 2: the plan ---- */

/* What runs, as the plan reads it: the supervisor's groups and each
 * group's tasks, in their order, so that a step's indexes name them. */
static void describe_running(const struct supervisor *supervisor, struct reload_running *running)
{
	*running = (struct reload_running){.config = supervisor->config,
					   .group_count = supervisor->group_count};
	running->groups = xcalloc(supervisor->group_count + 1, sizeof(*running->groups));
	for (size_t g = 0; g < supervisor->group_count; g++) {
		const struct group *group = supervisor->groups[g];
		struct reload_running_group *view = &running->groups[g];
		*view = (struct reload_running_group){.definition = group->config,
						      .removed = group->removed,
						      .task_count = group->task_count};
		view->tasks = xcalloc(group->task_count + 1, sizeof(*view->tasks));
		for (size_t t = 0; t < group->task_count; t++)
			view->tasks[t] = (struct reload_running_task){group->tasks[t]->config,
								      group->tasks[t]->removed};
	}
}

static void bind_plan(struct supervisor *supervisor, struct reload *reload)
{
	const struct reload_plan *plan = &reload->plan;
	reload->groups = xcalloc(plan->group_count + 1, sizeof(*reload->groups));
	reload->tasks = xcalloc(plan->task_count + 1, sizeof(*reload->tasks));
	for (size_t i = 0; i < plan->group_count; i++)
		if (plan->groups[i].running != RELOAD_NOT_RUNNING)
			reload->groups[i] = supervisor->groups[plan->groups[i].running];
	for (size_t i = 0; i < plan->task_count; i++) {
		const struct reload_task_step *step = &plan->tasks[i];
		struct group *group = supervisor->groups[step->running_group];
		reload->tasks[i].group = group;
		if (step->running_task != RELOAD_NOT_RUNNING)
			reload->tasks[i].task = group->tasks[step->running_task];
	}
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

/* Every task that will start: added or replaced in a kept group, and
 * each task of an added group. */
static int check_plan_startable(struct reload_plan *plan)
{
	for (size_t i = 0; i < plan->task_count; i++) {
		const struct reload_task_step *step = &plan->tasks[i];
		if ((step->action == RELOAD_ADD || step->action == RELOAD_REPLACE) &&
		    check_startable(step->definition, step->group_definition->name, plan->refusal,
				    sizeof(plan->refusal)) < 0)
			return -EINVAL; /* refused: plan->refusal says why */
	}
	for (size_t g = 0; g < plan->group_count; g++) {
		const struct reload_group_step *step = &plan->groups[g];
		if (step->action != RELOAD_ADD)
			continue;
		for (size_t t = 0; t < step->definition->task_count; t++)
			if (check_startable(&step->definition->tasks[t], step->definition->name,
					    plan->refusal, sizeof(plan->refusal)) < 0)
				return -EINVAL; /* refused: plan->refusal says why */
	}
	return 0;
}

/* corral scale's plan: instances added and removed, and nothing else.
 * Its config copies the running one's definitions, which may differ from
 * what runs (a reload's in-place changes stay in the running task's own
 * definition, and dependents lose their waits for the instances left
 * out): those tasks are kept as they run. */
static void keep_all_but_instances(struct reload_plan *plan, const struct bound_task *tasks)
{
	for (size_t i = 0; i < plan->group_count; i++)
		if (plan->groups[i].action == RELOAD_UPDATE)
			plan->groups[i].action = RELOAD_KEEP;
	for (size_t i = 0; i < plan->task_count; i++) {
		struct reload_task_step *step = &plan->tasks[i];
		bool instance = step->action == RELOAD_ADD
				    ? step->definition->instance_of != NULL
				    : step->action == RELOAD_REMOVE &&
					  tasks[i].task->config->instance_of != NULL;
		if (!instance) {
			step->action = RELOAD_KEEP;
			step->diff = (struct task_diff){0};
		}
	}
}

static int make_plan(struct supervisor *supervisor, struct config *config, struct reload *reload,
		     bool scale)
{
	struct reload_running running;
	describe_running(supervisor, &running);
	*reload = (struct reload){.config = config, .scale = scale};
	int result = reload_plan_make(&running, config, &reload->plan);
	reload_running_free(&running);
	if (result < 0)
		return -EINVAL; /* refused: plan->refusal says why */
	bind_plan(supervisor, reload);
	if (scale)
		keep_all_but_instances(&reload->plan, reload->tasks);
	return check_plan_startable(&reload->plan);
}

static void free_reload(struct reload *reload)
{
	reload_plan_free(&reload->plan);
	free(reload->groups);
	free(reload->tasks);
}

/* A running instance the step replaces, of a task with `update:
 * {strategy: rolling}`: a roll restarts it in its turn (begin_rolls). */
static bool replaced_by_a_roll(const struct reload_task_step *step, const struct task *task)
{
	return step->action == RELOAD_REPLACE && step->definition->instance_of &&
	       step->definition->update.strategy == UPDATE_ROLLING &&
	       (task->runner.state == TASK_RUNNING || task->runner.state == TASK_STARTING);
}

/* ---- the plan as JSON: the reply, and --dry-run ---- */

static json_t *plan_json(const struct reload *reload)
{
	const struct reload_plan *plan = &reload->plan;
	json_t *groups = json_array(), *tasks = json_array();
	size_t unchanged = 0;
	for (size_t i = 0; i < plan->group_count; i++) {
		const struct reload_group_step *step = &plan->groups[i];
		if (step->action == RELOAD_KEEP)
			continue;
		json_t *item = json_object();
		json_object_set_new(item, "group",
				    json_string(step->definition
						    ? step->definition->name
						    : reload->groups[i]->config->name));
		json_object_set_new(item, "action", json_string(reload_action_name(step->action)));
		if (step->action == RELOAD_UPDATE)
			json_object_set_new(item, "fields", json_pack("[s]", "on_failure"));
		json_array_append_new(groups, item);
	}
	for (size_t i = 0; i < plan->group_count; i++) {
		const struct reload_group_step *step = &plan->groups[i];
		if (step->action != RELOAD_ADD)
			continue;
		for (size_t t = 0; t < step->definition->task_count; t++)
			json_array_append_new(tasks, json_pack("{s:s, s:s}", "task",
							       step->definition->tasks[t].full_name,
							       "action", "added"));
	}
	for (size_t i = 0; i < plan->task_count; i++) {
		const struct reload_task_step *step = &plan->tasks[i];
		const struct bound_task *bound = &reload->tasks[i];
		if (step->action == RELOAD_KEEP) {
			unchanged++;
			continue;
		}
		json_t *item = json_object();
		const char *name =
		    step->definition ? step->definition->full_name : bound->task->config->full_name;
		json_object_set_new(item, "task", json_string(name));
		json_object_set_new(item, "action", json_string(reload_action_name(step->action)));
		if (step->diff.field_count) {
			json_t *fields = json_array();
			for (size_t f = 0; f < step->diff.field_count; f++)
				json_array_append_new(fields, json_string(step->diff.fields[f]));
			json_object_set_new(item, "fields", fields);
		}
		if (bound->warning[0])
			json_object_set_new(item, "warning", json_string(bound->warning));
		if (bound->task && replaced_by_a_roll(step, bound->task))
			json_object_set_new(item, "rolling", json_true());
		json_array_append_new(tasks, item);
	}
	json_t *object = json_object();
	json_object_set_new(object, "groups", groups);
	json_object_set_new(object, "tasks", tasks);
	json_object_set_new(object, "unchanged", json_integer((json_int_t)unchanged));
	return object;
}

/* The changes the kernel refused, [{"task", "field", "reason"}]: the
 * reload applied the rest, and `corral reload` says it was in part. */
static json_t *refused_json(const struct reload *reload)
{
	json_t *refused = json_array();
	for (size_t i = 0; i < reload->plan.task_count; i++) {
		const struct bound_task *bound = &reload->tasks[i];
		if (!bound->refused)
			continue;
		char field[64];
		snprintf(field, sizeof(field), "resources%s%s",
			 bound->refusal.resource[0] ? "." : "", bound->refusal.resource);
		json_array_append_new(refused, json_pack("{s:s, s:s, s:s}", "task",
							 bound->task->config->full_name, "field",
							 field, "reason", bound->refusal.reason));
	}
	return refused;
}

/* ---- step 3: what is new ---- */

static void free_made(struct reload *reload)
{
	for (size_t i = 0; i < reload->plan.group_count; i++) {
		if (reload->plan.groups[i].action == RELOAD_ADD && reload->groups[i]) {
			group_free(reload->groups[i]);
			free(reload->groups[i]);
			reload->groups[i] = NULL;
		}
	}
	for (size_t i = 0; i < reload->plan.task_count; i++) {
		struct bound_task *bound = &reload->tasks[i];
		if (reload->plan.tasks[i].action == RELOAD_ADD && bound->task) {
			task_free(bound->task);
			free(bound->task);
			bound->task = NULL;
		}
	}
}

static int make_new(struct supervisor *supervisor, struct reload *reload)
{
	struct reload_plan *plan = &reload->plan;
	for (size_t i = 0; i < plan->group_count; i++) {
		const struct reload_group_step *step = &plan->groups[i];
		if (step->action != RELOAD_ADD)
			continue;
		reload->groups[i] = xmalloc(sizeof(*reload->groups[i]));
		if (group_init(reload->groups[i], step->definition, &supervisor->services,
			       plan->refusal, sizeof(plan->refusal)) < 0) {
			free_made(reload);
			return -EINVAL; /* refused: plan->refusal says why */
		}
	}
	for (size_t i = 0; i < plan->task_count; i++) {
		const struct reload_task_step *step = &plan->tasks[i];
		struct bound_task *bound = &reload->tasks[i];
		if (step->action != RELOAD_ADD)
			continue;
		/* A task finds its place (its address on a bridge) in its
		 * group's definition: the new one, for the time of the init. */
		struct group *group = bound->group;
		const struct group_config *current = group->config;
		group->config = step->group_definition;
		bound->task = xmalloc(sizeof(*bound->task));
		char error[256];
		int result = task_init(bound->task, step->definition, group, group->config->name,
				       &supervisor->services, error, sizeof(error));
		group->config = current;
		if (result < 0) {
			snprintf(plan->refusal, sizeof(plan->refusal), "%s: %s",
				 step->definition->full_name, error);
			free_made(reload);
			return -EINVAL; /* refused: plan->refusal says why */
		}
	}
	return 0;
}

/* The endpoint of config `http`, rebound (or opened, or closed) before
 * anything else is applied: an address that cannot be had refuses the
 * reload, with the endpoint where it was. */
static int reload_http(struct supervisor *supervisor, const struct config *config, bool dry_run,
		       char *change, size_t change_size, char *refusal, size_t refusal_size)
{
	char error[512];
	if (http_server_reconfigure(&supervisor->http, supervisor->loop, &supervisor->config->http,
				    &config->http, config->control_group, &supervisor->http_sources,
				    dry_run, change, change_size, error, sizeof(error)) == 0)
		return 0;
	snprintf(refusal, refusal_size, "%.400s; nothing was applied", error);
	return -EINVAL;
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

/* The plan reads the new config; an in-place update moves fields out of
 * it into the running task's own definition, through the reload's
 * (writable) copy of the same pointer. */
static struct task_config *writable_definition(struct reload *reload,
					       const struct reload_task_step *step)
{
	size_t group = (size_t)(step->group_definition - reload->config->groups);
	size_t task = (size_t)(step->definition - step->group_definition->tasks);
	return &reload->config->groups[group].tasks[task];
}

static void apply_task_step(struct supervisor *supervisor, struct reload *reload, size_t index,
			    const struct reload_options *options, uint64_t now_ms)
{
	const struct reload_task_step *step = &reload->plan.tasks[index];
	struct bound_task *bound = &reload->tasks[index];
	struct task *task = bound->task;
	char fields[160], message[TASK_EVENT_MESSAGE_MAX];
	describe_fields(&step->diff, fields, sizeof(fields));
	switch (step->action) {
	case RELOAD_KEEP:
	case RELOAD_ADD:
		return; /* an added task said "received" when it was made */
	case RELOAD_UPDATE:
		if (task_update_in_place(task, writable_definition(reload, step), &step->diff,
					 &bound->refusal, bound->warning,
					 sizeof(bound->warning)) < 0) {
			bound->refused = true;
			log_message("%s: reload: %s; the old limits stay", task->config->full_name,
				    bound->warning);
			snprintf(message, sizeof(message), "not updated: %.140s", bound->warning);
		} else {
			snprintf(message, sizeof(message), "updated in place by a reload: %.120s",
				 fields);
		}
		note_task(supervisor, task->config->full_name, TASK_EVENT_UPDATED, message);
		return;
	case RELOAD_REPLACE:
		snprintf(message, sizeof(message), "replaced by a reload: %.120s changed", fields);
		note_task(supervisor, task->config->full_name, TASK_EVENT_REPLACED, message);
		bound->rolled = replaced_by_a_roll(step, task);
		task->next_config = step->definition;
		if (bound->rolled)
			return; /* its roll restarts it in its turn (begin_rolls) */
		if (task->runner.state == TASK_RUNNING || task->runner.state == TASK_STARTING) {
			group_restart_task(task->group, task, now_ms);
		} else if (task->runner.state == TASK_DEAD && options->rerun_completed &&
			   task_can_take_next_config(task)) {
			task_take_next_config(task);
			if (group_force_restart_task(task->group, task, now_ms) !=
			    RUNNER_REQUEST_DONE)
				snprintf(bound->warning, sizeof(bound->warning),
					 "not run again: its stage gate cannot open again before "
					 "its group restarts (corral restart --all %s)",
					 task->group->config->name);
		}
		return;
	case RELOAD_REMOVE:
		note_task(supervisor, task->config->full_name, TASK_EVENT_REMOVED,
			  reload->scale ? "scaled down by corral scale: it stops"
					: "removed from the config by a reload: it stops");
		task->removed = true;
		if (task->runner.state != TASK_DEAD)
			runner_stop(&task->runner, RUNNER_STOP_FOR_GOOD,
				    reload->scale ? "scaled down" : "removed by a reload", now_ms);
		return;
	}
}

/* The group's tasks as the new definition orders them, then the ones
 * still stopping after a removal. */
static void order_group_tasks(struct group *group, const struct group_config *definition,
			      const struct reload *reload)
{
	size_t capacity = definition->task_count + group->task_count;
	struct task **tasks = xcalloc(capacity + 1, sizeof(*tasks));
	size_t count = 0;
	for (size_t t = 0; t < definition->task_count; t++)
		for (size_t i = 0; i < reload->plan.task_count; i++) {
			const struct bound_task *bound = &reload->tasks[i];
			if (bound->group == group &&
			    reload->plan.tasks[i].definition == &definition->tasks[t])
				tasks[count++] = bound->task;
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

/* The set of instances (`instances:`) a task step touches, or NULL. */
static const char *instance_set_of(const struct reload *reload, size_t index)
{
	const struct reload_task_step *step = &reload->plan.tasks[index];
	const struct bound_task *bound = &reload->tasks[index];
	if (step->definition && step->definition->instance_of)
		return step->definition->instance_of;
	return bound->task ? bound->task->config->instance_of : NULL;
}

/* A roll under way of instances the reload changes stops: what it was
 * rolling to is not what the config says any more. The last roll of
 * instances added, removed or replaced, over already, is forgotten. */
static void stop_rolls(struct reload *reload)
{
	for (size_t i = 0; i < reload->plan.task_count; i++) {
		const char *set = instance_set_of(reload, i);
		enum reload_action action = reload->plan.tasks[i].action;
		if (action == RELOAD_KEEP || !set)
			continue;
		if (!instance_roll_going(reload->tasks[i].group, set)) {
			if (action != RELOAD_UPDATE)
				instance_roll_forget(reload->tasks[i].group, set);
			continue;
		}
		char error[160];
		snprintf(error, sizeof(error), "%s changed %s/%s's instances",
			 reload->scale ? "corral scale" : "a reload",
			 reload->tasks[i].group->config->name, set);
		instance_roll_abort(reload->tasks[i].group, set, error);
	}
}

/* The running instances a reload replaced, of a task with `update:
 * {strategy: rolling}`: a roll a set, in instance order. */
static void begin_rolls(struct reload *reload, uint64_t now_ms)
{
	size_t count = reload->plan.task_count;
	struct task **members = xcalloc(count + 1, sizeof(*members));
	bool *taken = xcalloc(count + 1, sizeof(*taken));
	for (size_t i = 0; i < count; i++) {
		if (!reload->tasks[i].rolled || taken[i])
			continue;
		const struct task_config *definition = reload->plan.tasks[i].definition;
		struct group *group = reload->tasks[i].group;
		size_t member_count = 0;
		for (size_t j = i; j < count; j++)
			if (reload->tasks[j].rolled && !taken[j] &&
			    reload->tasks[j].group == group &&
			    strcmp(reload->plan.tasks[j].definition->instance_of,
				   definition->instance_of) == 0) {
				members[member_count++] = reload->tasks[j].task;
				taken[j] = true;
			}
		char error[256];
		if (instance_roll_begin(group, definition->instance_of, members, member_count,
					definition->update.max_unavailable, true, error,
					sizeof(error)))
			continue;
		/* stop_rolls ended any roll of the set: not expected. */
		log_message("%s", error);
		for (size_t m = 0; m < member_count; m++)
			group_restart_task(group, members[m], now_ms);
	}
	free(taken);
	free(members);
}

static void apply(struct supervisor *supervisor, struct reload *reload,
		  const struct reload_options *options)
{
	const struct reload_plan *plan = &reload->plan;
	uint64_t now = loop_now_ms();
	stop_rolls(reload);
	/* Removed tasks first: they are marked before the groups' task lists
	 * are ordered again. */
	for (size_t i = 0; i < plan->task_count; i++)
		if (plan->tasks[i].action == RELOAD_REMOVE)
			apply_task_step(supervisor, reload, i, options, now);
	for (size_t i = 0; i < plan->task_count; i++)
		if (plan->tasks[i].action == RELOAD_ADD)
			runner_received(&reload->tasks[i].task->runner);

	size_t capacity = plan->group_count + supervisor->group_count;
	struct group **groups = xcalloc(capacity + 1, sizeof(*groups));
	size_t count = 0;
	for (size_t i = 0; i < plan->group_count; i++) {
		const struct reload_group_step *step = &plan->groups[i];
		struct group *group = reload->groups[i];
		if (step->action == RELOAD_REMOVE)
			continue;
		if (step->action != RELOAD_ADD) {
			order_group_tasks(group, step->definition, reload);
			group->config = step->definition;
			group_mark_dirty(group);
		}
		remember_group_name(supervisor, step->definition->name);
		groups[count++] = group;
	}
	for (size_t i = 0; i < supervisor->group_count; i++)
		if (supervisor->groups[i]->removed)
			groups[count++] = supervisor->groups[i];
	for (size_t i = 0; i < plan->group_count; i++)
		if (plan->groups[i].action == RELOAD_REMOVE) {
			reload->groups[i]->removed = true;
			groups[count++] = reload->groups[i];
		}
	free(supervisor->groups);
	supervisor->groups = groups;
	supervisor->group_count = count;
	supervisor->config = reload->config;
	supervisor_apply_settings(supervisor);
	task_dependencies_relink(supervisor->groups, supervisor->group_count, reload->config);
	supervisor_groups_changed(supervisor);

	for (size_t i = 0; i < plan->task_count; i++)
		if (plan->tasks[i].action != RELOAD_REMOVE)
			apply_task_step(supervisor, reload, i, options, now);
	begin_rolls(reload, now);
	for (size_t i = 0; i < plan->group_count; i++)
		if (plan->groups[i].action == RELOAD_REMOVE)
			group_stop(reload->groups[i], "removed from the config by a reload", now);
	/* Watches follow their tasks: added, changed, removed. */
	watch_set_sync(&supervisor->watches);
}

/* ---- the request ---- */

/* The config applied is the current one now, and lives as long as
 * something points into it (reload_collect). */
static void keep_generation(struct supervisor *supervisor, struct config *config)
{
	supervisor->generations =
	    xreallocarray(supervisor->generations, supervisor->generation_count + 1,
			  sizeof(*supervisor->generations));
	supervisor->generations[supervisor->generation_count++] =
	    (struct config_generation){config, true};
}

int reload_apply_scaled(struct supervisor *supervisor, struct config *config, char *error,
			size_t error_size)
{
	struct reload reload;
	if (make_plan(supervisor, config, &reload, true) == 0)
		make_new(supervisor, &reload);
	if (reload.plan.refusal[0]) {
		snprintf(error, error_size, "%s", reload.plan.refusal);
		free_reload(&reload);
		config_free(config);
		return -EINVAL;
	}
	struct reload_options options = {0};
	apply(supervisor, &reload, &options);
	keep_generation(supervisor, config);
	free_reload(&reload);
	return 0;
}

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

/* For GET /metrics: a dry run is not a reload. */
static void count_reload(struct supervisor *supervisor, const struct reload_options *options,
			 bool applied)
{
	if (options->dry_run)
		return;
	if (applied)
		supervisor->counters.reloads_succeeded++;
	else
		supervisor->counters.reloads_failed++;
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
	/* With the profiles corral was started with (`corral run --profile`). */
	struct config *config = config_load_paths_with_profiles(
	    sources, source_count, (const char *const *)current->profiles, &diagnostics);
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
		count_reload(supervisor, options, false);
		return refused(supervisor, path, reason, errors);
	}

	struct reload reload;
	char message[600], http_change[400] = "";
	if (make_plan(supervisor, config, &reload, false) == 0) {
		if (!options->dry_run) {
			/* Before the new tasks say they are received. */
			snprintf(message, sizeof(message), "reload of %s", path);
			event_log_corral(&supervisor->events,
					 corral_event_type_name(CORRAL_EVENT_RELOAD_STARTED),
					 message);
		}
		if ((options->dry_run || make_new(supervisor, &reload) == 0) &&
		    reload_http(supervisor, config, options->dry_run, http_change,
				sizeof(http_change), reload.plan.refusal,
				sizeof(reload.plan.refusal)) < 0)
			free_made(&reload);
	}
	if (reload.plan.refusal[0]) {
		count_reload(supervisor, options, false);
		json_t *reply = refused(supervisor, path, reload.plan.refusal, NULL);
		free_reload(&reload);
		config_free(config);
		return reply;
	}
	json_t *reply = json_object();
	json_object_set_new(reply, "ok", json_true());
	json_object_set_new(reply, "path", json_string(path));
	json_object_set_new(reply, "dry_run", json_boolean(options->dry_run));
	if (http_change[0])
		json_object_set_new(reply, "http", json_string(http_change));
	if (options->dry_run) {
		json_object_set_new(reply, "plan", plan_json(&reload));
		free_reload(&reload);
		config_free(config);
		return reply;
	}
	apply(supervisor, &reload, options);
	/* Back to the config's counts: a set corral scale took to 0 is the
	 * config's again (the plan added its instances). */
	for (size_t i = 0; i < supervisor->group_count; i++)
		zero_sets_clear(&supervisor->groups[i]->zero_sets);
	count_reload(supervisor, options, true);
	keep_generation(supervisor, config);
	json_t *summary = plan_json(&reload);
	json_object_set_new(reply, "plan", summary);
	json_t *refused_changes = refused_json(&reload);
	size_t refused_count = json_array_size(refused_changes);
	if (refused_count)
		json_object_set_new(reply, "refused", refused_changes);
	else
		json_decref(refused_changes);
	snprintf(message, sizeof(message), "reload of %s applied%s: %zu task change%s", path,
		 refused_count ? " in part" : "",
		 json_array_size(json_object_get(summary, "tasks")),
		 json_array_size(json_object_get(summary, "tasks")) == 1 ? "" : "s");
	event_log_corral(&supervisor->events, corral_event_type_name(CORRAL_EVENT_RELOAD_FINISHED),
			 message);
	free_reload(&reload);
	return reply;
}
