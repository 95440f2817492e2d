/* Networks in the config: a task's `isolation.network` mode (merged from
 * the group, one model with `net` in namespaces), a group's bridge and
 * subnet, the addresses bridge tasks get, and every mistake reported once
 * at its place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/load/config_load.h"
#include "config/load/config_network.h"
#include "config_cases.h"
#include "isolation/task_isolation.h"

#define ARRAY_SIZE(a)  (sizeof(a) / sizeof((a)[0]))
#define IP(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (d))

static void test_modes_and_their_model(void **state)
{
	struct config *config = parse_ok(
	    "groups:\n"
	    "  web:\n"
	    "    network: {bridge: corral0, subnet: 10.88.0.0/24}\n"
	    "    isolation: {namespaces: [pid, net], network: {mode: bridge}}\n"
	    "    tasks:\n"
	    "      inherits: {command: a}\n"
	    "      host: {command: a, isolation: {namespaces: [pid], network: {mode: host}}}\n"
	    "      none: {command: a, isolation: {network: {mode: none}}}\n"
	    "      net: {command: a, isolation: {namespaces: [net]}}\n"
	    "      pod: {command: a, isolation: {network: {mode: group}}}\n"
	    "      plain: {command: a, isolation: {namespaces: []}}\n"
	    "      bare: {command: a}\n"
	    "      userns: {command: a, isolation: {namespaces: [user], user: {uid_map: \"0 1000 "
	    "1\", "
	    "gid_map: \"0 1000 1\"}}}\n"
	    "  solo:\n"
	    "    tasks: {net: {command: a, isolation: {namespaces: [net]}}}\n");
	const struct group_config *group = &config->groups[0];
	const struct isolation_config *solo = &config->groups[1].tasks[0].isolation;
	static const struct {
		enum network_mode mode;
		unsigned namespaces;
	} expected[] = {
	    /* net from the group's namespaces, but mode bridge: the task
	     * joins the namespace corral prepares, so no NS_NET. */
	    {NETWORK_BRIDGE, ISOLATION_NS_PID},
	    {NETWORK_HOST, ISOLATION_NS_PID},
	    /* mode none and `net` are one model. */
	    {NETWORK_NONE, ISOLATION_NS_PID | ISOLATION_NS_NET},
	    /* A mode written (here in the group) decides over `net`. */
	    {NETWORK_BRIDGE, 0},
	    {NETWORK_GROUP, ISOLATION_NS_PID},
	    /* The group's mode, bridge, still: namespaces are another field. */
	    {NETWORK_BRIDGE, 0},
	    {NETWORK_BRIDGE, ISOLATION_NS_PID},
	    /* A bridge task in a user namespace clones its network namespace
	     * with it: corral connects it between clone and exec. */
	    {NETWORK_BRIDGE, ISOLATION_NS_USER | ISOLATION_NS_NET},
	};

	assert_string_equal(group->network.bridge, "corral0");
	assert_int_equal(group->network.subnet, IP(10, 88, 0, 0));
	assert_int_equal(group->network.prefix_length, 24);
	assert_int_equal(group->task_count, ARRAY_SIZE(expected));
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++) {
		print_message("%s\n", group->tasks[i].full_name);
		assert_int_equal(group->tasks[i].isolation.network, expected[i].mode);
		assert_int_equal(group->tasks[i].isolation.namespaces, expected[i].namespaces);
	}
	/* `net` with no mode anywhere: mode none. */
	assert_int_equal(solo->network, NETWORK_NONE);
	assert_int_equal(solo->namespaces, ISOLATION_NS_NET);
	config_free(config);
}

