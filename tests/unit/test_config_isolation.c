/* The loader on valid `isolation` maps: every field, the defaults of an
 * isolated task, the spellings each field takes, and the group -> task
 * merge. The error messages are in test_config_errors.c. */
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "config/load/config_load.h"
#include "config_cases.h"

#define ARRAY_SIZE(a)   (sizeof(a) / sizeof((a)[0]))
#define BIT(capability) (UINT64_C(1) << (capability))

/* Docker's default set, written out here rather than taken from the
 * loader, so that the test checks the list. */
static const uint64_t docker_default_capabilities =
    BIT(CAP_CHOWN) | BIT(CAP_DAC_OVERRIDE) | BIT(CAP_FSETID) | BIT(CAP_FOWNER) | BIT(CAP_MKNOD) |
    BIT(CAP_NET_RAW) | BIT(CAP_SETGID) | BIT(CAP_SETUID) | BIT(CAP_SETFCAP) | BIT(CAP_SETPCAP) |
    BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_SYS_CHROOT) | BIT(CAP_KILL) | BIT(CAP_AUDIT_WRITE);

static void assert_strings(char **actual, const char *const expected[], size_t count)
{
	assert_non_null(actual);
	for (size_t i = 0; i < count; i++)
		assert_string_equal(actual[i], expected[i]);
	assert_null(actual[count]);
}

static const struct rlimit_config *find_rlimit(const struct isolation_config *isolation,
					       int resource)
{
	for (size_t i = 0; i < isolation->rlimit_count; i++) {
		if (isolation->rlimits[i].resource == resource)
			return &isolation->rlimits[i];
	}
	fail_msg("no rlimit %d", resource);
	return NULL;
}

static void assert_rlimit(const struct isolation_config *isolation, int resource, uint64_t soft,
			  uint64_t hard)
{
	const struct rlimit_config *limit = find_rlimit(isolation, resource);

	assert_int_equal(limit->soft, soft);
	assert_int_equal(limit->hard, hard);
}

static void test_every_field(void **state)
{
	struct config *config = parse_ok(
	    "groups:\n"
	    "  web:\n"
	    "    tasks:\n"
	    "      app:\n"
	    "        command: [/app]\n"
	    "        isolation:\n"
	    "          namespaces: [pid, mount, uts, ipc, net, cgroup]\n"
	    "          hostname: app-1.example\n"
	    "          init: false\n"
	    "          capabilities: {drop: [all], add: [net_bind_service, CAP_KILL, sys_admin]}\n"
	    "          seccomp: {default_action: kill, allow: [read, write, exit_group], "
	    "deny: [mount]}\n"
	    "          no_new_privileges: false\n"
	    "          rlimits: {nofile: 4096, nproc: [100, 200], core: 0,\n"
	    "                    stack: unlimited, as: 1G, cpu: [10, unlimited]}\n"
	    "          umask: \"0027\"\n");
	const struct isolation_config *isolation = isolation_of(config, "web/app");

	assert_true(isolation->enabled);
	assert_int_equal(isolation->namespaces, ISOLATION_NS_PID | ISOLATION_NS_MOUNT |
						    ISOLATION_NS_UTS | ISOLATION_NS_IPC |
						    ISOLATION_NS_NET | ISOLATION_NS_CGROUP);
	assert_string_equal(isolation->hostname, "app-1.example");
	assert_false(isolation->init);
	assert_int_equal(isolation->capabilities,
			 BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_KILL) | BIT(CAP_SYS_ADMIN));
	assert_int_equal(isolation->seccomp.kind, SECCOMP_PROFILE_CUSTOM);
	assert_int_equal(isolation->seccomp.default_action, SECCOMP_ACTION_KILL);
	assert_strings(isolation->seccomp.allow,
		       (const char *const[]){"read", "write", "exit_group"}, 3);
	assert_strings(isolation->seccomp.deny, (const char *const[]){"mount"}, 1);
	assert_false(isolation->no_new_privileges);
	assert_int_equal(isolation->rlimit_count, 6);
	assert_rlimit(isolation, RLIMIT_NOFILE, 4096, 4096);
	assert_rlimit(isolation, RLIMIT_NPROC, 100, 200);
	assert_rlimit(isolation, RLIMIT_CORE, 0, 0);
	assert_rlimit(isolation, RLIMIT_STACK, UINT64_MAX, UINT64_MAX);
	assert_rlimit(isolation, RLIMIT_AS, 1ULL << 30, 1ULL << 30);
	assert_rlimit(isolation, RLIMIT_CPU, 10, UINT64_MAX);
	assert_int_equal(isolation->umask, 027);
	config_free(config);
}

