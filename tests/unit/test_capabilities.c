/* Capability plans: what is worked out in the parent, and what a forked
 * child (as root) ends up with once it applies one, read back from
 * /proc/self/status, before exec and, for a non-root uid, after it. A child
 * reports through its exit status: 0 when every check held; the first that
 * did not is named on stderr. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "isolation/capabilities.h"

#define CHILD_CHECK(condition)                                                                     \
	do {                                                                                       \
		if (!(condition)) {                                                                \
			dprintf(STDERR_FILENO, "line %d: failed: %s\n", __LINE__, #condition);     \
			_exit(1);                                                                  \
		}                                                                                  \
	} while (0)

#define BIT(cap) (1ull << (cap))
#define NOBODY   65534

static unsigned kernel_last_cap(void)
{
	FILE *file = fopen("/proc/sys/kernel/cap_last_cap", "r");
	unsigned last = 0;
	assert_non_null(file);
	assert_int_equal(fscanf(file, "%u", &last), 1);
	fclose(file);
	return last;
}

/* A capability set from /proc/self/status, e.g. field "CapEff". */
static uint64_t status_set(const char *field)
{
	char line[256];
	uint64_t value = UINT64_MAX;
	size_t length = strlen(field);
	FILE *file = fopen("/proc/self/status", "r");
	if (!file)
		return value;
	while (fgets(line, sizeof(line), file))
		if (strncmp(line, field, length) == 0 && line[length] == ':')
			sscanf(line + length + 1, "%" SCNx64, &value);
	fclose(file);
	return value;
}

static void assert_child_succeeded(pid_t pid)
{
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status))
		fail_msg("child killed by signal %d", WTERMSIG(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("a check failed in the child (see above)");
}

static pid_t fork_child(void)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	return pid;
}

static void test_build_fills_the_capset_data(void **state)
{
	struct capability_plan plan;
	uint64_t keep = BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_CHECKPOINT_RESTORE);
	capability_plan_build(keep, false, &plan);
	assert_int_equal(plan.last_cap, kernel_last_cap());
	assert_int_equal(plan.header.version, _LINUX_CAPABILITY_VERSION_3);
	assert_int_equal(plan.header.pid, 0);
	assert_int_equal(plan.data[0].effective, BIT(CAP_NET_BIND_SERVICE));
	assert_int_equal(plan.data[0].permitted, BIT(CAP_NET_BIND_SERVICE));
	assert_int_equal(plan.data[0].inheritable, BIT(CAP_NET_BIND_SERVICE));
	assert_int_equal(plan.data[1].effective, BIT(CAP_CHECKPOINT_RESTORE - 32));
	assert_int_equal(plan.data[1].permitted, BIT(CAP_CHECKPOINT_RESTORE - 32));
	assert_int_equal(plan.data[1].inheritable, BIT(CAP_CHECKPOINT_RESTORE - 32));
	assert_false(plan.raise_ambient);
}

static void test_build_ignores_capabilities_the_kernel_lacks(void **state)
{
	struct capability_plan plan;
	capability_plan_build(UINT64_MAX, true, &plan);
	assert_int_equal(plan.keep, (BIT(plan.last_cap) << 1) - 1);
	assert_true(plan.raise_ambient);
}

static void test_build_raises_ambient_only_for_a_non_root_user_keeping_some(void **state)
{
	struct capability_plan plan;
	capability_plan_build(0, true, &plan);
	assert_false(plan.raise_ambient);
	capability_plan_build(BIT(CAP_KILL), true, &plan);
	assert_true(plan.raise_ambient);
	capability_plan_build(BIT(CAP_KILL), false, &plan);
	assert_false(plan.raise_ambient);
}

static void apply_all_or_exit(const struct capability_plan *plan, bool as_nobody)
{
	struct capability_failure failure;
	CHILD_CHECK(capability_plan_apply_bounding(plan, &failure) == 0);
	CHILD_CHECK(capability_plan_apply_keepcaps(plan, &failure) == 0);
	if (as_nobody) {
		CHILD_CHECK(syscall(SYS_setgroups, 0, NULL) == 0);
		CHILD_CHECK(syscall(SYS_setresgid, NOBODY, NOBODY, NOBODY) == 0);
		CHILD_CHECK(syscall(SYS_setresuid, NOBODY, NOBODY, NOBODY) == 0);
	}
	CHILD_CHECK(capability_plan_apply_sets(plan, &failure) == 0);
}

static void test_root_keeps_only_what_was_asked(void **state)
{
	struct capability_plan plan;
	capability_plan_build(BIT(CAP_NET_BIND_SERVICE), false, &plan);
	pid_t pid = fork_child();
	if (pid == 0) {
		apply_all_or_exit(&plan, false);
		CHILD_CHECK(status_set("CapEff") == BIT(CAP_NET_BIND_SERVICE));
		CHILD_CHECK(status_set("CapPrm") == BIT(CAP_NET_BIND_SERVICE));
		CHILD_CHECK(status_set("CapInh") == BIT(CAP_NET_BIND_SERVICE));
		CHILD_CHECK(status_set("CapBnd") == BIT(CAP_NET_BIND_SERVICE));
		CHILD_CHECK(status_set("CapAmb") == 0);
		_exit(0);
	}
	assert_child_succeeded(pid);
}

