/* Device rules into the kernel's form: the BPF program is run here by a
 * small interpreter of the instructions it uses, on (type, major, minor,
 * access) as the kernel passes them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "isolation/device_rules.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* What the kernel hands a BPF_PROG_TYPE_CGROUP_DEVICE program. */
static struct bpf_cgroup_dev_ctx context_of(char type, uint32_t major, uint32_t minor,
					    const char *access)
{
	uint32_t bits = 0;
	for (const char *letter = access; *letter; letter++)
		bits |= *letter == 'r'   ? BPF_DEVCG_ACC_READ
			: *letter == 'w' ? BPF_DEVCG_ACC_WRITE
					 : BPF_DEVCG_ACC_MKNOD;
	return (struct bpf_cgroup_dev_ctx){
	    .access_type = bits << 16 | (type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR),
	    .major = major,
	    .minor = minor,
	};
}

/* Runs `program` as the kernel would (for the instructions it may hold);
 * fails the test on anything else, and on a jump out of the program. */
static uint64_t run(const struct bpf_insn *program, size_t length,
		    const struct bpf_cgroup_dev_ctx *context)
{
	uint64_t registers[11] = {0};
	size_t pc = 0;

	for (size_t steps = 0; steps < 10000; steps++) {
		assert_true(pc < length);
		const struct bpf_insn *insn = &program[pc++];
		uint64_t *destination = &registers[insn->dst_reg];
		uint64_t immediate = (uint64_t)(int64_t)insn->imm;

		switch (insn->code) {
		case BPF_LDX | BPF_W | BPF_MEM: {
			uint32_t word;
			assert_int_equal(insn->src_reg, BPF_REG_1); /* the context */
			assert_true(insn->off >= 0 && (size_t)insn->off + 4 <= sizeof(*context));
			memcpy(&word, (const char *)context + insn->off, 4);
			*destination = word;
			break;
		}
		case BPF_ALU64 | BPF_MOV | BPF_X:
			*destination = registers[insn->src_reg];
			break;
		case BPF_ALU64 | BPF_MOV | BPF_K:
			*destination = immediate;
			break;
		case BPF_ALU64 | BPF_AND | BPF_K:
			*destination &= immediate;
			break;
		case BPF_ALU64 | BPF_RSH | BPF_K:
			*destination >>= insn->imm;
			break;
		case BPF_JMP | BPF_JNE | BPF_K:
			assert_true(insn->off >= 0);
			if (*destination != immediate)
				pc += (size_t)insn->off;
			break;
		case BPF_JMP | BPF_EXIT:
			return registers[BPF_REG_0];
		default:
			fail_msg("instruction %zu: unexpected code 0x%02x", pc - 1, insn->code);
		}
	}
	fail_msg("the program did not end");
	return 0;
}

struct access_case {
	char type;
	uint32_t major, minor;
	const char *access;
	bool allowed;
};

static void check_cases(const struct device_rule *rules, size_t count,
			const struct access_case *cases, size_t case_count)
{
	size_t capacity = device_rules_program_size(count);
	struct bpf_insn *program = calloc(capacity, sizeof(*program));
	size_t length = device_rules_program(rules, count, program);

	assert_true(length <= capacity);
	for (size_t i = 0; i < case_count; i++) {
		const struct access_case *c = &cases[i];
		struct bpf_cgroup_dev_ctx context =
		    context_of(c->type, c->major, c->minor, c->access);
		uint64_t result = run(program, length, &context);
		if (result != (c->allowed ? 1u : 0u))
			fail_msg("%c %u:%u %s: %s, expected %s", c->type, c->major, c->minor,
				 c->access, result ? "allowed" : "denied",
				 c->allowed ? "allowed" : "denied");
	}
	free(program);
}

static void test_default_rules(void **state)
{
	static const struct access_case cases[] = {
	    {'c', 1, 3, "r", true}, /* /dev/null */
	    {'c', 1, 3, "rw", true},
	    {'c', 1, 3, "m", true},
	    {'c', 1, 9, "rw", true},     /* /dev/urandom */
	    {'c', 5, 0, "rw", true},     /* /dev/tty */
	    {'c', 5, 2, "rw", true},     /* /dev/ptmx */
	    {'c', 136, 0, "rw", true},   /* /dev/pts/0 */
	    {'c', 136, 4242, "r", true}, /* /dev/pts/4242 */
	    {'c', 1, 1, "r", false},     /* /dev/mem */
	    {'c', 1, 1, "m", true},      /* made, not opened */
	    {'c', 1, 11, "w", false},    /* /dev/kmsg */
	    {'c', 5, 1, "rw", false},    /* /dev/console */
	    {'c', 10, 229, "rw", false}, /* /dev/fuse */
	    {'c', 137, 0, "r", false},
	    {'b', 1, 3, "r", false}, /* the numbers of null, but a block device */
	    {'b', 8, 0, "r", false}, /* /dev/sda */
	    {'b', 8, 0, "m", true},
	    {'b', 8, 0, "rm", false},
	};
	check_cases(device_rules_default, device_rules_default_count, cases, ARRAY_SIZE(cases));
}

