/* A signal to corral is a request: who may ask for what (a task only with
 * the matching control: right; the kernel, corral's parent and operators
 * always), a sender gone before corral looked, and which tasks can signal
 * corral at all (the check's warning, and that gone sender's fate). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/model/config.h"
#include "supervisor/pid1/signal_exposure.h"
#include "supervisor/pid1/signal_judgement.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct judgement_case {
	enum signal_sender_kind kind;
	int signal_number;
	unsigned rights;
	bool tasks_can_signal;
	enum signal_verdict expected;
};

static const struct judgement_case cases[] = {
    /* A task: the matching right, and only that one. */
    {SIGNAL_FROM_TASK, SIGTERM, 0, true, SIGNAL_REFUSE_NOT_GRANTED},
    {SIGNAL_FROM_TASK, SIGINT, CONTROL_RIGHT_RELOAD, true, SIGNAL_REFUSE_NOT_GRANTED},
    {SIGNAL_FROM_TASK, SIGQUIT, CONTROL_RIGHT_SHUTDOWN, true, SIGNAL_HONOUR},
    {SIGNAL_FROM_TASK, SIGTERM, CONTROL_RIGHT_SHUTDOWN, true, SIGNAL_HONOUR},
    {SIGNAL_FROM_TASK, SIGHUP, CONTROL_RIGHT_SHUTDOWN, true, SIGNAL_REFUSE_NOT_GRANTED},
    {SIGNAL_FROM_TASK, SIGHUP, CONTROL_RIGHT_RELOAD, true, SIGNAL_HONOUR},
    {SIGNAL_FROM_TASK, SIGUSR2, CONTROL_RIGHT_RELOAD | CONTROL_RIGHT_SHUTDOWN, true,
     SIGNAL_REFUSE_NOT_GRANTED},
    {SIGNAL_FROM_TASK, SIGUSR2, CONTROL_RIGHT_UPGRADE, true, SIGNAL_HONOUR},
    /* exec or signal rights are not shutdown's */
    {SIGNAL_FROM_TASK, SIGTERM, CONTROL_RIGHT_EXEC | CONTROL_RIGHT_SIGNAL, true,
     SIGNAL_REFUSE_NOT_GRANTED},
    /* A signal that asks for nothing is no request. */
    {SIGNAL_FROM_TASK, SIGUSR1, 0, true, SIGNAL_HONOUR},
    /* What corral started outside a task's cgroup: never. */
    {SIGNAL_FROM_STARTED, SIGHUP, CONTROL_RIGHT_RELOAD, true, SIGNAL_REFUSE_STARTED},
    /* Gone: refused when a task could have sent it. */
    {SIGNAL_FROM_GONE, SIGTERM, 0, true, SIGNAL_REFUSE_GONE_MAY_BE_TASK},
    {SIGNAL_FROM_GONE, SIGTERM, 0, false, SIGNAL_HONOUR},
    /* Everyone else, as always. */
    {SIGNAL_FROM_KERNEL_OR_ABOVE, SIGTERM, 0, true, SIGNAL_HONOUR},
    {SIGNAL_FROM_PARENT, SIGUSR2, 0, true, SIGNAL_HONOUR},
    {SIGNAL_FROM_CORRAL, SIGHUP, 0, true, SIGNAL_HONOUR},
    {SIGNAL_FROM_OTHER, SIGHUP, 0, true, SIGNAL_HONOUR},
};

static void test_the_judgement_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct judgement_case *c = &cases[i];
		struct signal_sender sender = {.kind = c->kind, .pid = 42, .task = "web/app"};
		print_message("case %zu\n", i);
		assert_int_equal(signal_judgement_decide(&sender, c->signal_number, c->rights,
							 c->tasks_can_signal),
				 c->expected);
	}
}

static void test_senders_are_described_by_pid_and_what_they_are(void **state)
{
	(void)state;
	char text[128];
	struct signal_sender task = {.kind = SIGNAL_FROM_TASK, .pid = 42, .task = "web/app"};
	signal_judgement_describe_sender(&task, text, sizeof(text));
	assert_string_equal(text, "pid 42 (task web/app)");
	struct signal_sender parent = {.kind = SIGNAL_FROM_PARENT, .pid = 7};
	signal_judgement_describe_sender(&parent, text, sizeof(text));
	assert_string_equal(text, "pid 7 (corral's parent)");
}

static struct task_config task_with(unsigned namespaces, const char *user, bool isolated)
{
	struct task_config task;
	memset(&task, 0, sizeof(task));
	task.full_name = "web/app";
	task.user = (char *)user;
	task.isolation.enabled = isolated;
	task.isolation.namespaces = namespaces;
	return task;
}

static void test_which_tasks_can_signal_corral(void **state)
{
	(void)state;
	/* corral as root: root tasks in its pid namespace can. */
	struct task_config task = task_with(ISOLATION_NS_MOUNT, NULL, true);
	assert_true(signal_exposure_task_can_signal(&task, 0));
	task = task_with(ISOLATION_NS_MOUNT, "0:0", true);
	assert_true(signal_exposure_task_can_signal(&task, 0));
	/* A pid namespace of its own, or another uid: cannot. */
	task = task_with(ISOLATION_NS_PID | ISOLATION_NS_MOUNT, NULL, true);
	assert_false(signal_exposure_task_can_signal(&task, 0));
	task = task_with(ISOLATION_NS_MOUNT, "65534", true);
	assert_false(signal_exposure_task_can_signal(&task, 0));
	/* ... unless it keeps CAP_KILL. */
	task.isolation.capabilities = 1ull << 5; /* CAP_KILL */
	assert_true(signal_exposure_task_can_signal(&task, 0));
	/* corral as uid 1000: its own user's tasks can, root's too. */
	task = task_with(0, NULL, false);
	assert_true(signal_exposure_task_can_signal(&task, 1000));
	task = task_with(0, "1001", false);
	assert_false(signal_exposure_task_can_signal(&task, 1000));
	/* Root in a user namespace is whoever its map says outside. */
	struct id_map_range map = {.inside = 0, .outside = 100000, .count = 65536};
	task = task_with(ISOLATION_NS_USER | ISOLATION_NS_MOUNT, NULL, true);
	task.isolation.uid_map = &map;
	task.isolation.uid_map_count = 1;
	assert_int_equal(signal_exposure_host_uid(&task, 0), 100000);
	assert_false(signal_exposure_task_can_signal(&task, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_judgement_table),
	    cmocka_unit_test(test_senders_are_described_by_pid_and_what_they_are),
	    cmocka_unit_test(test_which_tasks_can_signal_corral),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
