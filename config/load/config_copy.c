#include "config/load/config_copy.h"

#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "config/load/config_parse.h"

/* Every field that points somewhere is copied below: one shared would be
 * freed twice (config.c's config_free). The sizes stand guard on the
 * machine CI builds on: they change with the structs, and then the copy
 * must be read again. */
#if defined(__x86_64__)
_Static_assert(sizeof(struct task_config) == 752,
	       "struct task_config changed: copy the new field in task_config_copy "
	       "(config_copy.c), then update this size");
_Static_assert(sizeof(struct group_config) == 72,
	       "struct group_config changed: copy the new field in copy_group "
	       "(config_copy.c), then update this size");
_Static_assert(sizeof(struct config) == 256,
	       "struct config changed: copy the new field in config_with_instances "
	       "(config_copy.c), then update this size");
#endif

static char *copy_string(const char *text)
{
	return text ? xstrdup(text) : NULL;
}

/* `count` items of `size` bytes, with room for `room` (>= count); NULL
 * for NULL. */
static void *copy_items(const void *items, size_t count, size_t room, size_t size)
{
	if (!items)
		return NULL;
	void *copy = xcalloc(room ? room : 1, size);
	memcpy(copy, items, count * size);
	return copy;
}

static void copy_probe(struct probe_config *into, const struct probe_config *from)
{
	*into = *from;
	into->argv = string_vector_copy(from->argv);
	into->host = copy_string(from->host);
	into->path = copy_string(from->path);
	into->headers = string_vector_copy(from->headers);
	into->port_template.text = copy_string(from->port_template.text);
	into->port_template.where = copy_string(from->port_template.where);
	into->path_template.text = copy_string(from->path_template.text);
	into->path_template.where = copy_string(from->path_template.where);
}

static void copy_isolation(struct isolation_config *into, const struct isolation_config *from)
{
	*into = *from;
	into->hostname = copy_string(from->hostname);
	into->seccomp.allow = string_vector_copy(from->seccomp.allow);
	into->seccomp.deny = string_vector_copy(from->seccomp.deny);
	/* Room for every rlimit, as the loader makes it. */
	into->rlimits = copy_items(from->rlimits, from->rlimit_count, ISOLATION_RLIMITS_MAX,
				   sizeof(*from->rlimits));
	into->rootfs = copy_string(from->rootfs);
	into->mounts = NULL;
	if (from->mounts) {
		into->mounts = xcalloc(from->mount_count + 1, sizeof(*into->mounts));
		for (size_t i = 0; i < from->mount_count; i++)
			mount_config_copy(&into->mounts[i], &from->mounts[i]);
	}
	into->devices = NULL;
	if (from->devices) {
		into->devices = xcalloc(from->device_count + 1, sizeof(*into->devices));
		for (size_t i = 0; i < from->device_count; i++)
			device_config_copy(&into->devices[i], &from->devices[i]);
	}
	into->uid_map = copy_items(from->uid_map, from->uid_map_count, from->uid_map_count,
				   sizeof(*from->uid_map));
	into->gid_map = copy_items(from->gid_map, from->gid_map_count, from->gid_map_count,
				   sizeof(*from->gid_map));
}

