/* Building and releasing a task's start additions (config.h's struct
 * start_additions): what prestart hooks, built-in (CDI, task directories)
 * or external, add to a task's mounts, devices and environment.
 *
 * Each append copies what it is given. An addition for a target that is
 * already there replaces the earlier one, as CDI's runtimes do: two specs
 * that both expose /dev/nvidiactl give one device, the last one written. */
#pragma once

#include "config/model/config.h"

/* A deep copy of `mount` (strings and options), replacing any earlier
 * mount at the same target. */
void start_additions_append_mount(struct start_additions *additions,
				  const struct mount_config *mount);

/* A copy of `device`, replacing any earlier device with the same target
 * (the target being the source when it has none). */
void start_additions_append_device(struct start_additions *additions,
				   const struct device_config *device);

/* "NAME=VALUE"; replaces an earlier entry of the same NAME. Returns -EINVAL
 * (and adds nothing) for text without '=' or with an empty name. */
int start_additions_append_env(struct start_additions *additions, const char *entry);

/* Appends everything of `from` to `to`, with the rules above. */
void start_additions_merge(struct start_additions *to, const struct start_additions *from);

/* Releases everything and leaves `additions` empty; takes an empty one. */
void start_additions_free(struct start_additions *additions);
