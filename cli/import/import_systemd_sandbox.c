/* A unit's sandbox (systemd.exec(5), "Sandboxing", "Security",
 * "Capabilities", "System Call Filtering", "Process Properties") into the
 * main task's `isolation:`. An isolated task gets corral's defaults for
 * what is not written (Docker's capabilities, corral's seccomp profile,
 * no_new_privileges), so capabilities, seccomp and no_new_privileges are
 * always written out, as the unit has them. What corral's isolation
 * cannot say (a filter on syscall arguments, PrivateUsers=...) is
 * reported. */
#include <ctype.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "cli/import/import_systemd.h"
#include "cli/import/import_systemd_sandbox.h"
#include "cli/import/systemd_syscall_groups.h"
#include "cli/import/systemd_values.h"
#include "isolation/seccomp_syscall_names.h"

#define BIT(capability) (UINT64_C(1) << (capability))

static const char *const namespace_names[NS_COUNT] = {"pid", "mount", "uts", "ipc", "net"};

struct unit_setting *sandbox_setting(struct sandbox *box, const char *key)
{
	struct unit_setting *found = unit_last(&box->unit->file, "Service", key);
	if (found)
		box->any = true;
	return found;
}

/* A boolean setting that is on. */
struct unit_setting *sandbox_enabled(struct sandbox *box, const char *key)
{
	struct unit_setting *found = sandbox_setting(box, key);
	return found && unit_boolean(found->value) == 1 ? found : NULL;
}

/* CapabilityBoundingSet= and AmbientCapabilities= as systemd merges
 * several lines: a list adds, ~list takes away, an empty value empties. */
static uint64_t capability_lines(struct sandbox *box, const char *key, uint64_t start,
				 bool *written)
{
	uint64_t all =
	    capability_count() >= 64 ? UINT64_MAX : (UINT64_C(1) << capability_count()) - 1;
	uint64_t set = start;
	bool started = false;
	*written = false;
	for (size_t i = 0; i < box->unit->file.count; i++) {
		struct unit_setting *line = &box->unit->file.settings[i];
		if (strcmp(line->section, "Service") != 0 || strcmp(line->key, key) != 0)
			continue;
		line->used = true;
		box->any = true;
		*written = true;
		if (!*line->value) {
			set = 0;
			started = true;
			continue;
		}
		uint64_t mask;
		bool inverted;
		char unknown[64];
		if (systemd_capabilities(line->value, &mask, &inverted, unknown, sizeof(unknown)) <
		    0) {
			unit_drop(box->unit, line, "unknown capability %s", unknown);
			continue;
		}
		if (inverted) {
			set = (started ? set : all) & ~mask;
		} else {
			set = (started ? set : 0) | mask;
		}
		started = true;
	}
	return set;
}

static void import_capabilities(struct sandbox *box)
{
	uint64_t all =
	    capability_count() >= 64 ? UINT64_MAX : (UINT64_C(1) << capability_count()) - 1;
	bool bounding_written, ambient_written;
	uint64_t bounding = capability_lines(box, "CapabilityBoundingSet", all, &bounding_written);
	uint64_t ambient = capability_lines(box, "AmbientCapabilities", 0, &ambient_written);
	bounding &= ~box->capabilities_removed;
	const char *user = box->unit->user;
	bool root = !user || strcmp(user, "root") == 0 || strcmp(user, "0") == 0;
	/* corral gives a task one set: its bounding, permitted, effective
	 * and (for a user other than root) ambient set. What a task holds
	 * under systemd is its bounding set as root, its ambient set
	 * otherwise. */
	uint64_t kept = root ? bounding : (ambient & bounding);
	struct ytree_node *capabilities = ytree_set(box->isolation, "capabilities", ytree_map());
	capabilities->flow = true;
	struct ytree_node *drop = ytree_set(capabilities, "drop", ytree_list());
	ytree_append(drop, ytree_plain("all"));
	struct ytree_node *add = ytree_set(capabilities, "add", ytree_list());
	if (kept == all) {
		ytree_append(add, ytree_plain("all"));
	} else {
		for (unsigned c = 0; c < capability_count(); c++)
			if (kept & BIT(c))
				ytree_append(add, ytree_string(capability_config_name(c)));
	}
	if (root)
		ytree_comment(box->isolation, "capabilities",
			      "as root the task holds its bounding set (CapabilityBoundingSet=%s)",
			      bounding_written ? "" : ", all by default");
	else
		ytree_comment(box->isolation, "capabilities",
			      "as %s the task holds its AmbientCapabilities= only; corral makes "
			      "them its bounding set too",
			      user);
}