void task_config_copy(struct task_config *into, const struct task_config *from)
{
	*into = *from;
	into->name = copy_string(from->name);
	into->full_name = copy_string(from->full_name);
	into->instance_of = copy_string(from->instance_of);
	into->schedule.cron_text = copy_string(from->schedule.cron_text);
	into->schedule.time_zone = copy_string(from->schedule.time_zone);
	into->argv = string_vector_copy(from->argv);
	into->env = string_vector_copy(from->env);
	into->cwd = copy_string(from->cwd);
	into->user = copy_string(from->user);
	into->groups = string_vector_copy(from->groups);
	into->resources.cpuset = copy_string(from->resources.cpuset);
	into->readiness = NULL;
	if (from->readiness) {
		into->readiness = xmalloc(sizeof(*into->readiness));
		*into->readiness = *from->readiness;
		copy_probe(&into->readiness->probe, &from->readiness->probe);
		into->readiness->log_ready = copy_string(from->readiness->log_ready);
		into->readiness->log_not_ready = copy_string(from->readiness->log_not_ready);
	}
	into->health = NULL;
	if (from->health) {
		into->health = xmalloc(sizeof(*into->health));
		*into->health = *from->health;
		copy_probe(&into->health->probe, &from->health->probe);
	}
	copy_isolation(&into->isolation, &from->isolation);
	into->cdi.devices = string_vector_copy(from->cdi.devices);
	into->cdi.spec_dirs = string_vector_copy(from->cdi.spec_dirs);
	into->log_dir = copy_string(from->log_dir);
	into->hooks = NULL;
	if (from->hooks) {
		into->hooks = xcalloc(from->hook_count + 1, sizeof(*into->hooks));
		for (size_t i = 0; i < from->hook_count; i++)
			hook_config_copy(&into->hooks[i], &from->hooks[i]);
	}
	into->after =
	    copy_items(from->after, from->after_count, from->after_count + 1, sizeof(*from->after));
	for (size_t i = 0; i < from->after_count; i++)
		into->after[i].name = xstrdup(from->after[i].name);
	into->wait_for = copy_items(from->wait_for, from->wait_for_count, from->wait_for_count + 1,
				    sizeof(*from->wait_for));
	for (size_t i = 0; i < from->wait_for_count; i++) {
		copy_probe(&into->wait_for[i].probe, &from->wait_for[i].probe);
		into->wait_for[i].text = copy_string(from->wait_for[i].text);
	}
	into->watches = copy_items(from->watches, from->watch_count, from->watch_count + 1,
				   sizeof(*from->watches));
	for (size_t i = 0; i < from->watch_count; i++)
		into->watches[i].paths = string_vector_copy(from->watches[i].paths);
}

/* ---- a config with other instance counts ---- */

static const struct instance_count *change_of(const struct instance_count *changes,
					      size_t change_count, const char *group,
					      const struct task_config *task)
{
	if (!task->instance_of)
		return NULL;
	for (size_t i = 0; i < change_count; i++)
		if (strcmp(changes[i].group, group) == 0 &&
		    strcmp(changes[i].task, task->instance_of) == 0)
			return &changes[i];
	return NULL;
}

/* Instance `number` of the set, made from its model. */
static void make_instance(struct task_config *into, const struct instance_count *change,
			  const char *group, unsigned written, unsigned number)
{
	task_config_copy(into, change->model);
	free(into->name);
	free(into->full_name);
	free(into->instance_of);
	into->instance_of = xstrdup(change->task);
	into->instance = number;
	into->instances = written;
	into->name = xasprintf("%s@%u", change->task, number);
	into->full_name = xasprintf("%s/%s", group, into->name);
	/* Its own probe targets; scale.c checked that they can be made. */
	char error[256];
	struct source_location location;
	(void)task_config_probes_for_instance(into, number, error, sizeof(error), &location);
}

void task_config_copy_free(struct task_config *task)
{
	config_task_free(task);
}

int instance_targets_check(const struct task_config *model, unsigned number, char *error,
			   size_t error_size)
{
	struct task_config instance;
	task_config_copy(&instance, model);
	struct source_location location;
	int made = task_config_probes_for_instance(&instance, number, error, error_size, &location);
	config_task_free(&instance);
	return made;
}

static long group_named(const struct config *config, const char *name, size_t length)
{
	for (size_t g = 0; g < config->group_count; g++)
		if (strlen(config->groups[g].name) == length &&
		    strncmp(config->groups[g].name, name, length) == 0)
			return (long)g;
	return -1;
}

