/* A config copied, and a copy with other instance counts (`corral scale`):
 * the copy equals its source field for field (config_diff sees no change),
 * owns everything (freed apart under ASan), and resolves every `after:`
 * again where instances were left out or added. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/load/config_copy.h"
#include "config/load/config_load.h"
#include "config/model/config.h"
#include "config/model/config_diff.h"
#include "config_cases.h"

/* Most keys that point somewhere, so that a field the copy shares or
 * forgets shows as a difference or a double free. */
static const char *const rich =
    "termination_log: /tmp/corral-copy-termination\n"
    "notify: {ready: [web, other]}\n"
    "http: {listen: '127.0.0.1:9090'}\n"
    "groups:\n"
    "  web:\n"
    "    network: {bridge: br-copy, subnet: 10.77.0.0/24}\n"
    "    hooks: [{name: vol, stage: prestart, exec: [/bin/true, group]}]\n"
    "    tasks:\n"
    "      db:\n"
    "        command: [sleep, '9']\n"
    "        env: {A: '1', B: two}\n"
    "        cwd: /tmp\n"
    "        user: '1000:1000'\n"
    "        groups: [44]\n"
    "        resources: {memory: 64M, cpuset: '0'}\n"
    "        readiness: {http: {port: 8080, path: /ready, headers: {X-A: b}}, timeout: 5s}\n"
    "        health: {exec: [/bin/true, health], interval: 5s}\n"
    "        log: {dir: /tmp/corral-copy-logs}\n"
    "        hooks: [{name: mine, stage: poststart, exec: [/bin/true, task]}]\n"
    "        cdi: {devices: [vendor.com/gpu=0], spec_dirs: [/etc/cdi]}\n"
    "        isolation:\n"
    "          namespaces: [pid, mount, uts, user]\n"
    "          hostname: box\n"
    "          rootfs: /tmp\n"
    "          rlimits: {nofile: 1024}\n"
    "          seccomp: {default_action: errno, allow: [read, write]}\n"
    "          user: {uid_map: '0 100000 65536', gid_map: '0 100000 65536'}\n"
    "          mounts: [{type: tmpfs, target: /scratch, options: [size=1m]}]\n"
    "          devices: [/dev/null]\n"
    "          network: {mode: bridge}\n"
    "      web:\n"
    "        command: echo $CORRAL_INSTANCE\n"
    "        instances: 3\n"
    "        update: {strategy: rolling, max_unavailable: 2}\n"
    "        after: {db: started}\n"
    "      edge:\n"
    "        command: [sleep, '9']\n"
    "        after: [web, db]\n"
    "        wait_for: [{tcp: 'db.example:5432'}, {path: /tmp/corral-copy-ready}]\n"
    "        watch: [{paths: [/tmp/corral-copy-watched], action: restart}]\n"
    "        readiness: {log: {ready: up, not_ready: down}, continuous: true}\n"
    "      backup:\n"
    "        command: [/bin/true]\n"
    "        restart: {policy: on-failure}\n"
    "        schedule: {cron: '0 3 * * *', time_zone: UTC}\n"
    "  other:\n"
    "    tasks:\n"
    "      far: {command: [sleep, '9'], after: [web/web, web/edge]}\n";

static const struct task_config *task_named(const struct config *config, const char *full_name)
{
	for (size_t g = 0; g < config->group_count; g++)
		for (size_t t = 0; t < config->groups[g].task_count; t++)
			if (strcmp(config->groups[g].tasks[t].full_name, full_name) == 0)
				return &config->groups[g].tasks[t];
	fail_msg("no task %s", full_name);
	return NULL;
}

/* The target of each edge of `full_name`, by the indices the copy set. */
static void expect_edges(const struct config *config, const char *full_name, const char *expected)
{
	const struct task_config *task = task_named(config, full_name);
	char seen[512] = "";
	for (size_t d = 0; d < task->after_count; d++) {
		const struct task_dependency *edge = &task->after[d];
		const struct task_config *target =
		    &config->groups[edge->group_index].tasks[edge->task_index];
		if (d)
			strcat(seen, " ");
		strcat(seen, target->full_name);
	}
	assert_string_equal(seen, expected);
}

static void expect_same_tasks(const struct config *a, const struct config *b)
{
	assert_int_equal(a->group_count, b->group_count);
	for (size_t g = 0; g < a->group_count; g++) {
		assert_int_equal(a->groups[g].task_count, b->groups[g].task_count);
		for (size_t t = 0; t < a->groups[g].task_count; t++) {
			struct task_diff diff;
			const struct task_config *x = &a->groups[g].tasks[t],
						 *y = &b->groups[g].tasks[t];
			task_config_diff(x, y, &diff);
			assert_int_equal(diff.change, TASK_CHANGE_NONE);
			assert_string_equal(x->full_name, y->full_name);
			assert_ptr_not_equal(x->argv, y->argv);
		}
	}
}

