/* `corral inspect GROUP/TASK`: the effective definition of a task's current
 * (or last) run, and where each part came from (task_inspect.c). */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct task;

/* {task, state, pid, cgroup, command, executable, cwd, user, env [{name,
 * value, from}], namespaces, hostname, rootfs, mounts [{type, source,
 * target, readonly, from}], devices [{source, target, permissions, from}],
 * capabilities, seccomp, no_new_privileges, resources, after, hooks,
 * prestart_ran}. `from`: "config", "hook NAME", "cdi", "task_dirs",
 * "corral" or "corral's environment". Values of variables whose names
 * look secret are "***" unless `show_secrets`. */
json_t *task_inspect_json(const struct task *task, bool show_secrets);

/* PASSWORD, SECRET, TOKEN, CREDENTIAL, PRIVATE, *_KEY... in any case. */
bool inspect_name_is_secret(const char *name, size_t length);