static long task_named(const struct group_config *group, const char *name)
{
	for (size_t t = 0; t < group->task_count; t++)
		if (strcmp(group->tasks[t].name, name) == 0)
			return (long)t;
	return -1;
}

/* The edge's target in `config` by its name ("redis", "cache/memcached",
 * "web@2"), as the loader resolved it; false when it is not there. */
static bool resolve_by_name(const struct config *config, size_t own_group,
			    struct task_dependency *edge)
{
	const char *slash = strchr(edge->name, '/');
	long group =
	    slash ? group_named(config, edge->name, (size_t)(slash - edge->name)) : (long)own_group;
	if (group < 0)
		return false;
	long task = task_named(&config->groups[group], slash ? slash + 1 : edge->name);
	if (task < 0)
		return false;
	edge->group_index = (size_t)group;
	edge->task_index = (size_t)task;
	return true;
}

/* Where each task of the source went in the copy (LEFT_OUT: nowhere), and
 * which tasks of the copy were made from a model, whose edges were
 * resolved in another config than the source. */
#define LEFT_OUT SIZE_MAX
struct moves {
	size_t **to; /* [group][source task] */
	bool **made; /* [group][copy task] */
};

/* Instances were left out or added: every edge finds its target again,
 * through the moves for a copied task (whose indices are the source's), by
 * name for a made one. */
static void resolve_edges(struct config *config, const struct moves *moves)
{
	for (size_t g = 0; g < config->group_count; g++)
		for (size_t t = 0; t < config->groups[g].task_count; t++) {
			struct task_config *task = &config->groups[g].tasks[t];
			size_t kept = 0;
			for (size_t d = 0; d < task->after_count; d++) {
				struct task_dependency *edge = &task->after[d];
				bool found;
				if (moves->made[g][t]) {
					found = resolve_by_name(config, g, edge);
				} else {
					edge->task_index =
					    moves->to[edge->group_index][edge->task_index];
					found = edge->task_index != LEFT_OUT;
				}
				if (!found) {
					free(edge->name);
					continue;
				}
				task->after[kept++] = *edge;
			}
			task->after_count = kept;
		}
}

static bool has_instances(const struct group_config *group, const char *set)
{
	for (size_t t = 0; t < group->task_count; t++)
		if (group->tasks[t].instance_of && strcmp(group->tasks[t].instance_of, set) == 0)
			return true;
	return false;
}

static void copy_group(struct group_config *into, const struct group_config *from,
		       const struct instance_count *changes, size_t change_count, size_t *to,
		       bool **made)
{
	*into = *from;
	into->name = xstrdup(from->name);
	into->network.bridge = copy_string(from->network.bridge);
	size_t room = from->task_count;
	for (size_t i = 0; i < change_count; i++)
		if (strcmp(changes[i].group, from->name) == 0)
			room += changes[i].count;
	into->tasks = xcalloc(room + 1, sizeof(*into->tasks));
	*made = xcalloc(room + 1, sizeof(**made));
	into->task_count = 0;
	for (size_t t = 0; t < from->task_count; t++) {
		const struct task_config *task = &from->tasks[t];
		const struct instance_count *change =
		    change_of(changes, change_count, from->name, task);
		to[t] = LEFT_OUT;
		if (change && task->instance >= change->count)
			continue;
		to[t] = into->task_count;
		task_config_copy(&into->tasks[into->task_count++], task);
		/* After the set's last instance, the new ones. */
		if (!change || (t + 1 < from->task_count && from->tasks[t + 1].instance_of &&
				strcmp(from->tasks[t + 1].instance_of, task->instance_of) == 0))
			continue;
		for (unsigned number = task->instance + 1; number < change->count; number++) {
			(*made)[into->task_count] = true;
			make_instance(&into->tasks[into->task_count++], change, from->name,
				      task->instances, number);
		}
	}
	/* A set with no instance in `from` (scaled to 0 before): its
	 * instances come back at the end of the group, from its model. */
	for (size_t i = 0; i < change_count; i++) {
		const struct instance_count *change = &changes[i];
		if (strcmp(change->group, from->name) != 0 || has_instances(from, change->task))
			continue;
		for (unsigned number = 0; number < change->count; number++) {
			(*made)[into->task_count] = true;
			make_instance(&into->tasks[into->task_count++], change, from->name,
				      change->model->instances, number);
		}
	}
}

