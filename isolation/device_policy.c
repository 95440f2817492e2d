#include "isolation/device_policy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/xmalloc.h"

/* Most isolated tasks have the default rules alone: they share one loaded
 * program (the verifier runs once; one program in the kernel, attached to
 * each of their cgroups), as they share the default seccomp program. */
static int default_program_fd = -1;
static unsigned default_program_users;

void device_policy_init(struct device_policy *policy)
{
	*policy = (struct device_policy){.program_fd = -1};
}

static void give_back_program(struct device_policy *policy)
{
	if (policy->shares_default_program) {
		if (--default_program_users == 0) {
			close(default_program_fd);
			default_program_fd = -1;
		}
	} else if (policy->program_fd >= 0) {
		close(policy->program_fd);
	}
	policy->program_fd = -1;
	policy->shares_default_program = false;
}

void device_policy_release(struct device_policy *policy)
{
	give_back_program(policy);
	free(policy->rules);
	device_policy_init(policy);
}

/* Appends the rule of each device, as its node is now. */
static int add_device_rules(struct device_rule *rules, size_t *count,
			    const struct device_config *devices, size_t device_count, char *error,
			    size_t error_size)
{
	for (size_t i = 0; i < device_count; i++) {
		struct stat status;
		if (stat(devices[i].source, &status) < 0) {
			int failure = -errno;
			snprintf(error, error_size, "device policy: %s: %s", devices[i].source,
				 strerror(-failure));
			return failure;
		}
		if (!device_rule_for_node(status.st_mode, status.st_rdev, devices[i].permissions,
					  &rules[*count])) {
			snprintf(error, error_size,
				 "device policy: %s is not a character or block device",
				 devices[i].source);
			return -ENODEV;
		}
		(*count)++;
	}
	return 0;
}

/* ---- cgroup v2: the BPF program ---- */

static int bpf_call(int command, union bpf_attr *attributes)
{
	return (int)syscall(SYS_bpf, command, attributes, sizeof(*attributes));
}

static int load_program(const struct device_rule *rules, size_t count)
{
	struct bpf_insn *program = xcalloc(device_rules_program_size(count), sizeof(*program));
	union bpf_attr attributes;

	memset(&attributes, 0, sizeof(attributes));
	attributes.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	attributes.insns = (uint64_t)(uintptr_t)program;
	attributes.insn_cnt = (uint32_t)device_rules_program(rules, count, program);
	/* The syscall wants a license; it only matters to programs that call
	 * GPL-only helpers, which this one (no call at all) does not. */
	attributes.license = (uint64_t)(uintptr_t) "GPL";
	/* What bpftool prog shows. */
	snprintf(attributes.prog_name, sizeof(attributes.prog_name), "corral_devices");
	int fd = bpf_call(BPF_PROG_LOAD, &attributes); /* O_CLOEXEC */
	int saved = errno;
	free(program);
	return fd < 0 ? -saved : fd;
}

/* Attaches `program_fd`, in place of `old_fd` when that is attached. */
static int attach_program(int cgroup_fd, int program_fd, int old_fd)
{
	union bpf_attr attributes;

	memset(&attributes, 0, sizeof(attributes));
	attributes.target_fd = (uint32_t)cgroup_fd;
	attributes.attach_bpf_fd = (uint32_t)program_fd;
	attributes.attach_type = BPF_CGROUP_DEVICE;
	attributes.attach_flags = BPF_F_ALLOW_MULTI;
	if (old_fd >= 0) {
		/* In one step: no moment with both or neither. */
		attributes.attach_flags |= BPF_F_REPLACE;
		attributes.replace_bpf_fd = (uint32_t)old_fd;
	}
	return bpf_call(BPF_PROG_ATTACH, &attributes) < 0 ? -errno : 0;
}

static int apply_v2(struct device_policy *policy, const struct task_cgroup *cgroup,
		    const struct device_rule *rules, size_t count, char *error, size_t error_size)
{
	/* The defaults come first: no more rules, no other rule. */
	bool shared = count == device_rules_default_count;
	int program_fd = shared ? default_program_fd : -1;
	if (program_fd < 0)
		program_fd = load_program(rules, count);
	if (program_fd < 0) {
		snprintf(error, error_size, "device policy: load BPF program: %s",
			 strerror(-program_fd));
		return program_fd;
	}
	if (shared)
		default_program_fd = program_fd;
	int dir_fd = task_cgroup_open_dir(cgroup);
	int result = dir_fd < 0 ? dir_fd : attach_program(dir_fd, program_fd, policy->program_fd);
	if (dir_fd >= 0)
		close(dir_fd);
	if (result < 0) {
		snprintf(error, error_size, "device policy: attach BPF program to %s: %s",
			 cgroup->path, strerror(-result));
		if (!shared || !default_program_users) {
			close(program_fd);
			if (shared)
				default_program_fd = -1;
		}
		return result;
	}
	/* Taken before the old one is given back: they may be the same. */
	if (shared)
		default_program_users++;
	give_back_program(policy); /* detached by the replace: closing frees it */
	policy->program_fd = program_fd;
	policy->shares_default_program = shared;
	return 0;
}

int device_policy_apply(struct device_policy *policy, struct task_cgroup *cgroup,
			const struct device_config *configured, size_t configured_count,
			const struct device_config *added, size_t added_count, char *error,
			size_t error_size)
{
	size_t capacity = device_rules_default_count + configured_count + added_count;
	struct device_rule *rules = xcalloc(capacity, sizeof(*rules));
	size_t count = device_rules_default_count;

	memcpy(rules, device_rules_default, count * sizeof(*rules));
	int result =
	    add_device_rules(rules, &count, configured, configured_count, error, error_size);
	if (result == 0)
		result = add_device_rules(rules, &count, added, added_count, error, error_size);
	if (result < 0) {
		free(rules);
		return result;
	}
	if (policy->rules && device_rules_equal(policy->rules, policy->rule_count, rules, count)) {
		free(rules);
		return 0;
	}
	/* Unknown until both are through. */
	free(policy->rules);
	policy->rules = NULL;
	/* The kernel asks the programs of the task's v2 cgroup whichever
	 * hierarchy holds the devices controller, then the v1 lists: on a
	 * hybrid host the task stays in corral's v1 devices group, whose list
	 * the program can only narrow. A v1 group of the task's own would
	 * repeat the program and cost every start a write to its
	 * cgroup.procs, which takes the cgroup rwsem for writing (an RCU
	 * grace period when starts are far apart). */
	if (task_cgroup_exists(cgroup))
		result = apply_v2(policy, cgroup, rules, count, error, error_size);
	if (result < 0) {
		free(rules);
		return result;
	}
	policy->rules = rules;
	policy->rule_count = count;
	return 0;
}

bool device_policy_possible(void)
{
	static int possible = -1;
	if (possible < 0) {
		/* The initial user namespace maps every id onto itself. */
		char map[64] = "";
		FILE *file = fopen("/proc/self/uid_map", "re");
		if (file) {
			if (!fgets(map, sizeof(map), file))
				map[0] = '\0';
			fclose(file);
		}
		unsigned inside, outside, count;
		possible = !file || (sscanf(map, "%u %u %u", &inside, &outside, &count) == 3 &&
				     inside == 0 && outside == 0 && count == 4294967295u);
	}
	return possible;
}
