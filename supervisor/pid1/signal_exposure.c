#include "supervisor/pid1/signal_exposure.h"

#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long configured_uid(const struct task_config *task, uid_t corral_uid)
{
	if (!task->user)
		return (task->isolation.enabled && (task->isolation.namespaces & ISOLATION_NS_USER))
			   ? 0 /* root inside its own user namespace */
			   : (long)corral_uid;
	char name[256];
	snprintf(name, sizeof(name), "%s", task->user);
	name[strcspn(name, ":")] = '\0';
	char *end;
	unsigned long number = strtoul(name, &end, 10);
	if (name[0] && !*end)
		return (long)number;
	struct passwd *entry = getpwnam(name);
	return entry ? (long)entry->pw_uid : -1;
}

long signal_exposure_host_uid(const struct task_config *task, uid_t corral_uid)
{
	long uid = configured_uid(task, corral_uid);
	if (uid < 0 || !task->isolation.enabled ||
	    !(task->isolation.namespaces & ISOLATION_NS_USER))
		return uid;
	for (size_t i = 0; i < task->isolation.uid_map_count; i++) {
		const struct id_map_range *range = &task->isolation.uid_map[i];
		if ((unsigned long)uid >= range->inside &&
		    (unsigned long)uid - range->inside < range->count)
			return (long)(range->outside + ((unsigned long)uid - range->inside));
	}
	return -1;
}

bool signal_exposure_task_can_signal(const struct task_config *task, uid_t corral_uid)
{
	const struct isolation_config *isolation = &task->isolation;
	if (isolation->enabled && (isolation->namespaces & ISOLATION_NS_PID))
		return false;
	long uid = signal_exposure_host_uid(task, corral_uid);
	if (uid == 0 || uid == (long)corral_uid)
		return true;
	/* Without isolation a task keeps what its user gets; with it, the
	 * capabilities it lists. */
	return isolation->enabled && (isolation->capabilities & (1ull << CAP_KILL));
}

bool signal_exposure_confined_task_can_signal(const struct task_config *task, uid_t corral_uid)
{
	return task->isolation.enabled && signal_exposure_task_can_signal(task, corral_uid);
}

size_t signal_exposure_list(const struct config *config, uid_t corral_uid, char *buffer,
			    size_t size)
{
	size_t count = 0, used = 0;
	buffer[0] = '\0';
	for (size_t g = 0; g < config->group_count; g++)
		for (size_t t = 0; t < config->groups[g].task_count; t++) {
			const struct task_config *task = &config->groups[g].tasks[t];
			if (!signal_exposure_confined_task_can_signal(task, corral_uid))
				continue;
			if (count < 5 && used < size)
				used += (size_t)snprintf(buffer + used, size - used, "%s%s",
							 count ? ", " : "", task->full_name);
			else if (count == 5 && used < size)
				used += (size_t)snprintf(buffer + used, size - used, ", ...");
			count++;
		}
	return count;
}

bool signal_exposure_warning(const struct config *config, uid_t corral_uid, char *buffer,
			     size_t size)
{
	char names[512];
	size_t count = signal_exposure_list(config, corral_uid, names, sizeof(names));
	if (!count)
		return false;
	snprintf(
	    buffer, size,
	    "%zu isolated task%s (%s) run%s as root or corral's uid %u in corral's pid "
	    "namespace: %s can stop (SIGSTOP) or kill (SIGKILL) corral, which no control: "
	    "list can refuse; give %s a pid namespace (isolation.namespaces: [pid]) or another "
	    "user. (Not so where corral is PID 1 of its own pid namespace, as in a "
	    "container: the kernel keeps those two signals from inside away from it.)",
	    count, count == 1 ? "" : "s", names, count == 1 ? "s" : "", (unsigned)corral_uid,
	    count == 1 ? "it" : "they", count == 1 ? "it" : "them");
	return true;
}