/* `config`'s scaled sets with `changes` over them. */
static void copy_scaled_sets(struct config *copy, const struct config *config,
			     const struct instance_count *changes, size_t change_count)
{
	copy->scaled = xcalloc(config->scaled_count + change_count + 1, sizeof(*copy->scaled));
	copy->scaled_count = 0;
	for (size_t i = 0; i < config->scaled_count; i++)
		copy->scaled[copy->scaled_count++] = (struct config_scaled_set){
		    xstrdup(config->scaled[i].group), xstrdup(config->scaled[i].task),
		    config->scaled[i].count};
	for (size_t c = 0; c < change_count; c++) {
		struct config_scaled_set *set = NULL;
		for (size_t i = 0; i < copy->scaled_count && !set; i++)
			if (strcmp(copy->scaled[i].group, changes[c].group) == 0 &&
			    strcmp(copy->scaled[i].task, changes[c].task) == 0)
				set = &copy->scaled[i];
		if (!set) {
			set = &copy->scaled[copy->scaled_count++];
			set->group = xstrdup(changes[c].group);
			set->task = xstrdup(changes[c].task);
		}
		set->count = changes[c].count;
	}
}

struct config *config_with_instances(const struct config *config,
				     const struct instance_count *changes, size_t change_count)
{
	struct config *copy = xcalloc(1, sizeof(*copy));
	*copy = *config;
	/* The files' bytes and the counts they do not give: what `corral
	 * upgrade` builds the same config from. */
	config_files_copy(&copy->files, &config->files);
	copy_scaled_sets(copy, config, changes, change_count);
	copy->path = copy_string(config->path);
	copy->sources = copy_items(config->sources, config->source_count, config->source_count + 1,
				   sizeof(*config->sources));
	for (size_t i = 0; i < config->source_count; i++)
		copy->sources[i] = xstrdup(config->sources[i]);
	copy->socket_path = copy_string(config->socket_path);
	copy->control_group = copy_string(config->control_group);
	copy->task_dirs_root = copy_string(config->task_dirs_root);
	copy->termination_log = copy_string(config->termination_log);
	copy->notify_ready_groups =
	    copy_items(config->notify_ready_groups, config->notify_ready_group_count,
		       config->notify_ready_group_count + 1, sizeof(*config->notify_ready_groups));
	for (size_t i = 0; i < config->notify_ready_group_count; i++)
		copy->notify_ready_groups[i] = xstrdup(config->notify_ready_groups[i]);
	copy->profiles = string_vector_copy(config->profiles);
	copy->profiles_unlisted = string_vector_copy(config->profiles_unlisted);
	copy->http.listen = copy_string(config->http.listen);
	copy->groups = xcalloc(config->group_count + 1, sizeof(*copy->groups));
	struct moves moves = {xcalloc(config->group_count + 1, sizeof(*moves.to)),
			      xcalloc(config->group_count + 1, sizeof(*moves.made))};
	for (size_t g = 0; g < config->group_count; g++) {
		moves.to[g] = xcalloc(config->groups[g].task_count + 1, sizeof(**moves.to));
		copy_group(&copy->groups[g], &config->groups[g], changes, change_count, moves.to[g],
			   &moves.made[g]);
	}
	resolve_edges(copy, &moves);
	for (size_t g = 0; g < config->group_count; g++) {
		free(moves.to[g]);
		free(moves.made[g]);
	}
	free(moves.to);
	free(moves.made);
	return copy;
}