static void test_addresses_in_file_order(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  web:\n"
		     "    network: {bridge: br-web, subnet: 172.20.8.0/30}\n"
		     "    tasks:\n"
		     "      only: {command: a, isolation: {network: {mode: bridge}}}\n"
		     "      other: {command: a, isolation: {network: {mode: none}}}\n"
		     "  api:\n"
		     "    network: {bridge: br-api, subnet: 10.1.0.0/16}\n"
		     "    tasks:\n"
		     "      a: {command: a, isolation: {network: {mode: bridge}}}\n"
		     "      b: {command: a}\n"
		     "      c: {command: a, isolation: {network: {mode: group}}}\n"
		     "      d: {command: a, isolation: {network: {mode: bridge}}}\n");
	const struct group_config *web = &config->groups[0], *api = &config->groups[1];
	char text[16];

	/* A /30 holds the bridge and exactly one task. */
	assert_int_equal(group_network_gateway(&web->network), IP(172, 20, 8, 1));
	assert_int_equal(group_network_task_address(web, 0), IP(172, 20, 8, 2));
	assert_int_equal(group_network_task_address(web, 1), 0);
	assert_int_equal(group_network_task_address(api, 0), IP(10, 1, 0, 2));
	assert_int_equal(group_network_task_address(api, 1), 0);
	assert_int_equal(group_network_task_address(api, 2), 0);
	assert_int_equal(group_network_task_address(api, 3), IP(10, 1, 0, 3));
	assert_true(group_has_network_mode(api, NETWORK_GROUP));
	assert_false(group_has_network_mode(web, NETWORK_GROUP));
	/* The shared namespace takes the last host, out of the tasks' way. */
	assert_int_equal(group_network_shared_address(api), IP(10, 1, 255, 254));
	assert_int_equal(group_network_shared_address(web), 0);
	network_address_format(IP(10, 1, 0, 3), text);
	assert_string_equal(text, "10.1.0.3");
	config_free(config);
}

/* A task "app" in group "web" with a bridge: the task's value starts at
 * line 5, column 12. */
#define BRIDGED_TASK(flow)                                                                         \
	"groups:\n  web:\n    network: {bridge: corral0, subnet: 10.88.0.0/24}\n    tasks:\n"      \
	"      app: " flow "\n"
#define GROUP_NETWORK(flow)                                                                        \
	"groups:\n  web:\n    network: " flow "\n    tasks: {app: {command: a}}\n"