static void test_defaults(void **state)
{
	struct config *config = parse_ok("groups:\n"
					 "  g:\n"
					 "    tasks:\n"
					 "      isolated: {command: a, isolation: {}}\n"
					 "      plain: {command: a}\n");
	const struct isolation_config *isolated = isolation_of(config, "g/isolated");
	const struct isolation_config *plain = isolation_of(config, "g/plain");

	assert_true(isolated->enabled);
	assert_int_equal(isolated->namespaces, 0);
	assert_null(isolated->hostname);
	assert_true(isolated->init);
	assert_int_equal(isolated->capabilities, docker_default_capabilities);
	assert_int_equal(isolated->seccomp.kind, SECCOMP_PROFILE_DEFAULT);
	assert_null(isolated->seccomp.allow);
	assert_null(isolated->seccomp.deny);
	assert_true(isolated->no_new_privileges);
	assert_int_equal(isolated->rlimit_count, 0);
	assert_int_equal(isolated->umask, -1);

	/* Without the map, nothing changes for the task. */
	assert_false(plain->enabled);
	assert_int_equal(plain->namespaces, 0);
	assert_int_equal(plain->capabilities, 0);
	assert_int_equal(plain->umask, -1);
	config_free(config);
}

static void test_umask_spellings(void **state)
{
	/* libyaml gives the text as written: quoted or not, it is octal. */
	static const struct {
		const char *text;
		int umask;
	} rows[] = {
	    {"\"0027\"", 027}, {"0027", 027},  {"027", 027},    {"'0'", 0},
	    {"0o027", 027},    {"0777", 0777}, {"\"0o7\"", 07}, {"0000", 0},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char yaml[160];
		struct config *config;

		snprintf(yaml, sizeof(yaml),
			 "groups: {g: {tasks: {t: {command: a, isolation: {umask: %s}}}}}\n",
			 rows[i].text);
		print_message("umask: %s\n", rows[i].text);
		config = parse_ok(yaml);
		assert_int_equal(isolation_of(config, "g/t")->umask, rows[i].umask);
		config_free(config);
	}
}

static void test_capability_spellings(void **state)
{
	static const struct {
		const char *capabilities;
		uint64_t mask;
	} rows[] = {
	    {"{}", docker_default_capabilities},
	    {"{drop: [all]}", 0},
	    {"{drop: [ALL], add: [NET_ADMIN]}", BIT(CAP_NET_ADMIN)},
	    {"{drop: [all], add: [cap_sys_admin, Cap_Net_Raw, CAP_BPF]}",
	     BIT(CAP_SYS_ADMIN) | BIT(CAP_NET_RAW) | BIT(CAP_BPF)},
	    {"{drop: [net_raw, CAP_MKNOD]}",
	     docker_default_capabilities & ~(BIT(CAP_NET_RAW) | BIT(CAP_MKNOD))},
	    {"{add: [sys_ptrace]}", docker_default_capabilities | BIT(CAP_SYS_PTRACE)},
	    /* Drop first, then add, as Docker does. */
	    {"{drop: [kill], add: [kill]}", docker_default_capabilities},
	    {"{add: [all]}", (BIT(CAP_LAST_CAP) << 1) - 1},
	    {"{drop: [all], add: [checkpoint_restore]}", BIT(CAP_CHECKPOINT_RESTORE)},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char yaml[200];
		struct config *config;

		snprintf(yaml, sizeof(yaml),
			 "groups: {g: {tasks: {t: {command: a, isolation: {capabilities: %s}}}}}\n",
			 rows[i].capabilities);
		print_message("capabilities: %s\n", rows[i].capabilities);
		config = parse_ok(yaml);
		assert_int_equal(isolation_of(config, "g/t")->capabilities, rows[i].mask);
		config_free(config);
	}
}

