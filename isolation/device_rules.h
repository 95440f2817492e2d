/* The device rules of an isolated task's cgroup, and the form the kernel
 * takes them in: a BPF_PROG_TYPE_CGROUP_DEVICE program on the task's v2
 * cgroup, which applies on hybrid hosts too (device_policy.c). Pure: no
 * syscalls; isolation/device_policy.c does the kernel's part.
 *
 * A rule allows some access to a set of nodes; whatever no rule allows is
 * denied (the program's last instructions). */
#pragma once

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/model/config.h"

#define DEVICE_RULE_ANY UINT32_MAX /* a major or minor: every number */

struct device_rule {
	char type;       /* 'c' (character) or 'b' (block) */
	uint32_t major;  /* or DEVICE_RULE_ANY */
	uint32_t minor;  /* or DEVICE_RULE_ANY */
	unsigned access; /* DEVICE_READ | DEVICE_WRITE | DEVICE_MKNOD */
};

/* What every isolated task may use, as runc and the OCI runtime spec give
 * a container: mknod of any node (so that making one works, opening it is
 * still checked), and rwm on /dev/null, zero, full, random, urandom, tty,
 * ptmx and the /dev/pts terminals. */
extern const struct device_rule device_rules_default[];
extern const size_t device_rules_default_count;

/* The rule for a node of `mode` and `rdev` (from stat): false when it is
 * not a character or block device. */
bool device_rule_for_node(mode_t mode, dev_t rdev, unsigned access, struct device_rule *out);

bool device_rules_equal(const struct device_rule *a, size_t a_count, const struct device_rule *b,
			size_t b_count);

/* The largest program device_rules_program() writes for `count` rules. */
size_t device_rules_program_size(size_t count);

/* The program for `rules` into `program` (device_rules_program_size(count)
 * instructions of room); returns how many it wrote. It returns 1 (allow)
 * when a rule allows the access asked for -- every kind asked for at once:
 * an open for reading and writing needs a rule with both -- and 0 (deny,
 * EPERM) when none does. */
size_t device_rules_program(const struct device_rule *rules, size_t count,
			    struct bpf_insn *program);
