/* A control client found to be inside a task from its /proc/PID/cgroup:
 * below corral's task cgroups (root/GROUP/TASK, or deeper; a group's own
 * cgroup too), never corral's own root/supervisor, nor anything outside
 * root. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor/control/control_peer.h"

static void test_the_v2_line_is_found_among_v1_lines(void **state)
{
	(void)state;
	char path[256];
	assert_true(control_peer_v2_cgroup("12:pids:/x\n1:name=systemd:/y\n0::/a/b c\n", path,
					   sizeof(path)));
	assert_string_equal(path, "/a/b c");
	assert_true(control_peer_v2_cgroup("0::/", path, sizeof(path)));
	assert_string_equal(path, "/");
	assert_false(control_peer_v2_cgroup("4:memory:/x\n", path, sizeof(path)));
	assert_false(control_peer_v2_cgroup("0::/much/too/long\n", path, 8));
}

struct cgroup_case {
	const char *root, *path, *task; /* task NULL: not a task's */
};

static const struct cgroup_case cases[] = {
    {"/user.slice/corral-7-ab", "/user.slice/corral-7-ab/web/app", "web/app"},
    {"/user.slice/corral-7-ab", "/user.slice/corral-7-ab/web/app@1/sub/deeper", "web/app@1"},
    {"/user.slice/corral-7-ab", "/user.slice/corral-7-ab/supervisor", NULL},
    {"/user.slice/corral-7-ab", "/user.slice/corral-7-ab/supervisor/x", NULL},
    {"/user.slice/corral-7-ab", "/user.slice/corral-7-ab/web", "web"},
    {"/user.slice/corral-7-ab", "/user.slice/corral-7-ab", NULL},
    {"/user.slice/corral-7-ab", "/user.slice/corral-7-abc/web/app", NULL},
    {"/user.slice/corral-7-ab", "/user.slice", NULL},
    /* systemd's own, in a unit with Delegate=yes: ExecReload=corral
     * reload runs there */
    {"/system.slice/corral.service", "/system.slice/corral.service/.control", NULL},
    {"/system.slice/corral.service", "/system.slice/corral.service/.controls/x", ".controls/x"},
    /* corral owns the hierarchy's root (PID 1 of a container) */
    {"", "/web/app", "web/app"},
    {"", "/supervisor", NULL},
    {"", "/", NULL},
    /* nothing but corral makes cgroups below its root: whatever is
     * there (and not its own leaf) came from a task */
    {"", "/init.scope", "init.scope"},
};

static void test_a_task_is_named_by_its_cgroup(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char task[160] = "";
		print_message("%s under %s\n", cases[i].path, cases[i].root);
		bool found =
		    control_peer_task_of_cgroup(cases[i].root, cases[i].path, task, sizeof(task));
		assert_int_equal(found, cases[i].task != NULL);
		if (found)
			assert_string_equal(task, cases[i].task);
	}
}

/* The parent is read after the command name's last ')': a task may name
 * itself "x) R 1" to pose as pid 1's child. */
static void test_the_parent_is_read_past_a_command_that_poses(void **state)
{
	(void)state;
	assert_int_equal(control_peer_stat_parent("42 (sleep) S 7 42 42 0 -1"), 7);
	assert_int_equal(control_peer_stat_parent("42 (x) R 1 (y) S 300 42 42"), 300);
	assert_int_equal(control_peer_stat_parent("42 (a b) S 0 0 0"), 0);
	assert_int_equal(control_peer_stat_parent("42 sleep S 7"), -1);
	assert_int_equal(control_peer_stat_parent("42 (sleep)"), -1);
}

/* A signal's sender is looked at by pid: a child of ours descends from
 * "corral" (this test) while it lives; once reaped, it is gone. */
static void test_a_pid_is_told_while_it_lives_and_gone_once_reaped(void **state)
{
	(void)state;
	struct control_peer_rules rules;
	control_peer_rules_init(&rules, NULL);
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(ready[0]);
		close(ready[1]); /* says it runs */
		pause();
		_exit(0);
	}
	close(ready[1]);
	char byte;
	assert_int_equal(read(ready[0], &byte, 1), 0);
	close(ready[0]);
	struct control_peer peer;
	control_peer_identify_pid(child, &rules, &peer);
	assert_false(peer.gone);
	assert_true(peer.descends_from_corral);
	assert_int_equal(peer.credentials.pid, child);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	control_peer_identify_pid(child, &rules, &peer);
	assert_true(peer.gone);
	assert_false(control_peer_is_confined(&peer));
	control_peer_rules_free(&rules);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_v2_line_is_found_among_v1_lines),
	    cmocka_unit_test(test_a_task_is_named_by_its_cgroup),
	    cmocka_unit_test(test_the_parent_is_read_past_a_command_that_poses),
	    cmocka_unit_test(test_a_pid_is_told_while_it_lives_and_gone_once_reaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
