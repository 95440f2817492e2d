#include "isolation/device_rules.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define RWM (DEVICE_READ | DEVICE_WRITE | DEVICE_MKNOD)

const struct device_rule device_rules_default[] = {
    {'c', DEVICE_RULE_ANY, DEVICE_RULE_ANY, DEVICE_MKNOD},
    {'b', DEVICE_RULE_ANY, DEVICE_RULE_ANY, DEVICE_MKNOD},
    {'c', 1, 3, RWM},                 /* /dev/null */
    {'c', 1, 5, RWM},                 /* /dev/zero */
    {'c', 1, 7, RWM},                 /* /dev/full */
    {'c', 1, 8, RWM},                 /* /dev/random */
    {'c', 1, 9, RWM},                 /* /dev/urandom */
    {'c', 5, 0, RWM},                 /* /dev/tty */
    {'c', 5, 2, RWM},                 /* /dev/ptmx */
    {'c', 136, DEVICE_RULE_ANY, RWM}, /* /dev/pts/N */
};
const size_t device_rules_default_count =
    sizeof(device_rules_default) / sizeof(device_rules_default[0]);

bool device_rule_for_node(mode_t mode, dev_t rdev, unsigned access, struct device_rule *out)
{
	if (!S_ISCHR(mode) && !S_ISBLK(mode))
		return false;
	*out = (struct device_rule){
	    .type = S_ISCHR(mode) ? 'c' : 'b',
	    .major = major(rdev),
	    .minor = minor(rdev),
	    .access = access & RWM,
	};
	return true;
}

bool device_rules_equal(const struct device_rule *a, size_t a_count, const struct device_rule *b,
			size_t b_count)
{
	if (a_count != b_count)
		return false;
	for (size_t i = 0; i < a_count; i++) {
		if (a[i].type != b[i].type || a[i].major != b[i].major ||
		    a[i].minor != b[i].minor || a[i].access != b[i].access)
			return false;
	}
	return true;
}

/* ---- the BPF program ---- */

/* The program's registers: r1 holds the context (struct bpf_cgroup_dev_ctx)
 * and is free once it is read; r2..r5 hold what it says. */
enum {
	REGISTER_RESULT = BPF_REG_0,
	REGISTER_SCRATCH = BPF_REG_1,
	REGISTER_TYPE = BPF_REG_2,   /* BPF_DEVCG_DEV_* */
	REGISTER_ACCESS = BPF_REG_3, /* BPF_DEVCG_ACC_* */
	REGISTER_MAJOR = BPF_REG_4,
	REGISTER_MINOR = BPF_REG_5,
};

static struct bpf_insn load_word(int destination, int offset)
{
	return (struct bpf_insn){.code = BPF_LDX | BPF_W | BPF_MEM,
				 .dst_reg = destination,
				 .src_reg = BPF_REG_1,
				 .off = (short)offset};
}

static struct bpf_insn move_register(int destination, int source)
{
	return (struct bpf_insn){
	    .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = destination, .src_reg = source};
}

static struct bpf_insn alu_immediate(int operation, int destination, int32_t value)
{
	return (struct bpf_insn){
	    .code = BPF_ALU64 | operation | BPF_K, .dst_reg = destination, .imm = value};
}

#define SKIP_CODE (BPF_JMP | BPF_JNE | BPF_K)

/* Jumps ahead unless `reg` == `value`; rule_block() sets how far. */
static struct bpf_insn skip_unless_equal(int reg, int32_t value)
{
	return (struct bpf_insn){.code = SKIP_CODE, .dst_reg = reg, .imm = value};
}

static struct bpf_insn exit_program(void)
{
	return (struct bpf_insn){.code = BPF_JMP | BPF_EXIT};
}

/* DEVICE_* into BPF_DEVCG_ACC_*, which order the bits differently. */
static int32_t bpf_access(unsigned access)
{
	return (access & DEVICE_READ ? BPF_DEVCG_ACC_READ : 0) |
	       (access & DEVICE_WRITE ? BPF_DEVCG_ACC_WRITE : 0) |
	       (access & DEVICE_MKNOD ? BPF_DEVCG_ACC_MKNOD : 0);
}

#define PROGRAM_HEAD 6 /* the context's fields into r2..r5 */
#define RULE_MAX     8 /* type, access (3), major, minor, allow (2) */
#define PROGRAM_TAIL 2 /* deny */

size_t device_rules_program_size(size_t count)
{
	return PROGRAM_HEAD + count * RULE_MAX + PROGRAM_TAIL;
}

/* One rule: a chain of "skip to the next rule unless ..." ending in allow.
 * Returns the instructions written. */
static size_t rule_block(const struct device_rule *rule, struct bpf_insn *out)
{
	size_t n = 0;

	out[n++] = skip_unless_equal(REGISTER_TYPE,
				     rule->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR);
	if ((rule->access & RWM) != RWM) {
		/* Nothing asked for beyond the rule's: (asked & ~allowed) == 0. */
		out[n++] = move_register(REGISTER_SCRATCH, REGISTER_ACCESS);
		out[n++] =
		    alu_immediate(BPF_AND, REGISTER_SCRATCH, bpf_access(~rule->access & RWM));
		out[n++] = skip_unless_equal(REGISTER_SCRATCH, 0);
	}
	if (rule->major != DEVICE_RULE_ANY)
		out[n++] = skip_unless_equal(REGISTER_MAJOR, (int32_t)rule->major);
	if (rule->minor != DEVICE_RULE_ANY)
		out[n++] = skip_unless_equal(REGISTER_MINOR, (int32_t)rule->minor);
	out[n++] = alu_immediate(BPF_MOV, REGISTER_RESULT, 1);
	out[n++] = exit_program();
	/* Each skip lands on the block's end: the next rule, or the deny. */
	for (size_t i = 0; i < n; i++) {
		if (out[i].code == SKIP_CODE)
			out[i].off = (short)(n - i - 1);
	}
	return n;
}

size_t device_rules_program(const struct device_rule *rules, size_t count, struct bpf_insn *program)
{
	size_t n = 0;

	program[n++] = load_word(REGISTER_TYPE, offsetof(struct bpf_cgroup_dev_ctx, access_type));
	program[n++] = move_register(REGISTER_ACCESS, REGISTER_TYPE);
	program[n++] = alu_immediate(BPF_AND, REGISTER_TYPE, 0xffff);
	program[n++] = alu_immediate(BPF_RSH, REGISTER_ACCESS, 16);
	program[n++] = load_word(REGISTER_MAJOR, offsetof(struct bpf_cgroup_dev_ctx, major));
	program[n++] = load_word(REGISTER_MINOR, offsetof(struct bpf_cgroup_dev_ctx, minor));
	for (size_t i = 0; i < count; i++)
		n += rule_block(&rules[i], program + n);
	program[n++] = alu_immediate(BPF_MOV, REGISTER_RESULT, 0);
	program[n++] = exit_program();
	return n;
}
