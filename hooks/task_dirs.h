/* The task directories built-in hook, after Nomad's layout: per group a
 * shared `alloc/` directory, per task a `local/` directory and a `secrets/`
 * tmpfs (mode 0700, noexec, nosuid, nodev, 1 MiB as in Nomad). On the
 * host they live under one tree per corral instance:
 *
 *   ROOT/PID/GROUP/alloc                 mode 0777, shared by the group
 *   ROOT/PID/GROUP/tasks/TASK/local      mode 0755, owned by the task's user
 *   ROOT/PID/GROUP/tasks/TASK/secrets    tmpfs, mode 0700, owned likewise
 *
 * ("tasks/" keeps a task named "alloc" apart from the group's directory.)
 * A task with its own root (isolation.rootfs, hence a mount namespace) sees
 * them at /alloc, /local and /secrets; any other task is told the host
 * paths, as Nomad's raw_exec does. Either way CORRAL_ALLOC_DIR,
 * CORRAL_TASK_DIR (local) and CORRAL_SECRETS_DIR say where they are.
 *
 * The directories outlive restarts of a task (a restarted task finds its
 * files, as in Nomad) and are removed with the whole instance tree when
 * corral exits. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/model/config.h"

#define TASK_DIRS_DEFAULT_ROOT "/run/corral/tasks"
#define TASK_DIRS_SECRETS_SIZE "1m"

/* Host paths of one task's directories. */
struct task_dirs {
	char *alloc;
	char *local;
	char *secrets;
};

/* ROOT/PID: the tree of one corral instance (`configured_root` NULL: the
 * default), so that two corrals never share one. The caller frees it. */
char *task_dirs_instance_root(const char *configured_root, pid_t pid);

/* Creates what is missing of the group's and the task's directories under
 * `instance_root` and mounts the secrets tmpfs unless it is mounted
 * already; local and secrets are given to uid:gid ((uid_t)-1 / (gid_t)-1:
 * keep root's). Returns 0 and fills `out`, or a negative errno with `error`
 * naming the step and the path ("task dirs: mount a tmpfs on PATH:
 * Operation not permitted"). */
int task_dirs_prepare(const char *instance_root, const char *group, const char *task, uid_t uid,
		      gid_t gid, struct task_dirs *out, char *error, size_t error_size);

/* Whether `task` sees its directories at /alloc, /local and /secrets (it
 * has its own root in its own mount namespace) rather than at their host
 * paths: mounting them on the host's own / would litter it. */
bool task_dirs_mounted_in_task(const struct task_config *task);

/* Appends the mounts (when `in_task`) and the three variables. */
void task_dirs_additions(const struct task_dirs *dirs, bool in_task, struct start_additions *out);

void task_dirs_free(struct task_dirs *dirs);

/* Unmounts every mount under `instance_root` (the secrets tmpfs) and
 * removes the tree, without following links or crossing into other file
 * systems; then removes the configured root too when that left it empty.
 * A tree that is not there is not an error. Returns 0 or a negative errno
 * with `error` written (what was left and why). */
int task_dirs_remove(const char *instance_root, char *error, size_t error_size);