static void deny_implied(struct sandbox *box, const char *names)
{
	char *copy = xstrdup(names), *save = NULL;
	for (char *word = strtok_r(copy, " ", &save); word; word = strtok_r(NULL, " ", &save))
		syscall_set_apply(&box->implied_deny, word, false);
	free(copy);
}

/* Syscall names of this machine's libseccomp only: corral checks every
 * name, and systemd's groups name syscalls of other architectures and
 * newer kernels (systemd skips them too). */
static struct ytree_node *syscall_list(const struct syscall_set *set, const char *const *never)
{
	const struct syscall_table *table = seccomp_syscall_names();
	char error[256];
	bool checkable = table->prepare(error, sizeof(error)) == 0;
	struct ytree_node *list = ytree_list();
	for (size_t i = 0; i < set->count; i++) {
		bool skipped = false;
		for (size_t n = 0; never && never[n]; n++)
			skipped |= strcmp(set->names[i], never[n]) == 0;
		if (!skipped && (!checkable || table->is_known(set->names[i])))
			ytree_append(list, ytree_string(set->names[i]));
	}
	return list;
}

static void import_seccomp(struct sandbox *box)
{
	struct systemd_unit *unit = box->unit;
	struct syscall_set filter = {0};
	int mode = 0; /* 1: allow list, -1: deny list */
	for (size_t i = 0; i < unit->file.count; i++) {
		struct unit_setting *line = &unit->file.settings[i];
		if (strcmp(line->section, "Service") != 0 ||
		    strcmp(line->key, "SystemCallFilter") != 0)
			continue;
		line->used = true;
		box->any = true;
		if (!*line->value) {
			syscall_set_free(&filter);
			mode = 0;
			continue;
		}
		bool inverted = line->value[0] == '~';
		if (!mode) {
			mode = inverted ? -1 : 1;
			if (mode == 1)
				syscall_set_apply(&filter, "@default", false);
		}
		/* In an allow list ~ takes names out; in a deny list a name
		 * without ~ is allowed again. */
		bool remove = (mode == 1) == inverted;
		char *copy = xstrdup(line->value + inverted), *save = NULL;
		for (char *word = strtok_r(copy, " \t", &save); word;
		     word = strtok_r(NULL, " \t", &save)) {
			char *colon = strchr(word, ':'); /* NAME:ERRNO */
			if (colon)
				*colon = '\0';
			if (!syscall_set_apply(&filter, word, remove))
				unit_drop(unit, line, "%s is no syscall group %s knows", word,
					  systemd_syscall_groups_version);
		}
		free(copy);
	}
	struct unit_setting *errno_setting = sandbox_setting(box, "SystemCallErrorNumber");
	struct unit_setting *log = sandbox_setting(box, "SystemCallLog");
	if (log)
		unit_drop(unit, log, "corral's seccomp logs with default_action: log only");
	if (mode || box->implied_deny.count)
		box->no_new_privileges = true;

	if (mode == 1) {
		for (size_t i = 0; i < box->implied_deny.count; i++)
			syscall_set_apply(&filter, box->implied_deny.names[i], true);
		if (box->namespaces & (1u << NS_PID)) {
			/* corral's reaper, PID 1 of the namespace, runs under
			 * the filter (docs/config.md, Seccomp). */
			static const char *const reaper[] = {
			    "prctl", "fcntl", "rt_sigprocmask", "clone", "rt_sigtimedwait",
			    "wait4", "kill",  "write",          NULL};
			for (size_t i = 0; reaper[i]; i++)
				syscall_set_apply(&filter, reaper[i], false);
		}
		struct ytree_node *seccomp = ytree_set(box->isolation, "seccomp", ytree_map());
		const char *action = errno_setting ? "errno" : "kill";
		ytree_set(seccomp, "default_action", ytree_plain(action));
		ytree_set(seccomp, "allow", syscall_list(&filter, NULL));
		ytree_comment(
		    box->isolation, "seccomp",
		    "SystemCallFilter= as an allow list: the groups of %s expanded, "
		    "with @default, less what ~ took out%s%s",
		    systemd_syscall_groups_version,
		    box->implied_deny.count ? " and what Protect*=/RestrictNamespaces= deny" : "",
		    box->namespaces & (1u << NS_PID) ? ", plus what corral's reaper calls" : "");
	} else if (mode == -1 || box->implied_deny.count) {
		for (size_t i = 0; i < box->implied_deny.count; i++)
			syscall_set_apply(&filter, box->implied_deny.names[i], false);
		static const char *const needed[] = {"execve", "execveat", "exit", "exit_group",
						     NULL};
		struct ytree_node *seccomp = ytree_set(box->isolation, "seccomp", ytree_map());
		ytree_set(seccomp, "default_action", ytree_plain("allow"));
		ytree_set(seccomp, "deny", syscall_list(&filter, needed));
		if (mode == -1 && !errno_setting)
			ytree_comment(
			    box->isolation, "seccomp",
			    "SystemCallFilter=~: corral fails a denied syscall with EPERM "
			    "where systemd kills the process");
		else
			ytree_comment(
			    box->isolation, "seccomp",
			    "what Protect*=/RestrictNamespaces= deny, failing with EPERM");
	} else {
		ytree_set(box->isolation, "seccomp", ytree_plain("unconfined"));
	}
	if (errno_setting && strcmp(errno_setting->value, "EPERM") != 0)
		ytree_comment(box->isolation, "seccomp",
			      "SystemCallErrorNumber=%s: corral's errno is always EPERM",
			      errno_setting->value);
	syscall_set_free(&filter);
}

