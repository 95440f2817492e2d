/* Building a mount plan in corral, before the clone: every step with its
 * strings, so that the child only walks the list (mount_plan.h). */
#include "isolation/mount_plan.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "base/paths.h"
#include "base/xmalloc.h"
#include "isolation/spawn.h"

/* What a file system of the task's never needs: set-uid files and device
 * nodes of its own (devices are bound in, one by one). */
#define FS_ATTRIBUTES        (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define FS_ATTRIBUTES_NOEXEC (FS_ATTRIBUTES | MOUNT_ATTR_NOEXEC)

static struct mount_step *add_step(struct mount_plan *plan, enum mount_step_kind kind,
				   const char *source, const char *target)
{
	if (plan->step_count == plan->capacity) {
		plan->capacity = plan->capacity ? plan->capacity * 2 : 32;
		plan->steps = xreallocarray(plan->steps, plan->capacity, sizeof(*plan->steps));
	}
	struct mount_step *step = &plan->steps[plan->step_count++];
	*step = (struct mount_step){
	    .kind = kind,
	    .source = source ? xstrdup(source) : NULL,
	    .target = xstrdup(target),
	};
	return step;
}

/* "key=value" and "flag" into fsconfig's keys and values. */
static void set_options(struct mount_step *step, char *const *options)
{
	size_t count = 0;
	while (options && options[count])
		count++;
	if (!count)
		return;
	step->option_keys = xcalloc(count + 1, sizeof(char *));
	step->option_values = xcalloc(count + 1, sizeof(char *));
	for (size_t i = 0; i < count; i++) {
		const char *equals = strchr(options[i], '=');
		step->option_keys[i] = equals ? xstrndup(options[i], (size_t)(equals - options[i]))
					      : xstrdup(options[i]);
		step->option_values[i] = equals ? xstrdup(equals + 1) : NULL;
	}
}

static struct mount_step *add_fs(struct mount_plan *plan, const char *type, const char *target,
				 uint64_t attributes, char *const *options)
{
	struct mount_step *step = add_step(plan, MOUNT_STEP_FS, type, target);
	step->type = xstrdup(type);
	step->attributes = attributes;
	set_options(step, options);
	return step;
}

static struct mount_step *add_bind(struct mount_plan *plan, const char *source, const char *target,
				   bool recursive)
{
	struct mount_step *step = add_step(plan, MOUNT_STEP_BIND, source, target);
	struct stat status;
	step->recursive = recursive;
	/* A file is bound onto a file. A source that is missing now fails in
	 * the child, which says so with the step. */
	step->target_is_file = stat(source, &status) == 0 && !S_ISDIR(status.st_mode);
	return step;
}

/* The host's nodes a task's /dev holds, bound rather than made with mknod:
 * that works in a user namespace too. */
static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

static void add_root_basics(struct mount_plan *plan, const struct isolation_config *config)
{
	if (config->namespaces & ISOLATION_NS_PID)
		add_fs(plan, "proc", "/proc", FS_ATTRIBUTES_NOEXEC, NULL);
	else
		add_bind(plan, "/proc", "/proc", true);
	add_bind(plan, "/sys", "/sys", true)->readonly = true;

	char *dev_options[] = {"mode=755", "size=64k", NULL};
	add_fs(plan, "tmpfs", "/dev", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, dev_options);
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]); i++) {
		char path[32];
		snprintf(path, sizeof(path), "/dev/%s", dev_nodes[i]);
		add_bind(plan, path, path, false)->device = true;
	}
	char *pts_options[] = {"newinstance", "ptmxmode=0666", "mode=0620", NULL};
	add_fs(plan, "devpts", "/dev/pts", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, pts_options);
	add_step(plan, MOUNT_STEP_SYMLINK, "pts/ptmx", "/dev/ptmx");
	char *shm_options[] = {"mode=1777", "size=64m", NULL};
	add_fs(plan, "tmpfs", "/dev/shm", FS_ATTRIBUTES_NOEXEC, shm_options);
	if (config->namespaces & ISOLATION_NS_IPC)
		add_fs(plan, "mqueue", "/dev/mqueue", FS_ATTRIBUTES_NOEXEC, NULL);
	add_step(plan, MOUNT_STEP_SYMLINK, "/proc/self/fd", "/dev/fd");
	add_step(plan, MOUNT_STEP_SYMLINK, "/proc/self/fd/0", "/dev/stdin");
	add_step(plan, MOUNT_STEP_SYMLINK, "/proc/self/fd/1", "/dev/stdout");
	add_step(plan, MOUNT_STEP_SYMLINK, "/proc/self/fd/2", "/dev/stderr");
}