static void test_seccomp_forms(void **state)
{
	struct config *config = parse_ok(
	    "groups:\n"
	    "  g:\n"
	    "    tasks:\n"
	    "      default: {command: a, isolation: {seccomp: default}}\n"
	    "      unconfined: {command: a, isolation: {seccomp: unconfined}}\n"
	    "      errno: {command: a, isolation: {seccomp: {default_action: errno, allow: []}}}\n"
	    "      allow: {command: a, isolation: {seccomp: {default_action: allow, deny: [mount, "
	    "umount2, vm86]}}}\n"
	    "      log: {command: a, isolation: {seccomp: {default_action: log}}}\n");
	const struct isolation_config *isolation;

	assert_int_equal(isolation_of(config, "g/default")->seccomp.kind, SECCOMP_PROFILE_DEFAULT);
	assert_int_equal(isolation_of(config, "g/unconfined")->seccomp.kind,
			 SECCOMP_PROFILE_UNCONFINED);
	isolation = isolation_of(config, "g/errno");
	assert_int_equal(isolation->seccomp.kind, SECCOMP_PROFILE_CUSTOM);
	assert_int_equal(isolation->seccomp.default_action, SECCOMP_ACTION_ERRNO);
	assert_strings(isolation->seccomp.allow, NULL, 0);
	assert_null(isolation->seccomp.deny);
	/* vm86 does not exist on x86_64, but libseccomp knows it: a profile
	 * written for several architectures stays valid. */
	isolation = isolation_of(config, "g/allow");
	assert_int_equal(isolation->seccomp.default_action, SECCOMP_ACTION_ALLOW);
	assert_null(isolation->seccomp.allow);
	assert_strings(isolation->seccomp.deny, (const char *const[]){"mount", "umount2", "vm86"},
		       3);
	assert_int_equal(isolation_of(config, "g/log")->seccomp.default_action, SECCOMP_ACTION_LOG);
	config_free(config);
}

static void test_rlimit_values(void **state)
{
	struct config *config = parse_ok("groups:\n"
					 "  g:\n"
					 "    tasks:\n"
					 "      t:\n"
					 "        command: a\n"
					 "        isolation:\n"
					 "          rlimits:\n"
					 "            as: 512M\n"
					 "            core: [0, unlimited]\n"
					 "            cpu: 60\n"
					 "            data: 1g\n"
					 "            fsize: [1M, 2M]\n"
					 "            locks: 100\n"
					 "            memlock: 64K\n"
					 "            msgqueue: 819200\n"
					 "            nice: 0\n"
					 "            nofile: [1024, 1048576]\n"
					 "            nproc: unlimited\n"
					 "            rss: 18446744073709551615\n"
					 "            rtprio: 99\n"
					 "            rttime: [1000000, 2000000]\n"
					 "            sigpending: [7, 7]\n"
					 "            stack: 8M\n");
	const struct isolation_config *isolation = isolation_of(config, "g/t");

	assert_int_equal(isolation->rlimit_count, 16);
	assert_rlimit(isolation, RLIMIT_AS, 512ULL << 20, 512ULL << 20);
	assert_rlimit(isolation, RLIMIT_CORE, 0, UINT64_MAX);
	assert_rlimit(isolation, RLIMIT_CPU, 60, 60);
	assert_rlimit(isolation, RLIMIT_DATA, 1ULL << 30, 1ULL << 30);
	assert_rlimit(isolation, RLIMIT_FSIZE, 1 << 20, 2 << 20);
	assert_rlimit(isolation, RLIMIT_LOCKS, 100, 100);
	assert_rlimit(isolation, RLIMIT_MEMLOCK, 64 << 10, 64 << 10);
	assert_rlimit(isolation, RLIMIT_MSGQUEUE, 819200, 819200);
	assert_rlimit(isolation, RLIMIT_NICE, 0, 0);
	assert_rlimit(isolation, RLIMIT_NOFILE, 1024, 1048576);
	assert_rlimit(isolation, RLIMIT_NPROC, UINT64_MAX, UINT64_MAX);
	assert_rlimit(isolation, RLIMIT_RSS, UINT64_MAX, UINT64_MAX);
	assert_rlimit(isolation, RLIMIT_RTPRIO, 99, 99);
	assert_rlimit(isolation, RLIMIT_RTTIME, 1000000, 2000000);
	assert_rlimit(isolation, RLIMIT_SIGPENDING, 7, 7);
	assert_rlimit(isolation, RLIMIT_STACK, 8 << 20, 8 << 20);
	config_free(config);
}

