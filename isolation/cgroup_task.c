#include "isolation/cgroup_task.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "isolation/cgroup_fs.h"
#include "isolation/cgroup_library.h"
#include "isolation/cgroup_limits.h"

void task_cgroup_init(struct task_cgroup *cgroup)
{
	memset(cgroup, 0, sizeof(*cgroup));
	cgroup->parent_fd = -1;
}

bool task_cgroup_exists(const struct task_cgroup *cgroup)
{
	return cgroup->made;
}

/* "NAME/file", relative to the group's directory. */
static int leaf_file(const struct task_cgroup *cgroup, const char *file, char *path, size_t size)
{
	if (!cgroup->made)
		return -ENOENT;
	int length = snprintf(path, size, "%s/%s", cgroup->name, file);
	return length < 0 || (size_t)length >= size ? -ENAMETOOLONG : 0;
}

int task_cgroup_open_dir(const struct task_cgroup *cgroup)
{
	if (!cgroup->made)
		return -ENOENT;
	int fd = openat(cgroup->parent_fd, cgroup->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int task_cgroup_open_file(const struct task_cgroup *cgroup, const char *file, int flags)
{
	char path[PATH_MAX];
	int failure = leaf_file(cgroup, file, path, sizeof(path));
	if (failure < 0)
		return failure;
	int fd = openat(cgroup->parent_fd, path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* cgroup_fs_read_key of one of the leaf's files. */
static int read_leaf_key(const struct task_cgroup *cgroup, const char *file, const char *key,
			 uint64_t *value)
{
	char path[PATH_MAX];
	int failure = leaf_file(cgroup, file, path, sizeof(path));
	return failure < 0 ? failure : cgroup_fs_read_key(cgroup->parent_fd, path, key, value);
}

static int read_leaf_number(const struct task_cgroup *cgroup, const char *file, uint64_t *value)
{
	char path[PATH_MAX];
	int failure = leaf_file(cgroup, file, path, sizeof(path));
	return failure < 0 ? failure : cgroup_fs_read_number(cgroup->parent_fd, path, value);
}

static bool has_v2(void *context, const char *controller)
{
	return cgroup_tree_has_controller(context, controller);
}

static bool has_v1(void *context, const char *controller)
{
	const struct cgroup_tree *tree = context;
	return cgroup_library_has_v1(controller, tree->mount_path);
}

static const char *v1_unknown(void *context)
{
	return cgroup_library_load_failure();
}

struct task_cgroup_v1 *task_cgroup_v1_group(struct task_cgroup *cgroup, struct cgroup_tree *tree,
					    const char *controller, const char *group_name,
					    const char *task_name, char *error, size_t error_size)
{
	for (size_t i = 0; i < cgroup->v1_count; i++)
		if (strcmp(cgroup->v1[i].controller, controller) == 0)
			return &cgroup->v1[i];
	char *mount = cgroup_library_v1_mount(controller, tree->mount_path);
	char *own = cgroup_library_own_path(controller);
	if (!mount || !own || cgroup->v1_count == TASK_CGROUP_V1_MAX) {
		snprintf(error, error_size, "cannot find corral's v1 %s cgroup", controller);
		free(mount);
		free(own);
		return NULL;
	}
	/* Beside corral's own v1 cgroup, with the same layout as in v2. */
	char *path = xasprintf("%s%s/%s/%s", strcmp(own, "/") == 0 ? "" : own, tree->v1_suffix,
			       group_name, task_name);
	free(own);
	if (cgroup_library_create(controller, path, error, error_size) < 0) {
		free(mount);
		free(path);
		return NULL;
	}
	char *v1_root = xasprintf("%s%s", mount, path);
	*strrchr(v1_root, '/') = '\0'; /* the group's directory */
	*strrchr(v1_root, '/') = '\0'; /* corral's own, with its suffix */
	cgroup_tree_note_v1_root(tree, v1_root);
	free(v1_root);
	if (!cgroup->v1) {
		cgroup->v1 = xcalloc(TASK_CGROUP_V1_MAX, sizeof(*cgroup->v1));
		cgroup->v1_join_paths = xcalloc(TASK_CGROUP_V1_MAX + 1, sizeof(char *));
	}
	struct task_cgroup_v1 *v1 = &cgroup->v1[cgroup->v1_count];
	v1->controller = xstrdup(controller);
	v1->path = path;
	v1->join_path = xasprintf("%s%s/tasks", mount, path);
	v1->memory = strcmp(controller, "memory") == 0;
	cgroup->v1_join_paths[cgroup->v1_count++] = v1->join_path;
	free(mount);
	return v1;
}

static int apply_settings(struct task_cgroup *cgroup, struct cgroup_tree *tree,
			  const struct cgroup_settings *settings,
			  const struct resources_config *resources, const char *group_name,
			  const char *task_name, struct limit_refusal *refusal, char *error,
			  size_t error_size)
{
	for (size_t i = 0; i < settings->count; i++) {
		const struct cgroup_setting *setting = &settings->items[i];
		const char *path = cgroup->v2_relative;
		char why[256] = "";
		if (setting->version == CGROUP_V1) {
			struct task_cgroup_v1 *v1 =
			    task_cgroup_v1_group(cgroup, tree, setting->controller, group_name,
						 task_name, why, sizeof(why));
			path = v1 ? v1->path : NULL;
		}
		if (path && cgroup_library_write(setting->controller, path, setting->file,
						 setting->value, why, sizeof(why)) == 0)
			continue;
		/* cpuset is the one limit users write as text: show it. */
		if (strcmp(setting->resource, "cpuset") == 0)
			snprintf(error, error_size, "resources: cpuset \"%s\": %s",
				 resources->cpuset, why);
		else
			snprintf(error, error_size, "resources: %s: %s", setting->resource, why);
		if (refusal) {
			snprintf(refusal->resource, sizeof(refusal->resource), "%s",
				 setting->resource);
			snprintf(refusal->reason, sizeof(refusal->reason), "%s", why);
		}
		return -1;
	}
	return 0;
}

int task_cgroup_create(struct task_cgroup *cgroup, struct cgroup_tree *tree, int group_fd,
		       const char *group_name, const char *task_name,
		       const struct resources_config *resources, char *error, size_t error_size,
		       char *warning, size_t warning_size)
{
	warning[0] = '\0';
	bool limits = resources_config_has_limits(resources);
	if (!tree->enabled) {
		if (!limits)
			return 0;
		snprintf(error, error_size, "resources: cannot apply limits: %s", tree->off_reason);
		return -EINVAL;
	}
	struct cgroup_settings settings;
	struct cgroup_availability availability = {has_v2, has_v1, v1_unknown, tree};
	char why[512];
	if (cgroup_limits_plan(resources, &availability, &settings, why, sizeof(why)) < 0) {
		snprintf(error, error_size, "resources: %s", why);
		return -EINVAL;
	}
	if (settings.skipped[0])
		snprintf(warning, warning_size,
			 "resources: no controller for %s; running without (optional: true)",
			 settings.skipped);

	if (mkdirat(group_fd, task_name, 0755) < 0 && errno != EEXIST) {
		int saved = errno;
		snprintf(error, error_size, "cgroup %s/%s/%s: %s", tree->root_path, group_name,
			 task_name, strerror(saved));
		return -saved;
	}
	cgroup->parent_fd = group_fd;
	cgroup->path = xasprintf("%s/%s/%s", tree->root_path, group_name, task_name);
	cgroup->name = strrchr(cgroup->path, '/') + 1;
	cgroup->made = true;
	int dir_fd = task_cgroup_open_dir(cgroup); /* a directory is there, not a file */
	if (dir_fd < 0) {
		snprintf(error, error_size, "cgroup %s: %s", cgroup->path, strerror(-dir_fd));
		cgroup->made = false;
		task_cgroup_remove(cgroup, tree);
		return dir_fd;
	}
	close(dir_fd);
	cgroup->v2_relative = cgroup->path + strlen(tree->mount_path);
	if (!*cgroup->v2_relative)
		cgroup->v2_relative = "/";
	cgroup->v2_memory = cgroup_tree_has_controller(tree, "memory");
	cgroup->v2_pids = cgroup_tree_has_controller(tree, "pids");
	if (apply_settings(cgroup, tree, &settings, resources, group_name, task_name, NULL, error,
			   error_size) < 0) {
		task_cgroup_remove(cgroup, tree);
		return -EINVAL;
	}
	return 0;
}

int task_cgroup_update_limits(struct task_cgroup *cgroup, struct cgroup_tree *tree,
			      const char *group_name, const char *task_name,
			      const struct resources_config *resources,
			      struct limit_refusal *refusal, char *error, size_t error_size)
{
	if (!task_cgroup_exists(cgroup))
		return 0; /* made with these limits at the next start */
	struct cgroup_settings settings;
	struct cgroup_availability availability = {has_v2, has_v1, v1_unknown, tree};
	char why[512];
	if (cgroup_limits_plan(resources, &availability, &settings, why, sizeof(why)) < 0) {
		snprintf(error, error_size, "resources: %s", why);
		refusal->resource[0] = '\0'; /* the limits as a whole */
		snprintf(refusal->reason, sizeof(refusal->reason), "%.255s", why);
		return -1;
	}
	return apply_settings(cgroup, tree, &settings, resources, group_name, task_name, refusal,
			      error, error_size);
}

int task_cgroup_kill(struct task_cgroup *cgroup)
{
	int dir_fd = task_cgroup_open_dir(cgroup);
	if (dir_fd < 0)
		return dir_fd;
	cgroup->killed = true;
	int result = cgroup_fs_kill(dir_fd);
	close(dir_fd);
	return result;
}

int task_cgroup_signal(struct task_cgroup *cgroup, int signal_number, pid_t except)
{
	int dir_fd = task_cgroup_open_dir(cgroup);
	if (dir_fd < 0)
		return dir_fd;
	int result = cgroup_fs_signal_members(dir_fd, signal_number, except);
	close(dir_fd);
	return result;
}

bool task_cgroup_populated(const struct task_cgroup *cgroup)
{
	uint64_t populated = 0;
	read_leaf_key(cgroup, "cgroup.events", "populated", &populated);
	return populated != 0;
}

int task_cgroup_open_events(const struct task_cgroup *cgroup)
{
	return task_cgroup_open_file(cgroup, "cgroup.events", O_RDONLY);
}

static const struct task_cgroup_v1 *v1_memory(const struct task_cgroup *cgroup)
{
	for (size_t i = 0; i < cgroup->v1_count; i++)
		if (cgroup->v1[i].memory)
			return &cgroup->v1[i];
	return NULL;
}

/* A file of a v1 group, through the absolute path of its `tasks`. */
static int read_v1(const struct task_cgroup_v1 *v1, const char *file, const char *key,
		   uint64_t *value)
{
	char directory[strlen(v1->join_path) + 1];
	strcpy(directory, v1->join_path);
	*strrchr(directory, '/') = '\0';
	int dir_fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0)
		return -errno;
	int result = key ? cgroup_fs_read_key(dir_fd, file, key, value)
			 : cgroup_fs_read_number(dir_fd, file, value);
	close(dir_fd);
	return result;
}

uint64_t task_cgroup_oom_kills(const struct task_cgroup *cgroup)
{
	uint64_t kills = 0;
	if (cgroup->made && cgroup->v2_memory)
		read_leaf_key(cgroup, "memory.events", "oom_kill", &kills);
	const struct task_cgroup_v1 *memory = v1_memory(cgroup);
	uint64_t v1_kills = 0;
	if (memory && read_v1(memory, "memory.oom_control", "oom_kill", &v1_kills) == 0)
		kills += v1_kills;
	return kills;
}

uint64_t task_cgroup_own_oom_kills(const struct task_cgroup *cgroup)
{
	uint64_t kills = task_cgroup_oom_kills(cgroup);
	return kills > cgroup->oom_kills_of_execs ? kills - cgroup->oom_kills_of_execs : 0;
}

void task_cgroup_stats(const struct task_cgroup *cgroup, struct task_cgroup_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	if (!cgroup->made)
		return;
	/* cpu.stat is there in every v2 cgroup, controller or not. */
	stats->has_cpu = read_leaf_key(cgroup, "cpu.stat", "usage_usec", &stats->cpu_usec) == 0;
	const struct task_cgroup_v1 *memory = v1_memory(cgroup);
	if (cgroup->v2_memory) {
		stats->has_memory =
		    read_leaf_number(cgroup, "memory.current", &stats->memory_current) == 0;
		stats->has_memory_peak =
		    read_leaf_number(cgroup, "memory.peak", &stats->memory_peak) == 0;
	} else if (memory) {
		stats->has_memory =
		    read_v1(memory, "memory.usage_in_bytes", NULL, &stats->memory_current) == 0;
		stats->has_memory_peak =
		    read_v1(memory, "memory.max_usage_in_bytes", NULL, &stats->memory_peak) == 0;
	}
	if (cgroup->v2_pids) {
		stats->has_pids =
		    read_leaf_number(cgroup, "pids.current", &stats->pids_current) == 0;
	} else {
		for (size_t i = 0; i < cgroup->v1_count; i++)
			if (strcmp(cgroup->v1[i].controller, "pids") == 0)
				stats->has_pids = read_v1(&cgroup->v1[i], "pids.current", NULL,
							  &stats->pids_current) == 0;
	}
}

/* "/sys/fs/cgroup/memory/a/b/tasks" -> parent dir fd and "b". */
static void remove_v1(const struct task_cgroup_v1 *v1, cgroup_log_function log)
{
	char directory[strlen(v1->join_path) + 1];
	strcpy(directory, v1->join_path);
	*strrchr(directory, '/') = '\0';
	char *name = strrchr(directory, '/');
	*name++ = '\0';
	int parent_fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent_fd < 0)
		return;
	int failure = cgroup_fs_remove_tree(parent_fd, name);
	if (failure < 0)
		log("warning: cannot remove cgroup %s/%s: %s", directory, name, strerror(-failure));
	close(parent_fd);
}

void task_cgroup_remove(struct task_cgroup *cgroup, struct cgroup_tree *tree)
{
	if (cgroup->made) {
		const char *name = cgroup->name;
		/* An empty leaf, the usual case, goes with one rmdir; a tree
		 * walk only when something is left in it. */
		int failure = unlinkat(cgroup->parent_fd, name, AT_REMOVEDIR) == 0
				  ? 0
				  : cgroup_fs_remove_tree(cgroup->parent_fd, name);
		if (failure < 0)
			tree->log("warning: cannot remove cgroup %s: %s", cgroup->path,
				  strerror(-failure));
	}
	for (size_t i = 0; i < cgroup->v1_count; i++) {
		remove_v1(&cgroup->v1[i], tree->log);
		free(cgroup->v1[i].controller);
		free(cgroup->v1[i].path);
		free(cgroup->v1[i].join_path);
	}
	free(cgroup->v1);
	free(cgroup->v1_join_paths);
	free(cgroup->path);
	task_cgroup_init(cgroup);
}