static const struct error_case cases[] = {
    {"network mode misspelt", BRIDGED_TASK("{command: a, isolation: {network: {mode: brige}}}"), 5,
     53,
     "web/app: isolation.network.mode: unknown network mode \"brige\"; did you mean "
     "\"bridge\"?"},
    {"network as a string", BRIDGED_TASK("{command: a, isolation: {network: bridge}}"), 5, 46,
     "web/app: isolation.network: must be a map such as {mode: bridge}, not a string"},
    {"network without a mode", BRIDGED_TASK("{command: a, isolation: {network: {}}}"), 5, 46,
     "web/app: isolation.network: missing \"mode\" (host, none, bridge or group)"},
    {"host with net",
     BRIDGED_TASK("{command: a, isolation: {namespaces: [net], network: {mode: host}}}"), 5, 72,
     "web/app: isolation.network.mode: host keeps corral's network namespace, but "
     "isolation.namespaces has net; leave net out, or use mode none"},
    {"host from the group, net from the task",
     "groups:\n  web:\n    isolation: {network: {mode: host}}\n"
     "    tasks: {app: {command: a, isolation: {namespaces: [net]}}}\n",
     3, 33,
     "web/app: isolation.network.mode: host (set in group web) keeps corral's network "
     "namespace, but isolation.namespaces has net; leave net out, or use mode none"},
    {"host with net, both in the group",
     "groups:\n  web:\n    isolation: {namespaces: [net], network: {mode: host}}\n"
     "    tasks: {a: {command: a}, b: {command: b}}\n",
     3, 52,
     "group web: isolation.network.mode: host keeps corral's network namespace, but "
     "isolation.namespaces has net; leave net out, or use mode none"},
    {"bridge without a bridge",
     "groups:\n  web:\n    tasks: {app: {command: a, isolation: {network: {mode: bridge}}}}\n", 3,
     59,
     "web/app: isolation.network.mode: bridge needs a bridge of the group: add `network: "
     "{bridge: corral0, subnet: 10.88.0.0/24}` to the group"},
    {"bridge without a bridge, from the group, said once",
     "groups:\n  web:\n    isolation: {network: {mode: bridge}}\n"
     "    tasks: {a: {command: a}, b: {command: b}}\n",
     3, 33,
     "group web: isolation.network.mode: bridge needs a bridge of the group: add `network: "
     "{bridge: corral0, subnet: 10.88.0.0/24}` to the group"},
    {"group mode from the group, user namespace from the task",
     "groups:\n  web:\n    network: {bridge: corral0, subnet: 10.88.0.0/24}\n"
     "    isolation: {network: {mode: group}}\n"
     "    tasks: {app: {command: a, isolation: {namespaces: [user], user: "
     "{uid_map: \"0 100000 1\", gid_map: \"0 100000 1\"}}}}\n",
     4, 33,
     "web/app: isolation.network.mode: group (set in group web) shares a network namespace "
     "that corral makes in its own user namespace, which a task with user in "
     "isolation.namespaces may not join; leave user out, or use mode bridge, none or host"},
    {"group network not a map", GROUP_NETWORK("corral0"), 3, 14,
     "group web: network: must be a map such as {bridge: corral0, subnet: 10.88.0.0/24}, not "
     "a string"},
    {"unknown group network key", GROUP_NETWORK("{bridge: b, subnet: 10.0.0.0/24, mtu: 9000}"), 3,
     47, "group web: network: unknown key \"mtu\" (expected bridge or subnet)"},
    {"no bridge", GROUP_NETWORK("{subnet: 10.0.0.0/24}"), 3, 14,
     "group web: network: missing \"bridge\" (the name of the bridge corral makes, such as "
     "corral0)"},
    {"no subnet", GROUP_NETWORK("{bridge: b}"), 3, 14,
     "group web: network: missing \"subnet\" (the bridge's IPv4 network, such as "
     "10.88.0.0/24)"},
    {"bridge name too long", GROUP_NETWORK("{bridge: corral-web-bridge, subnet: 10.0.0.0/24}"), 3,
     23,
     "group web: network.bridge: must be an interface name of 1 to 15 letters, digits, '-', "
     "'_' and '.', not \"corral-web-bridge\""},
    {"bridge name with a slash", GROUP_NETWORK("{bridge: a/b, subnet: 10.0.0.0/24}"), 3, 23,
     "group web: network.bridge: must be an interface name of 1 to 15 letters, digits, '-', "
     "'_' and '.', not \"a/b\""},
    {"bridge name as a kernel template", GROUP_NETWORK("{bridge: \"br%d\", subnet: 10.0.0.0/24}"),
     3, 23,
     "group web: network.bridge: must be an interface name of 1 to 15 letters, digits, '-', "
     "'_' and '.', not \"br%d\""},
    {"bridge named ..", GROUP_NETWORK("{bridge: .., subnet: 10.0.0.0/24}"), 3, 23,
     "group web: network.bridge: must be an interface name of 1 to 15 letters, digits, '-', "
     "'_' and '.', not \"..\""},
    {"subnet without a prefix", GROUP_NETWORK("{bridge: b, subnet: 10.0.0.0}"), 3, 34,
     "group web: network.subnet: must be an IPv4 network such as 10.88.0.0/24, not "
     "\"10.0.0.0\""},
    {"subnet not an address", GROUP_NETWORK("{bridge: b, subnet: 10.0.0.256/24}"), 3, 34,
     "group web: network.subnet: must be an IPv4 network such as 10.88.0.0/24, not "
     "\"10.0.0.256/24\""},
    {"subnet with a bad prefix", GROUP_NETWORK("{bridge: b, subnet: 10.0.0.0/2x}"), 3, 34,
     "group web: network.subnet: must be an IPv4 network such as 10.88.0.0/24, not "
     "\"10.0.0.0/2x\""},
    {"prefix too long", GROUP_NETWORK("{bridge: b, subnet: 10.0.0.0/31}"), 3, 34,
     "group web: network.subnet: prefix /31 is out of range: 8 to 30 (a /30 has room for the "
     "bridge and one task)"},
    {"prefix too short", GROUP_NETWORK("{bridge: b, subnet: 10.0.0.0/7}"), 3, 34,
     "group web: network.subnet: prefix /7 is out of range: 8 to 30 (a /30 has room for the "
     "bridge and one task)"},
    {"host bits set", GROUP_NETWORK("{bridge: b, subnet: 10.88.0.1/24}"), 3, 34,
     "group web: network.subnet: \"10.88.0.1/24\" has host bits set; did you mean "
     "10.88.0.0/24?"},
    {"subnet too small for the tasks",
     "groups:\n  web:\n    network: {bridge: b, subnet: 10.0.0.0/30}\n"
     "    isolation: {network: {mode: bridge}}\n"
     "    tasks: {a: {command: a}, b: {command: b}, c: {command: c}}\n",
     3, 34,
     "group web: network.subnet: 10.0.0.0/30 has room for 1 address besides the bridge's, "
     "but the group needs 3: 3 for tasks with network mode bridge"},
    {"subnet too small for the tasks and the shared namespace",
     "groups:\n  web:\n    network: {bridge: b, subnet: 10.0.0.0/29}\n"
     "    tasks:\n"
     "      a: {command: a, isolation: {network: {mode: bridge}}}\n"
     "      b: {command: a, isolation: {network: {mode: bridge}}}\n"
     "      c: {command: a, isolation: {network: {mode: bridge}}}\n"
     "      d: {command: a, isolation: {network: {mode: bridge}}}\n"
     "      e: {command: a, isolation: {network: {mode: bridge}}}\n"
     "      f: {command: a, isolation: {network: {mode: group}}}\n",
     3, 34,
     "group web: network.subnet: 10.0.0.0/29 has room for 5 addresses besides the bridge's, "
     "but the group needs 6: 5 for tasks with network mode bridge and 1 for its shared "
     "namespace (mode group)"},
    {"a group with a network still needs tasks",
     "groups:\n  web: {network: {bridge: b, subnet: 10.0.0.0/24}}\n", 2, 8,
     "group web: missing \"tasks\" (a group needs at least one task)"},
    {"two groups on one bridge",
     "groups:\n  web: {network: {bridge: b, subnet: 10.0.0.0/24}, tasks: {a: {command: a}}}\n"
     "  api: {network: {bridge: b, subnet: 10.0.1.0/24}, tasks: {a: {command: a}}}\n",
     3, 27,
     "group api: network.bridge: \"b\" is group web's bridge already; each group needs a "
     "bridge of its own"},
    {"overlapping subnets",
     "groups:\n  web: {network: {bridge: b, subnet: 10.0.4.0/24}, tasks: {a: {command: a}}}\n"
     "  api: {network: {bridge: c, subnet: 10.0.0.0/21}, tasks: {a: {command: a}}}\n",
     3, 38, "group api: network.subnet: \"10.0.0.0/21\" overlaps group web's subnet 10.0.4.0/24"},
};

