/* Which tasks can signal corral at all. SIGSTOP and SIGKILL cannot be
 * caught, blocked or judged: a task that can send corral a signal can
 * freeze or kill it, whatever its `control:` list says. The kernel lets a
 * process signal corral when it sees corral's pid (it shares corral's pid
 * namespace) and its uid is corral's, or it holds CAP_KILL. When corral
 * is PID 1 of its own pid namespace (a container), the kernel drops
 * SIGSTOP and SIGKILL sent to it from inside that namespace, so the
 * exposure is the host mode's (docs/reliability.md, threat model). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/model/config.h"

/* The uid the task's processes have outside any user namespace: its
 * `user:` (a number, or a name looked up), corral's own without one,
 * mapped through the uid map with a user namespace. -1 when it cannot be
 * told (an unknown name, an unmapped uid). */
long signal_exposure_host_uid(const struct task_config *task, uid_t corral_uid);

/* The task shares corral's pid namespace and runs as root or corral's
 * uid, or keeps CAP_KILL: it can send corral any signal. */
bool signal_exposure_task_can_signal(const struct task_config *task, uid_t corral_uid);

/* The same for a task with `isolation:`, whose confinement a signal to
 * corral would get round. A task without it keeps corral's capabilities
 * (as root: it could ptrace or kill corral anyway), so only the isolated
 * ones are warned of, and only they make a gone sender suspect. */
bool signal_exposure_confined_task_can_signal(const struct task_config *task, uid_t corral_uid);

/* "web/app, db/x": the isolated tasks (`isolation:`) of `config` that
 * can, up to `size`; how many there are. A task without `isolation:` is
 * not listed: it keeps corral's capabilities and can do worse than a
 * signal, so a warning there would only be noise on every config. */
size_t signal_exposure_list(const struct config *config, uid_t corral_uid, char *buffer,
			    size_t size);

/* The warning `corral check` and `corral run` (in host mode) give when a
 * task can: into `buffer`; false when none can. */
bool signal_exposure_warning(const struct config *config, uid_t corral_uid, char *buffer,
			     size_t size);
