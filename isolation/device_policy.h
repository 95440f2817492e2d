/* An isolated task's device policy, in the kernel: the default devices
 * (device_rules.h), the configured ones and those a prestart hook added,
 * allowed on the task's cgroups, everything else denied.
 *
 *   cgroup v2: a BPF_PROG_TYPE_CGROUP_DEVICE program attached to the task's
 *              leaf (BPF_F_ALLOW_MULTI, so that a nested runtime in the task
 *              can add its own; the kernel runs every program up the tree).
 *   cgroup v1: where the devices controller is mounted (hybrid hosts), the
 *              task's group in it: devices.deny "a", then devices.allow.
 *
 * The kernel checks both when both are there. Applied before each start;
 * a start whose rules are those in force changes nothing. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/model/config.h"
#include "isolation/cgroup_task.h"
#include "isolation/cgroup_tree.h"
#include "isolation/device_rules.h"

struct device_policy {
	int program_fd;              /* attached to the task's v2 leaf; -1: none */
	bool shares_default_program; /* program_fd is the one of the default rules */
	struct device_rule *rules;   /* in force; NULL: nothing applied yet */
	size_t rule_count;
};

void device_policy_init(struct device_policy *policy);

/* Resolves each device's node (stat: its type and numbers now) and puts
 * the rules in force on the task's v2 cgroup, replacing the program that
 * was there. 0, or -errno with `error` ("device policy: load BPF program:
 * Operation not permitted"); the rules in force are then unknown, and the
 * next call applies them again. */
int device_policy_apply(struct device_policy *policy, struct task_cgroup *cgroup,
			const struct device_config *configured, size_t configured_count,
			const struct device_config *added, size_t added_count, char *error,
			size_t error_size);

/* Closes the program (it stays attached until its cgroup is removed) and
 * forgets the rules: for when the task's cgroups go. */
void device_policy_release(struct device_policy *policy);

/* Whether corral may set device policies at all: only from the initial
 * user namespace (the kernel loads cgroup device programs for CAP_BPF or
 * CAP_SYS_ADMIN there, and v1's devices files are root's). Inside a user
 * namespace (a rootless container) the runtime's own policy applies, as
 * runc's rootless mode leaves it. Read once. */
bool device_policy_possible(void);