/* The loader checks configured targets; a hook's are checked here. */
static bool target_is_valid(const char *target)
{
	return target && target[0] == '/' && target[strspn(target, "/")] != '\0' &&
	       !path_has_parent_component(target);
}

/* Mount flags, not file system data: fsconfig refuses them, and a bind
 * has no file system data at all. The loader takes them only as
 * `readonly`; CDI specs and hooks write them among the options, as OCI
 * does. */
static const struct {
	const char *name;
	uint64_t attribute; /* 0: the default, nothing to set */
} attribute_options[] = {
    {"nosuid", MOUNT_ATTR_NOSUID},
    {"nodev", MOUNT_ATTR_NODEV},
    {"noexec", MOUNT_ATTR_NOEXEC},
    {"suid", 0},
    {"dev", 0},
    {"exec", 0},
};

static bool take_attribute(struct mount_step *step, const char *option)
{
	if (strcmp(option, "ro") == 0 || strcmp(option, "rw") == 0) {
		step->readonly = option[1] == 'o';
		return true;
	}
	for (size_t i = 0; i < sizeof(attribute_options) / sizeof(*attribute_options); i++)
		if (strcmp(option, attribute_options[i].name) == 0) {
			step->attributes |= attribute_options[i].attribute;
			return true;
		}
	return false;
}

/* The mount's options: flags become the step's attributes; for a file
 * system the rest are its data, for a bind anything else is an error. */
static int take_options(struct mount_step *step, const struct mount_config *mount, char *error,
			size_t error_size)
{
	size_t count = 0;
	while (mount->options && mount->options[count])
		count++;
	char **data = xcalloc(count + 1, sizeof(*data));
	size_t kept = 0;
	int result = 0;
	for (size_t i = 0; i < count && result == 0; i++) {
		if (take_attribute(step, mount->options[i]))
			continue;
		if (step->kind == MOUNT_STEP_FS) {
			data[kept++] = mount->options[i];
			continue;
		}
		snprintf(error, error_size,
			 "bind %s on %s: unknown option \"%s\" (a bind takes nosuid, nodev, "
			 "noexec, suid, dev, exec, ro and rw)",
			 mount->source, mount->target, mount->options[i]);
		result = -1;
	}
	if (result == 0)
		set_options(step, data);
	free(data);
	return result;
}

static int add_mount(struct mount_plan *plan, const struct mount_config *mount, char *error,
		     size_t error_size)
{
	if (!target_is_valid(mount->target)) {
		snprintf(error, error_size,
			 "mount on %s: the target must be an absolute path below /, without ..",
			 mount->target ? mount->target : "(none)");
		return -1;
	}
	struct mount_step *step;
	if (mount->type) {
		step = add_fs(plan, mount->type, mount->target, FS_ATTRIBUTES, NULL);
		if (mount->source) {
			free(step->source);
			step->source = xstrdup(mount->source);
		}
	} else {
		if (!mount->source || mount->source[0] != '/') {
			snprintf(error, error_size,
				 "bind on %s: the source must be an absolute path", mount->target);
			return -1;
		}
		step = add_bind(plan, mount->source, mount->target, true);
	}
	step->readonly = mount->readonly;
	step->propagation = mount->propagation;
	step->shared_with_host = mount->bidirectional;
	return take_options(step, mount, error, error_size);
}