static void test_a_rule_allows_no_more_than_its_access(void **state)
{
	static const struct device_rule rules[] = {
	    {'c', 10, 229, DEVICE_READ},
	    {'b', 7, 0, DEVICE_READ | DEVICE_WRITE},
	    {'c', 4, DEVICE_RULE_ANY, DEVICE_WRITE | DEVICE_MKNOD},
	};
	static const struct access_case cases[] = {
	    {'c', 10, 229, "r", true},   {'c', 10, 229, "w", false},
	    {'c', 10, 229, "rw", false}, /* both at once need both */
	    {'c', 10, 229, "m", false},  {'c', 10, 228, "r", false},
	    {'b', 7, 0, "rw", true},     {'b', 7, 0, "w", true},
	    {'b', 7, 0, "m", false},     {'b', 7, 1, "r", false},
	    {'c', 7, 0, "r", false},     {'c', 4, 0, "w", true},
	    {'c', 4, 63, "wm", true},    {'c', 4, 63, "r", false},
	    {'c', 5, 63, "w", false},
	};
	check_cases(rules, ARRAY_SIZE(rules), cases, ARRAY_SIZE(cases));
}

static void test_no_rules_deny_everything(void **state)
{
	static const struct access_case cases[] = {
	    {'c', 1, 3, "r", false},
	    {'b', 1, 3, "m", false},
	};
	check_cases(NULL, 0, cases, ARRAY_SIZE(cases));
}

static void test_the_program_is_as_long_as_its_rules(void **state)
{
	static const struct device_rule rwm = {'c', 1, 3,
					       DEVICE_READ | DEVICE_WRITE | DEVICE_MKNOD};
	static const struct device_rule some = {'c', 1, 3, DEVICE_READ};
	static const struct device_rule any = {'c', DEVICE_RULE_ANY, DEVICE_RULE_ANY,
					       DEVICE_READ | DEVICE_WRITE | DEVICE_MKNOD};
	struct bpf_insn program[64];

	/* 6 to read the context, 2 to deny; a rule: its checks, then allow. */
	assert_int_equal(device_rules_program(NULL, 0, program), 8);
	assert_int_equal(device_rules_program(&rwm, 1, program), 8 + 3 + 2);
	assert_int_equal(device_rules_program(&some, 1, program), 8 + 6 + 2);
	size_t length = device_rules_program(&any, 1, program);
	assert_int_equal(length, 8 + 1 + 2);
	assert_int_equal(device_rules_program_size(1), 8 + 8);
	/* It ends in r0 = 0 (deny), exit. */
	assert_int_equal(program[length - 2].code, BPF_ALU64 | BPF_MOV | BPF_K);
	assert_int_equal(program[length - 2].imm, 0);
	assert_int_equal(program[length - 1].code, BPF_JMP | BPF_EXIT);
}

static void test_rules_from_nodes(void **state)
{
	struct device_rule rule;

	assert_true(device_rule_for_node(S_IFCHR | 0600, makedev(10, 229), DEVICE_READ, &rule));
	assert_int_equal(rule.type, 'c');
	assert_int_equal(rule.major, 10);
	assert_int_equal(rule.minor, 229);
	assert_int_equal(rule.access, DEVICE_READ);
	assert_true(device_rule_for_node(S_IFBLK | 0600, makedev(259, 70000),
					 DEVICE_READ | DEVICE_WRITE, &rule));
	assert_int_equal(rule.type, 'b');
	assert_int_equal(rule.major, 259);
	assert_int_equal(rule.minor, 70000);
	assert_false(device_rule_for_node(S_IFREG | 0600, 0, DEVICE_READ, &rule));
	assert_false(device_rule_for_node(S_IFDIR | 0700, 0, DEVICE_READ, &rule));
}

static void test_rules_equal(void **state)
{
	struct device_rule a[] = {{'c', 1, 3, DEVICE_READ}, {'b', 7, 0, DEVICE_WRITE}};
	struct device_rule b[] = {{'c', 1, 3, DEVICE_READ}, {'b', 7, 0, DEVICE_WRITE}};

	assert_true(device_rules_equal(a, 2, b, 2));
	assert_true(device_rules_equal(NULL, 0, NULL, 0));
	assert_false(device_rules_equal(a, 2, b, 1));
	b[1].access |= DEVICE_READ;
	assert_false(device_rules_equal(a, 2, b, 2));
	b[1] = a[1];
	b[1].minor = 1;
	assert_false(device_rules_equal(a, 2, b, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_rules),
	    cmocka_unit_test(test_a_rule_allows_no_more_than_its_access),
	    cmocka_unit_test(test_no_rules_deny_everything),
	    cmocka_unit_test(test_the_program_is_as_long_as_its_rules),
	    cmocka_unit_test(test_rules_from_nodes),
	    cmocka_unit_test(test_rules_equal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