static void test_one_error_each(void **state)
{
	assert_error_cases(cases, ARRAY_SIZE(cases));
}

/* Which tasks' children join a spare namespace made ahead by corral
 * (supervisor/tasks/network_spares.h) instead of cloning one: mode none without
 * a user namespace, whichever way it was written. */
static void test_which_tasks_take_a_spare_namespace(void **state)
{
	struct config *config = parse_ok(
	    "groups:\n"
	    "  web:\n"
	    "    network: {bridge: corral0, subnet: 10.88.0.0/24}\n"
	    "    tasks:\n"
	    "      none: {command: a, isolation: {network: {mode: none}}}\n"
	    "      net: {command: a, isolation: {namespaces: [pid, net]}}\n"
	    "      host: {command: a, isolation: {namespaces: [pid]}}\n"
	    "      bridge: {command: a, isolation: {network: {mode: bridge}}}\n"
	    "      pod: {command: a, isolation: {network: {mode: group}}}\n"
	    "      userns: {command: a, isolation: {namespaces: [user, net], user: {uid_map: "
	    "\"0 1000 1\", gid_map: \"0 1000 1\"}}}\n"
	    "      bare: {command: a}\n");
	static const bool expected[] = {true, true, false, false, false, false, false};
	const struct group_config *group = &config->groups[0];

	assert_int_equal(group->task_count, ARRAY_SIZE(expected));
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++) {
		print_message("%s\n", group->tasks[i].full_name);
		assert_int_equal(task_isolation_takes_spare_network(&group->tasks[i].isolation),
				 expected[i]);
	}
	config_free(config);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_modes_and_their_model),
	    cmocka_unit_test(test_which_tasks_take_a_spare_namespace),
	    cmocka_unit_test(test_addresses_in_file_order),
	    cmocka_unit_test(test_one_error_each),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
