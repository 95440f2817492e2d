#include "hooks/start_additions.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

static void mount_config_release(struct mount_config *mount)
{
	free(mount->type);
	free(mount->source);
	free(mount->target);
	string_vector_free(mount->options);
	*mount = (struct mount_config){0};
}

static void device_config_release(struct device_config *device)
{
	free(device->source);
	free(device->target);
	*device = (struct device_config){0};
}

static char *copy_or_null(const char *text)
{
	return text ? xstrdup(text) : NULL;
}

void start_additions_append_mount(struct start_additions *additions,
				  const struct mount_config *mount)
{
	struct mount_config copy = {
	    .type = copy_or_null(mount->type),
	    .source = copy_or_null(mount->source),
	    .target = copy_or_null(mount->target),
	    .options = string_vector_copy(mount->options),
	    .readonly = mount->readonly,
	    .propagation = mount->propagation,
	};

	for (size_t i = 0; i < additions->mount_count; i++) {
		struct mount_config *old = &additions->mounts[i];

		if (old->target && copy.target && strcmp(old->target, copy.target) == 0) {
			mount_config_release(old);
			*old = copy;
			return;
		}
	}
	additions->mounts = xreallocarray(additions->mounts, additions->mount_count + 1,
					  sizeof(*additions->mounts));
	additions->mounts[additions->mount_count++] = copy;
}

static const char *device_target(const struct device_config *device)
{
	return device->target ? device->target : device->source;
}

void start_additions_append_device(struct start_additions *additions,
				   const struct device_config *device)
{
	struct device_config copy = {
	    .source = copy_or_null(device->source),
	    .target = copy_or_null(device->target),
	    .permissions = device->permissions,
	};

	for (size_t i = 0; i < additions->device_count; i++) {
		struct device_config *old = &additions->devices[i];

		if (device_target(old) && device_target(&copy) &&
		    strcmp(device_target(old), device_target(&copy)) == 0) {
			device_config_release(old);
			*old = copy;
			return;
		}
	}
	additions->devices = xreallocarray(additions->devices, additions->device_count + 1,
					   sizeof(*additions->devices));
	additions->devices[additions->device_count++] = copy;
}

int start_additions_append_env(struct start_additions *additions, const char *entry)
{
	const char *equals = strchr(entry, '=');
	size_t name_length, count = 0;

	if (!equals || equals == entry)
		return -EINVAL;
	name_length = (size_t)(equals - entry) + 1; /* with the '=' */
	for (; additions->env && additions->env[count]; count++) {
		if (strncmp(additions->env[count], entry, name_length) == 0) {
			free(additions->env[count]);
			additions->env[count] = xstrdup(entry);
			return 0;
		}
	}
	additions->env = xreallocarray(additions->env, count + 2, sizeof(*additions->env));
	additions->env[count] = xstrdup(entry);
	additions->env[count + 1] = NULL;
	return 0;
}

void start_additions_merge(struct start_additions *to, const struct start_additions *from)
{
	for (size_t i = 0; i < from->mount_count; i++)
		start_additions_append_mount(to, &from->mounts[i]);
	for (size_t i = 0; i < from->device_count; i++)
		start_additions_append_device(to, &from->devices[i]);
	for (size_t i = 0; from->env && from->env[i]; i++)
		start_additions_append_env(to, from->env[i]);
}

void start_additions_free(struct start_additions *additions)
{
	for (size_t i = 0; i < additions->mount_count; i++)
		mount_config_release(&additions->mounts[i]);
	free(additions->mounts);
	for (size_t i = 0; i < additions->device_count; i++)
		device_config_release(&additions->devices[i]);
	free(additions->devices);
	string_vector_free(additions->env);
	*additions = (struct start_additions){0};
}