static void test_group_defaults_merge_field_by_field(void **state)
{
	struct config *config = parse_ok("groups:\n"
					 "  g:\n"
					 "    isolation:\n"
					 "      namespaces: [pid, uts]\n"
					 "      hostname: shared\n"
					 "      capabilities: {drop: [all], add: [kill]}\n"
					 "      seccomp: {default_action: errno, allow: [read]}\n"
					 "      rlimits: {nofile: 1024, core: 0}\n"
					 "      umask: \"077\"\n"
					 "    tasks:\n"
					 "      inherits: {command: a}\n"
					 "      own:\n"
					 "        command: a\n"
					 "        isolation:\n"
					 "          namespaces: [pid, uts, net]\n"
					 "          hostname: own\n"
					 "          init: false\n"
					 "          capabilities: {add: [net_admin]}\n"
					 "          seccomp: unconfined\n"
					 "          no_new_privileges: false\n"
					 "          rlimits: {nofile: 8192, nproc: 50}\n"
					 "  other:\n"
					 "    tasks:\n"
					 "      alone: {command: a}\n");
	const struct isolation_config *inherits = isolation_of(config, "g/inherits");
	const struct isolation_config *own = isolation_of(config, "g/own");

	/* A task without its own map is isolated by the group's. */
	assert_true(inherits->enabled);
	assert_int_equal(inherits->namespaces, ISOLATION_NS_PID | ISOLATION_NS_UTS);
	assert_string_equal(inherits->hostname, "shared");
	assert_true(inherits->init);
	assert_int_equal(inherits->capabilities, BIT(CAP_KILL));
	assert_int_equal(inherits->seccomp.kind, SECCOMP_PROFILE_CUSTOM);
	assert_strings(inherits->seccomp.allow, (const char *const[]){"read"}, 1);
	assert_true(inherits->no_new_privileges);
	assert_int_equal(inherits->rlimit_count, 2);
	assert_rlimit(inherits, RLIMIT_NOFILE, 1024, 1024);
	assert_rlimit(inherits, RLIMIT_CORE, 0, 0);
	assert_int_equal(inherits->umask, 077);

	/* The task's fields win. The namespaces list and the capabilities
	 * map replace the group's as a whole; rlimits one resource at a
	 * time; umask comes from the group. */
	assert_int_equal(own->namespaces, ISOLATION_NS_PID | ISOLATION_NS_UTS | ISOLATION_NS_NET);
	assert_string_equal(own->hostname, "own");
	assert_false(own->init);
	assert_int_equal(own->capabilities, docker_default_capabilities | BIT(CAP_NET_ADMIN));
	assert_int_equal(own->seccomp.kind, SECCOMP_PROFILE_UNCONFINED);
	assert_null(own->seccomp.allow);
	assert_false(own->no_new_privileges);
	assert_int_equal(own->rlimit_count, 3);
	assert_rlimit(own, RLIMIT_NOFILE, 8192, 8192);
	assert_rlimit(own, RLIMIT_CORE, 0, 0);
	assert_rlimit(own, RLIMIT_NPROC, 50, 50);
	assert_int_equal(own->umask, 077);

	assert_false(isolation_of(config, "other/alone")->enabled);
	config_free(config);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_field),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_umask_spellings),
	    cmocka_unit_test(test_capability_spellings),
	    cmocka_unit_test(test_seccomp_forms),
	    cmocka_unit_test(test_rlimit_values),
	    cmocka_unit_test(test_group_defaults_merge_field_by_field),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