static void test_root_keeping_nothing_has_nothing(void **state)
{
	struct capability_plan plan;
	capability_plan_build(0, false, &plan);
	pid_t pid = fork_child();
	if (pid == 0) {
		apply_all_or_exit(&plan, false);
		CHILD_CHECK(status_set("CapEff") == 0);
		CHILD_CHECK(status_set("CapPrm") == 0);
		CHILD_CHECK(status_set("CapBnd") == 0);
		_exit(0);
	}
	assert_child_succeeded(pid);
}

/* Ambient capabilities are what survives exec for a non-root uid: the
 * shell run last must see the kept one as effective. */
static void test_non_root_user_keeps_them_across_exec(void **state)
{
	struct capability_plan plan;
	capability_plan_build(BIT(CAP_NET_BIND_SERVICE), true, &plan);
	pid_t pid = fork_child();
	if (pid == 0) {
		apply_all_or_exit(&plan, true);
		CHILD_CHECK(getuid() == NOBODY);
		CHILD_CHECK(status_set("CapAmb") == BIT(CAP_NET_BIND_SERVICE));
		CHILD_CHECK(status_set("CapEff") == BIT(CAP_NET_BIND_SERVICE));
		CHILD_CHECK(status_set("CapBnd") == BIT(CAP_NET_BIND_SERVICE));
		char *argv[] = {"sh", "-c",
				"grep -q '^CapEff:.0000000000000400$' /proc/self/status && "
				"grep -q '^CapAmb:.0000000000000400$' /proc/self/status",
				NULL};
		char *envp[] = {"PATH=/usr/bin:/bin", NULL};
		execve("/bin/sh", argv, envp);
		_exit(2);
	}
	assert_child_succeeded(pid);
}

/* Without keepcaps, setuid away from root clears everything: the plan
 * could then not be applied, which says the order matters. */
static void test_non_root_user_without_keepcaps_loses_them(void **state)
{
	struct capability_plan plan;
	capability_plan_build(BIT(CAP_NET_BIND_SERVICE), true, &plan);
	pid_t pid = fork_child();
	if (pid == 0) {
		struct capability_failure failure;
		CHILD_CHECK(capability_plan_apply_bounding(&plan, &failure) == 0);
		CHILD_CHECK(syscall(SYS_setresuid, NOBODY, NOBODY, NOBODY) == 0);
		CHILD_CHECK(capability_plan_apply_sets(&plan, &failure) == -EPERM);
		CHILD_CHECK(failure.stage == CAPABILITY_STAGE_CAPSET);
		_exit(0);
	}
	assert_child_succeeded(pid);
}

/* The bounding set needs CAP_SETPCAP: without it the first capability to
 * drop is the one reported. */
static void test_bounding_failure_names_the_capability(void **state)
{
	struct capability_plan without_setpcap, plan;
	capability_plan_build(status_set("CapPrm") & ~BIT(CAP_SETPCAP), false, &without_setpcap);
	capability_plan_build(BIT(CAP_KILL), false, &plan);
	pid_t pid = fork_child();
	if (pid == 0) {
		struct capability_failure failure;
		CHILD_CHECK(capability_plan_apply_sets(&without_setpcap, &failure) == 0);
		CHILD_CHECK(capability_plan_apply_bounding(&plan, &failure) == -EPERM);
		CHILD_CHECK(failure.stage == CAPABILITY_STAGE_BOUNDING);
		CHILD_CHECK(failure.capability == CAP_CHOWN);
		_exit(0);
	}
	assert_child_succeeded(pid);
}

static void test_describe_names_stage_and_capability(void **state)
{
	char buffer[128];
	struct capability_failure failure = {CAPABILITY_STAGE_BOUNDING, CAP_SYS_ADMIN};
	capability_failure_describe(&failure, EPERM, buffer, sizeof(buffer));
	assert_string_equal(buffer,
			    "drop cap_sys_admin from the bounding set: Operation not permitted");
	failure = (struct capability_failure){CAPABILITY_STAGE_AMBIENT, CAP_NET_BIND_SERVICE};
	capability_failure_describe(&failure, EPERM, buffer, sizeof(buffer));
	assert_string_equal(buffer, "raise ambient cap_net_bind_service: Operation not permitted");
	failure = (struct capability_failure){CAPABILITY_STAGE_CAPSET, 0};
	capability_failure_describe(&failure, EINVAL, buffer, sizeof(buffer));
	assert_string_equal(buffer, "set capabilities: Invalid argument");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_build_fills_the_capset_data),
	    cmocka_unit_test(test_build_ignores_capabilities_the_kernel_lacks),
	    cmocka_unit_test(test_build_raises_ambient_only_for_a_non_root_user_keeping_some),
	    cmocka_unit_test(test_root_keeps_only_what_was_asked),
	    cmocka_unit_test(test_root_keeping_nothing_has_nothing),
	    cmocka_unit_test(test_non_root_user_keeps_them_across_exec),
	    cmocka_unit_test(test_non_root_user_without_keepcaps_loses_them),
	    cmocka_unit_test(test_bounding_failure_names_the_capability),
	    cmocka_unit_test(test_describe_names_stage_and_capability),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
