/* Seccomp programs built from profiles, applied in forked children: what
 * the default profile denies and lets through (clone without namespace
 * flags, clone3 as ENOSYS, the safe personas, the i386 ABI too), custom
 * profiles, and the builds that must fail. A child reports through its
 * exit status: 0 when every check held; the first that did not is named on
 * stderr. */
#include <errno.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "isolation/seccomp_profile.h"

/* In a child, where cmocka's asserts cannot reach the parent. */
#define CHILD_CHECK(condition)                                                                     \
	do {                                                                                       \
		if (!(condition)) {                                                                \
			dprintf(STDERR_FILENO, "line %d: failed: %s\n", __LINE__, #condition);     \
			_exit(1);                                                                  \
		}                                                                                  \
	} while (0)

/* -errno of a raw syscall, or its result. */
#define RAW(...) (syscall(__VA_ARGS__) < 0 ? -errno : 0)

static struct seccomp_program build(const struct seccomp_config *config)
{
	struct seccomp_program program;
	char error[256] = "";
	int result = seccomp_program_build(config, &program, error, sizeof(error));
	if (result != 0)
		fail_msg("build failed: %s", error);
	assert_non_null(program.filter);
	assert_true(program.length > 0);
	return program;
}

static void apply(const struct seccomp_program *program)
{
	struct sock_fprog fprog = {.len = program->length, .filter = program->filter};
	CHILD_CHECK(syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHILD_CHECK(syscall(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) == 0);
}

/* Runs `checks` under `program` in a child; returns its wait status. */
static int run_confined(const struct seccomp_program *program, void (*checks)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		apply(program);
		checks();
		syscall(SYS_exit_group, 0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void assert_exited_zero(int status)
{
	if (!WIFEXITED(status))
		fail_msg("child killed by signal %d", WTERMSIG(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("a check failed in the child (see above)");
}

static const struct seccomp_config default_profile = {.kind = SECCOMP_PROFILE_DEFAULT};

static void *thread_body(void *argument)
{
	return argument;
}

static void default_denied_checks(void)
{
	CHILD_CHECK(RAW(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -1, 0, 0, 0) == -EPERM);
	CHILD_CHECK(RAW(SYS_unshare, CLONE_NEWUTS) == -EPERM);
	CHILD_CHECK(RAW(SYS_unshare, CLONE_NEWUSER) == -EPERM);
	CHILD_CHECK(RAW(SYS_mount, "none", "/mnt", "tmpfs", 0, NULL) == -EPERM);
	CHILD_CHECK(RAW(SYS_umount2, "/proc", MNT_DETACH) == -EPERM);
	CHILD_CHECK(RAW(SYS_bpf, 0, NULL, 0) == -EPERM);
	CHILD_CHECK(RAW(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0) == -EPERM);
	CHILD_CHECK(RAW(SYS_setns, 0, 0) == -EPERM);
	CHILD_CHECK(RAW(SYS_clone3, NULL, 0) == -ENOSYS);
}

static void default_allowed_checks(void)
{
	CHILD_CHECK(syscall(SYS_getpid) == getpid());
	/* fork is clone without namespace flags */
	pid_t pid = fork();
	if (pid == 0)
		_exit(7);
	CHILD_CHECK(pid > 0);
	int status;
	CHILD_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 7);
	/* glibc tries clone3 first and falls back on ENOSYS */
	static int marker;
	pthread_t thread;
	void *returned = NULL;
	CHILD_CHECK(pthread_create(&thread, NULL, thread_body, &marker) == 0);
	CHILD_CHECK(pthread_join(thread, &returned) == 0 && returned == &marker);
}

static void namespace_clone_checks(void)
{
	const unsigned long flags[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,   CLONE_NEWUSER,
				       CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		long pid = syscall(SYS_clone, flags[i] | SIGCHLD, 0, 0, 0, 0);
		if (pid == 0)
			_exit(0); /* the filter let it through */
		CHILD_CHECK(pid < 0 && errno == EPERM);
	}
}

/* Every persona the filter must refuse or let through: the allowed five,
 * each single bit, each value with a single bit clear, and a few mixes. */
static void personality_checks(void)
{
	const unsigned long allowed[] = {0, PER_LINUX32, UNAME26, UNAME26 | PER_LINUX32,
					 0xffffffff};
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		CHILD_CHECK(syscall(SYS_personality, allowed[i]) >= 0);
	for (unsigned bit = 0; bit < 32; bit++) {
		unsigned long one = 1ul << bit;
		if (one != PER_LINUX32 && one != UNAME26)
			CHILD_CHECK(RAW(SYS_personality, one) == -EPERM);
		CHILD_CHECK(RAW(SYS_personality, 0xfffffffful & ~one) == -EPERM);
	}
	const unsigned long mixes[] = {ADDR_NO_RANDOMIZE, PER_LINUX32 | ADDR_NO_RANDOMIZE,
				       READ_IMPLIES_EXEC | UNAME26, 0x7fffffff, 0x20009};
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++)
		CHILD_CHECK(RAW(SYS_personality, mixes[i]) == -EPERM);
}

static void test_default_denies_with_eperm(void **state)
{
	struct seccomp_program program = build(&default_profile);
	assert_exited_zero(run_confined(&program, default_denied_checks));
	seccomp_program_free(&program);
	assert_null(program.filter);
	assert_int_equal(program.length, 0);
}

static void test_default_allows_ordinary_work(void **state)
{
	struct seccomp_program program = build(&default_profile);
	assert_exited_zero(run_confined(&program, default_allowed_checks));
	seccomp_program_free(&program);
}

static void test_default_denies_namespace_clones(void **state)
{
	struct seccomp_program program = build(&default_profile);
	assert_exited_zero(run_confined(&program, namespace_clone_checks));
	seccomp_program_free(&program);
}

static void test_default_allows_only_safe_personas(void **state)
{
	struct seccomp_program program = build(&default_profile);
	assert_exited_zero(run_confined(&program, personality_checks));
	seccomp_program_free(&program);
}

#if defined(__x86_64__)
/* An i386 syscall through int $0x80: the filter must see it too. */
static long int80(long number, long first, long second)
{
	long result;
	__asm__ volatile("int $0x80"
			 : "=a"(result)
			 : "a"(number), "b"(first), "c"(second)
			 : "memory");
	return result;
}

#define I386_GETPID  20
#define I386_UNSHARE 310
#define I386_KEYCTL  288

static void i386_checks(void)
{
	CHILD_CHECK(int80(I386_GETPID, 0, 0) == getpid());
	CHILD_CHECK(int80(I386_UNSHARE, CLONE_NEWUTS, 0) == -EPERM);
	CHILD_CHECK(int80(I386_KEYCTL, 0, -1) == -EPERM);
}

static void i386_probe(void)
{
	_exit(int80(I386_GETPID, 0, 0) == getpid() ? 0 : 1);
}

static void test_default_covers_i386_abi(void **state)
{
	/* Kernels built or booted without ia32 emulation have no such ABI. */
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		i386_probe();
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		skip();

	struct seccomp_program program = build(&default_profile);
	assert_exited_zero(run_confined(&program, i386_checks));
	seccomp_program_free(&program);
}
#endif

static char *deny_by_default_allow[] = {"write", "exit_group", "getpid", NULL};

static void kill_default_checks(void)
{
	CHILD_CHECK(syscall(SYS_getpid) > 0);
	syscall(SYS_getppid); /* not allowed: the process dies here */
	_exit(1);
}

static void test_custom_kill_by_default(void **state)
{
	struct seccomp_config config = {.kind = SECCOMP_PROFILE_CUSTOM,
					.default_action = SECCOMP_ACTION_KILL,
					.allow = deny_by_default_allow};
	struct seccomp_program program = build(&config);
	int status = run_confined(&program, kill_default_checks);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGSYS);
	seccomp_program_free(&program);
}

static void errno_default_checks(void)
{
	CHILD_CHECK(syscall(SYS_getpid) > 0);
	CHILD_CHECK(RAW(SYS_getppid) == -EPERM);
	CHILD_CHECK(RAW(SYS_uname, NULL) == -EPERM);
	/* execve is always allowed: the kernel, not the filter, answers */
	char *argv[] = {"nothing", NULL};
	CHILD_CHECK(RAW(SYS_execve, "/nonexistent/nothing", argv, argv + 1) == -ENOENT);
}

static void test_custom_errno_by_default_keeps_execve(void **state)
{
	struct seccomp_config config = {.kind = SECCOMP_PROFILE_CUSTOM,
					.default_action = SECCOMP_ACTION_ERRNO,
					.allow = deny_by_default_allow};
	struct seccomp_program program = build(&config);
	assert_exited_zero(run_confined(&program, errno_default_checks));
	seccomp_program_free(&program);
}

static char *custom_deny[] = {"uname", "getppid", NULL};

static void allow_default_checks(void)
{
	CHILD_CHECK(syscall(SYS_getpid) > 0);
	CHILD_CHECK(RAW(SYS_uname, NULL) == -EPERM);
	CHILD_CHECK(RAW(SYS_getppid) == -EPERM);
	CHILD_CHECK(RAW(SYS_keyctl, 0, -1, 0, 0, 0) != -EPERM);
}

static void test_custom_allow_by_default_with_deny_list(void **state)
{
	/* getpid in `allow` is the default's own rule: left out, no error */
	char *allow[] = {"getpid", NULL};
	struct seccomp_config config = {.kind = SECCOMP_PROFILE_CUSTOM,
					.default_action = SECCOMP_ACTION_ALLOW,
					.allow = allow,
					.deny = custom_deny};
	struct seccomp_program program = build(&config);
	assert_exited_zero(run_confined(&program, allow_default_checks));
	seccomp_program_free(&program);
}

static void log_default_checks(void)
{
	CHILD_CHECK(syscall(SYS_getppid) > 0);
	CHILD_CHECK(RAW(SYS_uname, NULL) == -EPERM);
}

static void test_custom_log_by_default(void **state)
{
	struct seccomp_config config = {.kind = SECCOMP_PROFILE_CUSTOM,
					.default_action = SECCOMP_ACTION_LOG,
					.deny = (char *[]){"uname", NULL}};
	struct seccomp_program program = build(&config);
	assert_exited_zero(run_confined(&program, log_default_checks));
	seccomp_program_free(&program);
}

static void test_unconfined_has_no_program(void **state)
{
	struct seccomp_config config = {.kind = SECCOMP_PROFILE_UNCONFINED};
	struct seccomp_program program = {.length = 9};
	char error[128] = "";
	assert_int_equal(seccomp_program_build(&config, &program, error, sizeof(error)), 0);
	assert_null(program.filter);
	assert_int_equal(program.length, 0);
	seccomp_program_free(&program);
}

static void assert_build_fails(const struct seccomp_config *config, const char *expected)
{
	struct seccomp_program program;
	char error[256] = "";
	assert_int_equal(seccomp_program_build(config, &program, error, sizeof(error)), -1);
	assert_null(program.filter);
	assert_int_equal(program.length, 0);
	if (!strstr(error, expected))
		fail_msg("error \"%s\" does not contain \"%s\"", error, expected);
}

static void test_unknown_syscall_fails_the_build(void **state)
{
	struct seccomp_config config = {.kind = SECCOMP_PROFILE_CUSTOM,
					.default_action = SECCOMP_ACTION_ERRNO,
					.allow = (char *[]){"write", "mkdirz", NULL}};
	assert_build_fails(&config, "unknown syscall \"mkdirz\"");

	/* also where the rule would be left out as the default's own */
	config.default_action = SECCOMP_ACTION_ALLOW;
	assert_build_fails(&config, "\"mkdirz\"");
	config.allow = NULL;
	config.deny = (char *[]){"unamee", NULL};
	assert_build_fails(&config, "\"unamee\"");
}

static void test_denying_what_the_child_needs_fails(void **state)
{
	struct seccomp_config config = {.kind = SECCOMP_PROFILE_CUSTOM,
					.default_action = SECCOMP_ACTION_ALLOW,
					.deny = (char *[]){"uname", "execve", NULL}};
	assert_build_fails(&config, "execve cannot be denied");
	config.deny = (char *[]){"exit_group", NULL};
	assert_build_fails(&config, "exit_group cannot be denied");
}

static void test_allowed_and_denied_fails(void **state)
{
	struct seccomp_config config = {.kind = SECCOMP_PROFILE_CUSTOM,
					.default_action = SECCOMP_ACTION_LOG,
					.allow = (char *[]){"uname", NULL},
					.deny = (char *[]){"uname", NULL}};
	assert_build_fails(&config, "uname is both allowed and denied");
}

/* A syscall only another ABI has (stime: i386) is fine in any list. */
static void test_syscall_of_another_abi_is_accepted(void **state)
{
	struct seccomp_config config = {.kind = SECCOMP_PROFILE_CUSTOM,
					.default_action = SECCOMP_ACTION_ALLOW,
					.deny = (char *[]){"stime", "uname", NULL}};
	struct seccomp_program program = build(&config);
	seccomp_program_free(&program);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_denies_with_eperm),
		cmocka_unit_test(test_default_allows_ordinary_work),
		cmocka_unit_test(test_default_denies_namespace_clones),
		cmocka_unit_test(test_default_allows_only_safe_personas),
#if defined(__x86_64__)
		cmocka_unit_test(test_default_covers_i386_abi),
#endif
		cmocka_unit_test(test_custom_kill_by_default),
		cmocka_unit_test(test_custom_errno_by_default_keeps_execve),
		cmocka_unit_test(test_custom_allow_by_default_with_deny_list),
		cmocka_unit_test(test_custom_log_by_default),
		cmocka_unit_test(test_unconfined_has_no_program),
		cmocka_unit_test(test_unknown_syscall_fails_the_build),
		cmocka_unit_test(test_denying_what_the_child_needs_fails),
		cmocka_unit_test(test_allowed_and_denied_fails),
		cmocka_unit_test(test_syscall_of_another_abi_is_accepted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