struct rlimit_key {
	const char *key, *name;
	bool bytes;
};

static const struct rlimit_key rlimit_keys[] = {
    {"LimitCPU", "cpu", false},          {"LimitFSIZE", "fsize", true},
    {"LimitDATA", "data", true},         {"LimitSTACK", "stack", true},
    {"LimitCORE", "core", true},         {"LimitRSS", "rss", true},
    {"LimitNOFILE", "nofile", false},    {"LimitAS", "as", true},
    {"LimitNPROC", "nproc", false},      {"LimitMEMLOCK", "memlock", true},
    {"LimitLOCKS", "locks", false},      {"LimitSIGPENDING", "sigpending", false},
    {"LimitMSGQUEUE", "msgqueue", true}, {"LimitNICE", "nice", false},
    {"LimitRTPRIO", "rtprio", false},    {"LimitRTTIME", "rttime", false},
};

/* One side of a Limit*= value, as corral's rlimits take it. NULL when it
 * cannot be read. */
static struct ytree_node *rlimit_value(const struct rlimit_key *key, const char *text,
				       bool *infinite_nofile)
{
	if (strcmp(text, "infinity") == 0) {
		if (strcmp(key->name, "nofile") == 0) {
			*infinite_nofile = true;
			/* The kernel takes no RLIM_INFINITY for nofile: its
			 * bound is fs.nr_open, 1048576 by default. */
			return ytree_plain("1048576");
		}
		return ytree_plain("unlimited");
	}
	uint64_t value;
	bool infinite;
	if (strcmp(key->name, "cpu") == 0) {
		uint64_t ms;
		if (systemd_timespan_ms(text, &ms, &infinite) < 0)
			return NULL;
		return ytree_plainf("%llu", (unsigned long long)(ms / 1000));
	}
	if (strcmp(key->name, "rttime") == 0) {
		uint64_t ms;
		if (!isdigit((unsigned char)text[strlen(text) - 1])) {
			if (systemd_timespan_ms(text, &ms, &infinite) < 0)
				return NULL;
			return ytree_plainf("%llu", (unsigned long long)(ms * 1000));
		}
	}
	if (strcmp(key->name, "nice") == 0 && (text[0] == '-' || text[0] == '+')) {
		long nice = strtol(text, NULL, 10);
		return ytree_plainf("%ld", 20 - nice);
	}
	if (systemd_size_bytes(text, &value, &infinite) < 0 ||
	    (!key->bytes && !isdigit((unsigned char)text[strlen(text) - 1])))
		return NULL;
	return ytree_plainf("%llu", (unsigned long long)value);
}