static int add_device(struct mount_plan *plan, const struct device_config *device, char *error,
		      size_t error_size)
{
	const char *target = device->target ? device->target : device->source;
	if (!device->source || device->source[0] != '/' || !target_is_valid(target)) {
		snprintf(error, error_size,
			 "device %s: source and target must be absolute paths, without ..",
			 device->source ? device->source : "(none)");
		return -1;
	}
	add_bind(plan, device->source, target, false)->device = true;
	return 0;
}

int mount_plan_build(struct mount_plan *plan, const struct isolation_config *config,
		     const struct start_additions *additions, char *error, size_t error_size)
{
	static const struct start_additions none;
	if (!additions)
		additions = &none;
	memset(plan, 0, sizeof(*plan));
	plan->rootfs = config->rootfs ? xstrdup(config->rootfs) : NULL;
	plan->readonly_rootfs = config->readonly_rootfs;
	plan->has_additions = additions->mount_count || additions->device_count;
	if (plan->rootfs)
		add_root_basics(plan, config);
	for (size_t i = 0; i < config->mount_count; i++)
		if (add_mount(plan, &config->mounts[i], error, error_size) < 0)
			goto fail;
	for (size_t i = 0; i < additions->mount_count; i++)
		if (add_mount(plan, &additions->mounts[i], error, error_size) < 0)
			goto fail;
	for (size_t i = 0; i < config->device_count; i++)
		if (add_device(plan, &config->devices[i], error, error_size) < 0)
			goto fail;
	for (size_t i = 0; i < additions->device_count; i++)
		if (add_device(plan, &additions->devices[i], error, error_size) < 0)
			goto fail;
	return 0;
fail:
	mount_plan_free(plan);
	return -1;
}

void mount_plan_free(struct mount_plan *plan)
{
	for (size_t i = 0; i < plan->step_count; i++) {
		struct mount_step *step = &plan->steps[i];
		free(step->type);
		free(step->source);
		free(step->target);
		/* A value may be NULL (a flag): free them by the keys' count. */
		for (size_t j = 0; step->option_keys && step->option_keys[j]; j++)
			free(step->option_values[j]);
		free(step->option_values);
		string_vector_free(step->option_keys);
	}
	free(plan->steps);
	free(plan->rootfs);
	memset(plan, 0, sizeof(*plan));
}

void mount_plan_describe_step(const struct mount_plan *plan, int index, char *buffer, size_t size)
{
	if (index < 0 || (size_t)index >= plan->step_count) {
		snprintf(buffer, size, "mount step #%d", index + 1);
		return;
	}
	const struct mount_step *step = &plan->steps[index];
	switch (step->kind) {
	case MOUNT_STEP_BIND:
		snprintf(buffer, size, "bind %s%s on %s", step->device ? "device " : "",
			 step->source, step->target);
		break;
	case MOUNT_STEP_FS:
		snprintf(buffer, size, "mount %s on %s", step->type, step->target);
		break;
	case MOUNT_STEP_SYMLINK:
		snprintf(buffer, size, "symlink %s -> %s", step->target, step->source);
		break;
	}
}

void mount_plan_describe_failure(const struct mount_plan *plan, int stage, int index,
				 const char *reason, char *buffer, size_t size)
{
	const char *rootfs = plan && plan->rootfs ? plan->rootfs : "/";
	char step[PATH_MAX + 64];
	if (plan)
		mount_plan_describe_step(plan, index, step, sizeof(step));
	else
		snprintf(step, sizeof(step), "mount step #%d", index + 1);
	switch (stage) {
	case SPAWN_STAGE_ROOTFS:
		snprintf(buffer, size, "bind the rootfs %s onto itself: %s", rootfs, reason);
		break;
	case SPAWN_STAGE_MOUNT_TARGET:
		snprintf(buffer, size, "%s: make the mount point: %s", step, reason);
		break;
	case SPAWN_STAGE_MOUNT:
		snprintf(buffer, size, "%s: %s", step, reason);
		break;
	case SPAWN_STAGE_PIVOT_ROOT:
		snprintf(buffer, size, "pivot_root into %s: %s", rootfs, reason);
		break;
	default:
		snprintf(buffer, size, "make the root %s read-only: %s", rootfs, reason);
		break;
	}
}
