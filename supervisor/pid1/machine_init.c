#include "supervisor/pid1/machine_init.h"

#include <errno.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"

/* The inode of the initial pid namespace's nsfs file: a kernel constant
 * (PROC_PID_INIT_INO), the same on every boot. */
#define INITIAL_PID_NAMESPACE_INODE 0xEFFFFFFCU

/* A fact about the process, found once at start: not state that changes. */
static bool is_machine_init;

bool machine_init_active(void)
{
	return is_machine_init;
}

static void mount_if_missing(const char *source, const char *target, const char *type,
			     unsigned long flags, const char *probe)
{
	struct stat status;
	if (stat(probe, &status) == 0)
		return; /* already there */
	mkdir(target, 0755);
	if (mount(source, target, type, flags, NULL) < 0 && errno != EBUSY)
		log_message("as init: mounting %s on %s: %m", type, target);
}

bool machine_init_prepare(void)
{
	if (getpid() != 1)
		return false;
	mount_if_missing("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "/proc/self");
	struct stat namespace;
	if (stat("/proc/self/ns/pid", &namespace) < 0 ||
	    namespace.st_ino != INITIAL_PID_NAMESPACE_INODE)
		return false; /* a container's PID 1 */
	mount_if_missing("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "/sys/kernel");
	mount_if_missing("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "/dev/null");
	/* Pure cgroup v2, as systemd mounts it: each task gets its cgroup. */
	mount_if_missing("cgroup2", "/sys/fs/cgroup", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			 "/sys/fs/cgroup/cgroup.controllers");
	is_machine_init = true;
	return true;
}

void machine_init_power_off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	/* Only reached without CAP_SYS_BOOT; exiting is all that is left. */
	log_message("as init: power off failed: %m");
}