static void import_rlimits(struct sandbox *box)
{
	struct ytree_node *rlimits = NULL;
	for (size_t k = 0; k < sizeof(rlimit_keys) / sizeof(rlimit_keys[0]); k++) {
		struct unit_setting *line = sandbox_setting(box, rlimit_keys[k].key);
		if (!line)
			continue;
		char *copy = xstrdup(line->value);
		char *colon = strchr(copy, ':');
		if (colon)
			*colon = '\0';
		bool infinite_nofile = false;
		struct ytree_node *soft = rlimit_value(&rlimit_keys[k], copy, &infinite_nofile);
		struct ytree_node *hard =
		    colon ? rlimit_value(&rlimit_keys[k], colon + 1, &infinite_nofile) : NULL;
		if (!soft || (colon && !hard)) {
			unit_drop(box->unit, line, "not a limit systemd reads");
			ytree_free(soft);
			ytree_free(hard);
			free(copy);
			continue;
		}
		if (!rlimits) {
			rlimits = ytree_set(box->isolation, "rlimits", ytree_map());
			rlimits->flow = true;
		}
		if (hard) {
			struct ytree_node *pair = ytree_list();
			ytree_append(pair, soft);
			ytree_append(pair, hard);
			ytree_set(rlimits, rlimit_keys[k].name, pair);
		} else {
			ytree_set(rlimits, rlimit_keys[k].name, soft);
		}
		if (infinite_nofile)
			ytree_comment(box->isolation, "rlimits",
				      "LimitNOFILE=infinity: 1048576, the kernel's default "
				      "fs.nr_open, which bounds it");
		free(copy);
	}
}

/* Settings corral's isolation cannot express, and why. */
static void report_unsupported(struct sandbox *box)
{
	static const struct {
		const char *key, *why;
	} unsupported[] = {
	    {"PrivateUsers",
	     "corral's user namespace maps the ranges isolation.user names; systemd's maps root "
	     "and the unit's user only. Write isolation.user (and user in namespaces) by hand"},
	    {"RestrictAddressFamilies",
	     "needs a seccomp rule on socket()'s arguments, which isolation.seccomp does not take"},
	    {"RestrictRealtime", "needs a seccomp rule on sched_setscheduler()'s arguments, which "
				 "isolation.seccomp does not take (rlimits: {rtprio: 0} is close)"},
	    {"MemoryDenyWriteExecute",
	     "needs a seccomp rule on mmap() and mprotect()'s arguments, which isolation.seccomp "
	     "does not take"},
	    {"RestrictSUIDSGID",
	     "needs a seccomp rule on chmod()'s arguments, which isolation.seccomp does not take"},
	    {"LockPersonality", "needs a seccomp rule on personality()'s argument, which "
				"isolation.seccomp does not take"},
	    {"SystemCallArchitectures",
	     "corral's filter covers the native architecture and its compat ones (x86, x32 on "
	     "x86_64) with the same list"},
	    {"RemoveIPC", "corral does not remove a user's System V IPC objects at a stop"},
	    {"ExecPaths", "corral mounts no path noexec"},
	    {"NoExecPaths", "corral mounts no path noexec"},
	    {"ProcSubset",
	     "corral's /proc is whole (a pid namespace shows the task's own processes only)"},
	    {"KeyringMode", "corral gives the task no session keyring of its own"},
	    {"IPAddressAllow", "corral filters no IP addresses"},
	    {"IPAddressDeny", "corral filters no IP addresses"},
	    {"Personality", "corral sets no execution domain"},
	    {"SecureBits", "corral sets no secure bits"},
	    {"AppArmorProfile", "corral loads no AppArmor profile"},
	    {"SELinuxContext", "corral sets no SELinux context"},
	    {"SmackProcessLabel", "corral sets no SMACK label"},
	    {"RestrictFileSystems", "needs a BPF LSM program, which corral does not load"},
	    {"MountFlags", "a task's mounts are private to it, with what mounts: says"},
	    {"RootImage", "corral takes an unpacked root (isolation.rootfs), not an image"},
	    {"TemporaryFileSystem", NULL},
	    {"Delegate", "corral keeps the task's cgroup; the task may not manage one below it"},
	    {"Nice", "corral sets no nice value"},
	    {"CPUSchedulingPolicy", "corral sets no scheduling policy"},
	    {"CPUSchedulingPriority", "corral sets no scheduling priority"},
	    {"IOSchedulingClass", "corral sets no I/O scheduling class"},
	    {"IOSchedulingPriority", "corral sets no I/O scheduling priority"},
	    {"CPUAffinity", "corral sets cgroup cpusets (resources.cpuset: AllowedCPUs=)"},
	};
	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		if (!unsupported[i].why)
			continue;
		struct unit_setting *line =
		    unit_last(&box->unit->file, "Service", unsupported[i].key);
		if (line && *line->value && unit_boolean(line->value) != 0)
			unit_drop(box->unit, line, "%s", unsupported[i].why);
	}
}