static void test_a_copy_is_equal_and_its_own(void **state)
{
	(void)state;
	struct config *config = parse_ok(rich);
	struct config *copy = config_with_instances(config, NULL, 0);
	expect_same_tasks(config, copy);
	assert_string_equal(copy->groups[0].network.bridge, "br-copy");
	/* Freed first, the source leaves the copy whole. */
	config_free(config);
	expect_edges(copy, "web/edge", "web/web@0 web/web@1 web/web@2 web/db");
	expect_edges(copy, "other/far", "web/web@0 web/web@1 web/web@2 web/edge");
	const struct task_config *db = task_named(copy, "web/db");
	assert_string_equal(db->readiness->probe.headers[0], "X-A: b");
	assert_string_equal(db->isolation.mounts[0].options[0], "size=1m");
	const struct task_config *edge = task_named(copy, "web/edge");
	assert_string_equal(edge->wait_for[0].probe.host, "db.example");
	assert_string_equal(edge->readiness->log_not_ready, "down");
	assert_string_equal(edge->watches[0].paths[0], "/tmp/corral-copy-watched");
	assert_string_equal(copy->notify_ready_groups[1], "other");
	assert_string_equal(copy->termination_log, "/tmp/corral-copy-termination");
	assert_string_equal(copy->http.listen, "127.0.0.1:9090");
	config_free(copy);
}

static void test_more_instances_are_made_from_the_model(void **state)
{
	(void)state;
	struct config *config = parse_ok(rich);
	const struct task_config *model = task_named(config, "web/web@1");
	struct instance_count five = {"web", "web", 5, model};
	struct config *copy = config_with_instances(config, &five, 1);
	const struct group_config *web = &copy->groups[0];
	assert_int_equal(web->task_count, config->groups[0].task_count + 2);
	const char *names[] = {"db", "web@0", "web@1", "web@2", "web@3", "web@4", "edge", "backup"};
	for (size_t t = 0; t < 8; t++)
		assert_string_equal(web->tasks[t].name, names[t]);
	const struct task_config *fourth = task_named(copy, "web/web@4");
	assert_int_equal(fourth->instance, 4);
	assert_string_equal(fourth->instance_of, "web");
	assert_int_equal(fourth->instances, 3); /* as written */
	assert_int_equal(fourth->update.max_unavailable, 2);
	/* Its own wait, resolved in the copy; the tasks that wait for every
	 * instance keep waiting for those they knew. */
	expect_edges(copy, "web/web@4", "web/db");
	expect_edges(copy, "web/edge", "web/web@0 web/web@1 web/web@2 web/db");
	expect_edges(copy, "other/far", "web/web@0 web/web@1 web/web@2 web/edge");
	config_free(config);
	config_free(copy);
}

static void test_fewer_instances_leave_out_the_last_and_their_waits(void **state)
{
	(void)state;
	struct config *config = parse_ok(rich);
	struct instance_count one = {"web", "web", 1, task_named(config, "web/web@0")};
	struct config *copy = config_with_instances(config, &one, 1);
	assert_int_equal(copy->groups[0].task_count, config->groups[0].task_count - 2);
	expect_edges(copy, "web/edge", "web/web@0 web/db");
	expect_edges(copy, "other/far", "web/web@0 web/edge");
	config_free(copy);
	config_free(config);
}

/* corral scale G/T=0, then up again from the kept model: the instances
 * come back at the end of their group, and each gets its number. */
static void test_zero_instances_then_back_from_the_model(void **state)
{
	(void)state;
	struct config *config = parse_ok(rich);
	struct task_config model;
	task_config_copy(&model, task_named(config, "web/web@0"));
	struct instance_count none = {"web", "web", 0, &model};
	struct config *empty = config_with_instances(config, &none, 1);
	assert_int_equal(empty->groups[0].task_count, config->groups[0].task_count - 3);
	for (size_t t = 0; t < empty->groups[0].task_count; t++)
		assert_null(empty->groups[0].tasks[t].instance_of);
	expect_edges(empty, "web/edge", "web/db");
	struct instance_count two = {"web", "web", 2, &model};
	struct config *back = config_with_instances(empty, &two, 1);
	const struct group_config *web = &back->groups[0];
	const char *names[] = {"db", "edge", "backup", "web@0", "web@1"};
	assert_int_equal(web->task_count, 5);
	for (size_t t = 0; t < 5; t++)
		assert_string_equal(web->tasks[t].name, names[t]);
	assert_int_equal(task_named(back, "web/web@1")->instance, 1);
	assert_int_equal(task_named(back, "web/web@1")->instances, 3); /* as written */
	expect_edges(back, "web/web@1", "web/db");
	task_config_copy_free(&model);
	config_free(back);
	config_free(empty);
	config_free(config);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_copy_is_equal_and_its_own),
	    cmocka_unit_test(test_more_instances_are_made_from_the_model),
	    cmocka_unit_test(test_fewer_instances_leave_out_the_last_and_their_waits),
	    cmocka_unit_test(test_zero_instances_then_back_from_the_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