void systemd_import_sandbox(struct systemd_unit *unit)
{
	struct sandbox box = {.unit = unit};
	box.isolation = ytree_map();
	struct unit_setting *found;

	if ((found = sandbox_enabled(&box, "PrivateTmp"))) {
		sandbox_add_tmpfs(&box, "/tmp", "1777", false);
		sandbox_add_tmpfs(&box, "/var/tmp", "1777", false);
	}
	if ((found = sandbox_enabled(&box, "PrivateNetwork")))
		box.namespaces |= 1u << NS_NET;
	if ((found = sandbox_enabled(&box, "PrivateIPC")))
		box.namespaces |= 1u << NS_IPC;
	if ((found = sandbox_enabled(&box, "ProtectHostname"))) {
		box.namespaces |= 1u << NS_UTS;
		box.no_new_privileges = true;
	}
	if ((found = sandbox_setting(&box, "ProtectProc")) &&
	    strcmp(found->value, "default") != 0) {
		box.namespaces |= 1u << NS_PID;
		ytree_comment(box.isolation, "namespaces",
			      "ProtectProc=%s: a pid namespace, whose /proc shows the task's own "
			      "processes only",
			      found->value);
	}
	if ((found = sandbox_enabled(&box, "PrivatePIDs")))
		box.namespaces |= 1u << NS_PID;
	if ((found = sandbox_enabled(&box, "PrivateDevices"))) {
		box.capabilities_removed |= BIT(CAP_MKNOD) | BIT(CAP_SYS_RAWIO);
		deny_implied(&box, "@raw-io");
		box.no_new_privileges = true;
	}
	if ((found = sandbox_enabled(&box, "ProtectKernelModules"))) {
		box.capabilities_removed |= BIT(CAP_SYS_MODULE);
		deny_implied(&box, "@module");
		box.no_new_privileges = true;
	}
	if ((found = sandbox_enabled(&box, "ProtectClock"))) {
		box.capabilities_removed |= BIT(CAP_SYS_TIME) | BIT(CAP_WAKE_ALARM);
		deny_implied(&box, "@clock");
		box.no_new_privileges = true;
	}
	if ((found = sandbox_enabled(&box, "ProtectKernelLogs"))) {
		box.capabilities_removed |= BIT(CAP_SYSLOG);
		deny_implied(&box, "syslog");
		box.namespaces |= 1u << NS_MOUNT;
		box.no_new_privileges = true;
	}
	bool tunables = sandbox_enabled(&box, "ProtectKernelTunables") != NULL;
	bool cgroups = sandbox_enabled(&box, "ProtectControlGroups") != NULL;
	if (tunables || cgroups) {
		box.namespaces |= 1u << NS_MOUNT;
		box.no_new_privileges |= tunables;
	}
	if ((found = sandbox_setting(&box, "RestrictNamespaces"))) {
		if (unit_boolean(found->value) == 1) {
			deny_implied(&box, "setns unshare");
			box.no_new_privileges = true;
		} else if (unit_boolean(found->value) != 0) {
			unit_drop(unit, found,
				  "corral can deny setns and unshare (RestrictNamespaces=yes), not "
				  "some namespaces only");
		}
	}
	if ((found = sandbox_enabled(&box, "NoNewPrivileges")))
		box.no_new_privileges = true;
	/* Settings systemd says imply NoNewPrivileges=yes, though corral
	 * cannot carry them. */
	static const char *const implying[] = {"RestrictAddressFamilies",
					       "MemoryDenyWriteExecute",
					       "RestrictRealtime",
					       "RestrictSUIDSGID",
					       "LockPersonality",
					       "SystemCallArchitectures",
					       NULL};
	for (size_t i = 0; implying[i]; i++) {
		struct unit_setting *line = unit_last(&unit->file, "Service", implying[i]);
		if (line && *line->value && unit_boolean(line->value) != 0) {
			box.no_new_privileges = true;
			box.any = true;
		}
	}
	found = sandbox_setting(&box, "PrivateMounts");
	if (found && unit_boolean(found->value) == 1)
		box.namespaces |= 1u << NS_MOUNT;

	sandbox_import_mounts(&box);
	if ((found = sandbox_setting(&box, "UMask"))) {
		char *end;
		unsigned long mask = strtoul(found->value, &end, 8);
		if (*end || mask > 0777)
			unit_drop(unit, found, "not an octal umask");
		else
			ytree_set(box.isolation, "umask", ytree_plainf("\"%04lo\"", mask));
	}
	import_rlimits(&box);
	report_unsupported(&box);

	if (!box.any) {
		ytree_free(box.isolation);
		syscall_set_free(&box.implied_deny);
		return;
	}
	if (unit->privileged_main) {
		ytree_comment(
		    unit->task, "command",
		    "ExecStart=+: the unit's sandbox does not apply to it, as in systemd");
		ytree_free(box.isolation);
		syscall_set_free(&box.implied_deny);
		return;
	}
	/* The map in the order a reader looks for things. */
	struct ytree_node *isolation = ytree_set(unit->task, "isolation", ytree_map());
	if (box.namespaces) {
		struct ytree_node *namespaces = ytree_set(isolation, "namespaces", ytree_list());
		for (unsigned n = 0; n < NS_COUNT; n++)
			if (box.namespaces & (1u << n))
				ytree_append(namespaces, ytree_plain(namespace_names[n]));
		if (box.namespaces & (1u << NS_MOUNT))
			ytree_comment(
			    isolation, "namespaces",
			    "mount: /sys and /proc's kernel knobs are read-only in the task "
			    "(ProtectKernelTunables=, ProtectControlGroups=)");
	}
	/* These three always, as the unit has them, after the namespaces;
	 * what was collected above follows. */
	struct ytree_node *collected = box.isolation;
	box.isolation = isolation;
	import_capabilities(&box);
	import_seccomp(&box);
	ytree_set(isolation, "no_new_privileges",
		  ytree_plain(box.no_new_privileges ? "true" : "false"));
	box.isolation = collected;
	for (size_t i = 0; i < box.isolation->count; i++) {
		struct ytree_entry *entry = &box.isolation->entries[i];
		if (strcmp(entry->key, "namespaces") == 0) {
			/* the comment only: the list is written above */
			for (size_t c = 0; c < entry->comment_count && box.namespaces; c++)
				ytree_comment(isolation, "namespaces", "%s", entry->comments[c]);
			continue;
		}
		ytree_set(isolation, entry->key, entry->value);
		for (size_t c = 0; c < entry->comment_count; c++)
			ytree_comment(isolation, entry->key, "%s", entry->comments[c]);
		entry->value = NULL;
	}
	if (box.mounts) {
		ytree_set(isolation, "mounts", box.mounts);
		box.mounts = NULL;
	}
	struct unit_setting *private_devices = unit_last(&unit->file, "Service", "PrivateDevices");
	struct unit_setting *policy = unit_last(&unit->file, "Service", "DevicePolicy");
	bool devices_closed = (private_devices && unit_boolean(private_devices->value) == 1) ||
			      (policy && strcmp(policy->value, "auto") != 0);
	ytree_comment(unit->task, "isolation",
		      "an isolated task opens only the default devices (/dev/null, zero, full, "
		      "random, urandom, tty, pts)%s",
		      devices_closed ? ", as the unit's device policy" : "; systemd allowed all");
	if (!devices_closed)
		/* Not a line of the unit, but what it leaves at systemd's
		 * default: the translation takes something away, so say it. */
		import_drop(unit->report, unit->file.path, 0,
			    "DevicePolicy=auto (systemd's default: every device)",
			    "isolation: (for the unit's sandbox, Limit* or UMask=) gives the task "
			    "corral's device policy: only the default devices open. List what it "
			    "needs in isolation.devices");
	ytree_free(box.isolation);
	syscall_set_free(&box.implied_deny);
}
