/* The config loader on valid input: the model it builds, field by field,
 * with the stage defaults and the group -> task merge of restart policies
 * and resources, readiness and health probes (isolation is in
 * test_config_isolation.c);
 * files, JSON, printing diagnostics, and inputs that must not crash it.
 * The error messages are in test_config_errors.c. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/load/config_load.h"
#include "config_cases.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The example of the brief, as a user would write it. */
static const char full_example[] =
    "shutdown_timeout: 30s\n"
    "groups:\n"
    "  web:\n"
    "    restart: {policy: on-failure, attempts: 3, interval: 1m, delay: 1s, mode: fail, "
    "max_delay: 30s}\n"
    "    tasks:\n"
    "      setup:   {command: [\"/bin/sh\", \"-c\", \"echo prepare\"], lifecycle: {hook: "
    "prestart}}\n"
    "      proxy:   {command: [\"/usr/bin/proxy\"], lifecycle: {hook: prestart, sidecar: "
    "true}, readiness: {notify: fd, fd: 3}}\n"
    "      app:\n"
    "        command: [\"/app/server\", \"--port\", \"8080\"]\n"
    "        env: {PORT: \"8080\"}\n"
    "        cwd: /app\n"
    "        user: \"1000:1000\"\n"
    "        restart: {policy: always, delay: 500ms, max_delay: 30s}\n"
    "        kill: {signal: SIGTERM, timeout: 10s}\n"
    "        resources: {memory: 256M, memory_high: 200M, memory_swap: 0, cpu: 0.5, cpu_weight: "
    "100, pids: 128, cpuset: \"0-1\", io_weight: 100, optional: true}\n"
    "        readiness: {exec: [\"pg_isready\", \"-q\"], interval: 1s, timeout: 30s}\n"
    "        health: {exec: [\"/bin/check\"], interval: 10s, timeout: 2s, failures: 3}\n"
    "        isolation: {namespaces: [pid, mount, uts], hostname: app, capabilities: {drop: "
    "[all], add: [net_bind_service]}, seccomp: {default_action: errno, deny: [mount]}, "
    "rlimits: {nofile: [1024, 4096]}, umask: \"0027\"}\n"
    "      announce: {command: \"echo hi\", lifecycle: {hook: poststart}}\n"
    "      cleanup:  {command: [/bin/rm, -f, /run/app.pid], lifecycle: {hook: poststop}}\n";

static const struct task_config *find_task(const struct config *config, const char *full_name)
{
	for (size_t g = 0; g < config->group_count; g++) {
		for (size_t t = 0; t < config->groups[g].task_count; t++) {
			if (strcmp(config->groups[g].tasks[t].full_name, full_name) == 0)
				return &config->groups[g].tasks[t];
		}
	}
	fail_msg("no task %s", full_name);
	return NULL;
}

static void assert_argv(const struct task_config *task, const char *const expected[], size_t count)
{
	assert_int_equal(task->argc, count);
	for (size_t i = 0; i < count; i++)
		assert_string_equal(task->argv[i], expected[i]);
	assert_null(task->argv[count]);
}

static void assert_env(const struct task_config *task, const char *const expected[], size_t count)
{
	assert_non_null(task->env);
	assert_int_equal(task->env_count, count);
	for (size_t i = 0; i < count; i++)
		assert_string_equal(task->env[i], expected[i]);
	assert_null(task->env[count]);
}

static void assert_restart(const struct restart_policy *actual, enum restart_policy_kind policy,
			   unsigned attempts, uint64_t interval_ms, uint64_t delay_ms,
			   uint64_t max_delay_ms, enum restart_mode mode)
{
	assert_int_equal(actual->policy, policy);
	assert_int_equal(actual->attempts, attempts);
	assert_int_equal(actual->interval_ms, interval_ms);
	assert_int_equal(actual->delay_ms, delay_ms);
	assert_int_equal(actual->max_delay_ms, max_delay_ms);
	assert_int_equal(actual->mode, mode);
}

static void assert_probe(const struct probe_config *probe, const char *const expected[],
			 size_t count, uint64_t interval_ms, uint64_t timeout_ms)
{
	assert_int_equal(probe->argc, count);
	for (size_t i = 0; i < count; i++)
		assert_string_equal(probe->argv[i], expected[i]);
	assert_null(probe->argv[count]);
	assert_int_equal(probe->interval_ms, interval_ms);
	assert_int_equal(probe->timeout_ms, timeout_ms);
}

static void assert_no_probe(const struct probe_config *probe)
{
	assert_null(probe->argv);
	assert_int_equal(probe->argc, 0);
	assert_int_equal(probe->interval_ms, 0);
	assert_int_equal(probe->timeout_ms, 0);
}

static void test_full_example(void **state)
{
	struct config *config = parse_ok(full_example);
	const struct group_config *web;
	const struct task_config *task;
	static const char *const task_order[] = {"setup", "proxy", "app", "announce", "cleanup"};

	assert_string_equal(config->path, "test.yaml");
	assert_int_equal(config->shutdown_timeout_ms, 30000);
	assert_int_equal(config->group_count, 1);
	web = &config->groups[0];
	assert_string_equal(web->name, "web");
	assert_int_equal(web->location.line, 3);
	assert_int_equal(web->location.column, 3);
	assert_int_equal(web->task_count, 5);
	for (size_t i = 0; i < ARRAY_SIZE(task_order); i++)
		assert_string_equal(web->tasks[i].name, task_order[i]);

	task = find_task(config, "web/setup");
	assert_string_equal(task->name, "setup");
	assert_int_equal(task->location.line, 6);
	assert_int_equal(task->location.column, 7);
	assert_int_equal(task->stage, STAGE_PRESTART_EPHEMERAL);
	assert_argv(task, (const char *const[]){"/bin/sh", "-c", "echo prepare"}, 3);
	assert_env(task, NULL, 0);
	assert_null(task->cwd);
	assert_null(task->user);
	assert_int_equal(task->kill_signal, SIGTERM);
	assert_int_equal(task->kill_timeout_ms, CONFIG_DEFAULT_KILL_TIMEOUT_MS);
	assert_int_equal(task->kill_mode, KILL_MODE_MIXED);
	assert_restart(&task->restart, RESTART_ON_FAILURE, 3, 60000, 1000, 30000,
		       RESTART_MODE_FAIL);

	/* The group default overrides the stage default (always) too. */
	task = find_task(config, "web/proxy");
	assert_int_equal(task->stage, STAGE_PRESTART_SIDECAR);
	assert_argv(task, (const char *const[]){"/usr/bin/proxy"}, 1);
	assert_int_equal(readiness_of(task)->kind, READINESS_NOTIFY_FD);
	assert_int_equal(readiness_of(task)->fd, 3);
	assert_null(task->health); /* allocated only where written */
	assert_restart(&task->restart, RESTART_ON_FAILURE, 3, 60000, 1000, 30000,
		       RESTART_MODE_FAIL);

	task = find_task(config, "web/app");
	assert_int_equal(task->stage, STAGE_MAIN);
	assert_argv(task, (const char *const[]){"/app/server", "--port", "8080"}, 3);
	assert_env(task, (const char *const[]){"PORT=8080"}, 1);
	assert_string_equal(task->cwd, "/app");
	assert_string_equal(task->user, "1000:1000");
	assert_int_equal(task->kill_signal, SIGTERM);
	assert_int_equal(task->kill_timeout_ms, 10000);
	/* policy, delay and max_delay from the task; the rest from the group. */
	assert_restart(&task->restart, RESTART_ALWAYS, 3, 60000, 500, 30000, RESTART_MODE_FAIL);
	assert_int_equal(task->resources.memory, 256 << 20);
	assert_int_equal(task->resources.memory_high, 200 << 20);
	assert_true(task->resources.has_memory_swap);
	assert_int_equal(task->resources.memory_swap, 0);
	assert_int_equal(task->resources.cpu_millicores, 500);
	assert_int_equal(task->resources.cpu_weight, 100);
	assert_int_equal(task->resources.pids, 128);
	assert_string_equal(task->resources.cpuset, "0-1");
	assert_int_equal(task->resources.io_weight, 100);
	assert_true(task->resources.optional);
	assert_true(resources_config_has_limits(&task->resources));
	assert_int_equal(readiness_of(task)->kind, READINESS_PROBE);
	assert_probe(&readiness_of(task)->probe, (const char *const[]){"pg_isready", "-q"}, 2, 1000,
		     1000);
	assert_int_equal(readiness_of(task)->timeout_ms, 30000);
	assert_probe(&health_of(task)->probe, (const char *const[]){"/bin/check"}, 1, 10000, 2000);
	assert_int_equal(health_of(task)->failures, 3);
	/* Every isolation field is in test_config_isolation.c. */
	assert_true(task->isolation.enabled);
	assert_string_equal(task->isolation.hostname, "app");
	assert_int_equal(task->isolation.seccomp.kind, SECCOMP_PROFILE_CUSTOM);
	assert_string_equal(task->isolation.seccomp.deny[0], "mount");
	assert_int_equal(task->isolation.umask, 027);

	task = find_task(config, "web/announce");
	assert_int_equal(task->stage, STAGE_POSTSTART_EPHEMERAL);
	assert_false(task->isolation.enabled);
	assert_false(resources_config_has_limits(&task->resources));
	assert_null(task->resources.cpuset);
	assert_argv(task, (const char *const[]){"/bin/sh", "-c", "echo hi"}, 3);

	task = find_task(config, "web/cleanup");
	assert_int_equal(task->stage, STAGE_POSTSTOP);
	assert_argv(task, (const char *const[]){"/bin/rm", "-f", "/run/app.pid"}, 3);
	assert_restart(&task->restart, RESTART_ON_FAILURE, 3, 60000, 1000, 30000,
		       RESTART_MODE_FAIL);
	config_free(config);
}

static void test_stage_defaults(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  g:\n"
		     "    tasks:\n"
		     "      pre: {command: a, lifecycle: {hook: prestart}}\n"
		     "      pre-side: {command: a, lifecycle: {hook: prestart, "
		     "sidecar: true}}\n"
		     "      main: {command: a}\n"
		     "      post: {command: a, lifecycle: {hook: poststart, "
		     "sidecar: false}}\n"
		     "      post-side: {command: a, lifecycle: {hook: poststart, "
		     "sidecar: True}}\n"
		     "      stop: {command: a, lifecycle: {hook: poststop}}\n");
	const struct {
		const char *name;
		enum lifecycle_stage stage;
		enum restart_policy_kind policy;
		enum restart_mode mode;
	} expected[] = {
	    {"g/pre", STAGE_PRESTART_EPHEMERAL, RESTART_ON_FAILURE, RESTART_MODE_FAIL},
	    {"g/pre-side", STAGE_PRESTART_SIDECAR, RESTART_ALWAYS, RESTART_MODE_DELAY},
	    {"g/main", STAGE_MAIN, RESTART_ALWAYS, RESTART_MODE_FAIL},
	    {"g/post", STAGE_POSTSTART_EPHEMERAL, RESTART_ON_FAILURE, RESTART_MODE_FAIL},
	    {"g/post-side", STAGE_POSTSTART_SIDECAR, RESTART_ALWAYS, RESTART_MODE_DELAY},
	    {"g/stop", STAGE_POSTSTOP, RESTART_NEVER, RESTART_MODE_FAIL},
	};

	assert_int_equal(config->shutdown_timeout_ms, CONFIG_DEFAULT_SHUTDOWN_TIMEOUT_MS);
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++) {
		const struct task_config *task = find_task(config, expected[i].name);
		struct restart_policy builtin = restart_policy_default(expected[i].stage);

		print_message("%s\n", expected[i].name);
		assert_int_equal(task->stage, expected[i].stage);
		assert_restart(&task->restart, expected[i].policy, 3, 60000, 1000, 30000,
			       expected[i].mode);
		assert_restart(&builtin, expected[i].policy, 3, 60000, 1000, 30000,
			       expected[i].mode);
	}
	config_free(config);
}

static void test_stage_names(void **state)
{
	static const char *const names[STAGE_COUNT] = {
	    "prestart-ephemeral",  "prestart-sidecar",  "main",
	    "poststart-ephemeral", "poststart-sidecar", "poststop",
	};

	for (int stage = 0; stage < STAGE_COUNT; stage++) {
		assert_string_equal(lifecycle_stage_name((enum lifecycle_stage)stage),
				    names[stage]);
		assert_int_equal(lifecycle_stage_is_sidecar((enum lifecycle_stage)stage),
				 stage == STAGE_PRESTART_SIDECAR ||
				     stage == STAGE_POSTSTART_SIDECAR);
	}
}

static void test_group_default_merges_field_by_field(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  g:\n"
		     "    restart: {attempts: 5, mode: delay, interval: 10m}\n"
		     "    tasks:\n"
		     "      stop: {command: a, lifecycle: {hook: poststop}}\n"
		     "      main: {command: a, restart: {attempts: 1, policy: never}}\n"
		     "      other: {command: a, restart: {interval: 5s, mode: fail}}\n");

	/* The stage keeps its policy; the group sets the other fields. */
	assert_restart(&find_task(config, "g/stop")->restart, RESTART_NEVER, 5, 600000, 1000, 30000,
		       RESTART_MODE_DELAY);
	assert_restart(&find_task(config, "g/main")->restart, RESTART_NEVER, 1, 600000, 1000, 30000,
		       RESTART_MODE_DELAY);
	assert_restart(&find_task(config, "g/other")->restart, RESTART_ALWAYS, 5, 5000, 1000, 30000,
		       RESTART_MODE_FAIL);
	config_free(config);
}

/* log.shared_dir is off unless written, and a task's own log map keeps
 * the group's value for the keys it leaves out. */
static void test_log_shared_dir(void **state)
{
	struct config *config = parse_ok("groups:\n"
					 "  g:\n"
					 "    log: {dir: /var/log/corral, shared_dir: true}\n"
					 "    tasks:\n"
					 "      shared: {command: a, log: {keep: 2}}\n"
					 "      own: {command: a, log: {shared_dir: false}}\n"
					 "  h:\n"
					 "    log: {dir: /var/log/corral}\n"
					 "    tasks: {plain: {command: a}}\n");

	assert_true(find_task(config, "g/shared")->log_shared_dir);
	assert_false(find_task(config, "g/own")->log_shared_dir);
	assert_false(find_task(config, "h/plain")->log_shared_dir);
	config_free(config);
}

static void test_hooks_group_then_task_replacing_in_place(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  g:\n"
		     "    hooks:\n"
		     "      - {name: vol, stage: prestart, exec: [/g/vol]}\n"
		     "      - {name: vol, stage: stop, exec: [/g/vol, stop], timeout: 2s}\n"
		     "    tasks:\n"
		     "      plain: {command: a}\n"
		     "      own:\n"
		     "        command: a\n"
		     "        hooks:\n"
		     "          - {name: vol, stage: prestart, exec: [/t/vol]}\n"
		     "          - {name: lb, stage: prekill, exec: [lb, out]}\n");
	const struct task_config *plain = find_task(config, "g/plain");
	assert_int_equal(plain->hook_count, 2);
	assert_string_equal(plain->hooks[0].argv[0], "/g/vol");
	assert_int_equal(plain->hooks[0].timeout_ms, CONFIG_DEFAULT_HOOK_TIMEOUT_MS);
	assert_int_equal(plain->hooks[1].stage, HOOK_STAGE_STOP);
	assert_int_equal(plain->hooks[1].timeout_ms, 2000);
	const struct task_config *own = find_task(config, "g/own");
	assert_int_equal(own->hook_count, 3);
	/* The task's prestart "vol" took the group's place; "lb" came after. */
	assert_string_equal(own->hooks[0].argv[0], "/t/vol");
	assert_int_equal(own->hooks[0].stage, HOOK_STAGE_PRESTART);
	assert_string_equal(own->hooks[1].argv[1], "stop");
	assert_string_equal(own->hooks[2].name, "lb");
	assert_int_equal(own->hooks[2].stage, HOOK_STAGE_PREKILL);
	assert_int_equal(own->hooks[2].argc, 2);
	assert_null(own->hooks[2].argv[2]);
	config_free(config);
}

static void assert_no_resources(const struct resources_config *resources)
{
	assert_int_equal(resources->memory, 0);
	assert_int_equal(resources->memory_high, 0);
	assert_false(resources->has_memory_swap);
	assert_int_equal(resources->memory_swap, 0);
	assert_int_equal(resources->cpu_millicores, 0);
	assert_int_equal(resources->cpu_weight, 0);
	assert_int_equal(resources->pids, 0);
	assert_null(resources->cpuset);
	assert_int_equal(resources->io_weight, 0);
	assert_false(resources->optional);
	assert_false(resources_config_has_limits(resources));
}

static void test_resources_values(void **state)
{
	/* One task per row, values as YAML text: a cpuset with commas must be
	 * quoted in a flow map. memory_swap is the size field that takes 0. */
	static const struct {
		const char *cpu, *cpuset, *swap;
		uint32_t millicores;
		uint64_t swap_bytes;
	} rows[] = {
	    {"0.5", "0", "512K", 500, 512 << 10},
	    {"2", "\"0-1,3,5-7\"", "1g", 2000, 1 << 30},
	    {"1.25", "7-7", "1048576", 1250, 1 << 20},
	    {"0.01", "\"3\"", "2T", 10, 2ULL << 40},
	    {"0.29", "'0,2'", "1", 290, 1},
	    {"1024", "\"0-1023\"", "4095M", 1024000, 4095ULL << 20},
	    {"\"0.125\"", "10-11", "18446744073709551615", 125, UINT64_MAX},
	    {"001.500", "'0-0,1'", "0K", 1500, 0},
	    {"1.50000", "1", "0", 1500, 0},
	};
	char yaml[4096];
	size_t used = (size_t)snprintf(yaml, sizeof(yaml), "groups:\n  g:\n    tasks:\n");
	struct config *config;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		used +=
		    (size_t)snprintf(yaml + used, sizeof(yaml) - used,
				     "      t%zu: {command: a, resources: {cpu: %s, cpuset: %s, "
				     "memory_swap: %s}}\n",
				     i, rows[i].cpu, rows[i].cpuset, rows[i].swap);
	assert_true(used < sizeof(yaml));
	config = parse_ok(yaml);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct resources_config *resources = &config->groups[0].tasks[i].resources;
		const char *cpuset = rows[i].cpuset;
		size_t length = strlen(cpuset);

		print_message("cpu %s, cpuset %s, memory_swap %s\n", rows[i].cpu, cpuset,
			      rows[i].swap);
		if (cpuset[0] == '"' || cpuset[0] == '\'') {
			cpuset++;
			length -= 2;
		}
		assert_int_equal(resources->cpu_millicores, rows[i].millicores);
		assert_int_equal(strlen(resources->cpuset), length);
		assert_memory_equal(resources->cpuset, cpuset, length);
		assert_true(resources->has_memory_swap);
		assert_int_equal(resources->memory_swap, rows[i].swap_bytes);
	}
	config_free(config);
}

static void test_resources_bounds(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  g:\n"
		     "    tasks:\n"
		     "      low: {command: a, resources: {cpu_weight: 1, io_weight: 1, pids: 1, "
		     "memory: 1, memory_high: 1}}\n"
		     "      high: {command: a, resources: {cpu_weight: 10000, io_weight: 10000, "
		     "pids: 4194304, memory: 1G, memory_high: 1G}}\n"
		     "      only-optional: {command: a, resources: {optional: true}}\n"
		     "      empty: {command: a, resources: {}}\n"
		     "      none: {command: a}\n");
	const struct resources_config *low = &find_task(config, "g/low")->resources;
	const struct resources_config *high = &find_task(config, "g/high")->resources;
	const struct resources_config *only_optional =
	    &find_task(config, "g/only-optional")->resources;

	assert_int_equal(low->cpu_weight, 1);
	assert_int_equal(low->io_weight, 1);
	assert_int_equal(low->pids, 1);
	assert_int_equal(low->memory, 1);
	assert_int_equal(low->memory_high, 1);
	/* memory_high may equal memory. */
	assert_int_equal(high->cpu_weight, 10000);
	assert_int_equal(high->io_weight, 10000);
	assert_int_equal(high->pids, 4194304);
	assert_int_equal(high->memory_high, high->memory);
	assert_false(high->has_memory_swap);
	/* optional is not a limit: a task with only that needs no cgroup. */
	assert_true(only_optional->optional);
	assert_false(resources_config_has_limits(only_optional));
	assert_no_resources(&find_task(config, "g/empty")->resources);
	assert_no_resources(&find_task(config, "g/none")->resources);
	config_free(config);
}

static void test_resources_group_defaults_merge_field_by_field(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  g:\n"
		     "    resources: {memory: 1G, memory_high: 900M, cpu: 1, cpuset: \"0-3\", "
		     "optional: true, memory_swap: 0}\n"
		     "    tasks:\n"
		     "      inherits: {command: a}\n"
		     "      own: {command: a, resources: {memory: 512M, memory_high: 400M, pids: "
		     "64, optional: false, cpuset: \"1\", memory_swap: 1G}}\n"
		     "      higher: {command: a, resources: {memory: 2G}}\n"
		     "  other:\n"
		     "    tasks:\n"
		     "      alone: {command: a}\n");
	const struct resources_config *inherits = &find_task(config, "g/inherits")->resources;
	const struct resources_config *own = &find_task(config, "g/own")->resources;
	const struct resources_config *higher = &find_task(config, "g/higher")->resources;

	assert_int_equal(inherits->memory, 1 << 30);
	assert_int_equal(inherits->memory_high, 900 << 20);
	assert_int_equal(inherits->cpu_millicores, 1000);
	assert_string_equal(inherits->cpuset, "0-3");
	assert_true(inherits->optional);
	assert_true(inherits->has_memory_swap);
	assert_int_equal(inherits->memory_swap, 0);
	assert_int_equal(inherits->pids, 0);

	/* The task's fields win; the group's cpu still applies. */
	assert_int_equal(own->memory, 512 << 20);
	assert_int_equal(own->memory_high, 400 << 20);
	assert_int_equal(own->cpu_millicores, 1000);
	assert_string_equal(own->cpuset, "1");
	assert_false(own->optional);
	assert_true(own->has_memory_swap);
	assert_int_equal(own->memory_swap, 1 << 30);
	assert_int_equal(own->pids, 64);

	/* The group's memory_high stays under the task's larger memory. */
	assert_int_equal(higher->memory, 2ULL << 30);
	assert_int_equal(higher->memory_high, 900 << 20);
	assert_string_equal(higher->cpuset, "0-3");
	/* Each task owns its copy: config_free frees each once. */
	assert_ptr_not_equal(higher->cpuset, inherits->cpuset);

	/* Another group's defaults do not leak. */
	assert_no_resources(&find_task(config, "other/alone")->resources);
	config_free(config);
}

static void test_readiness_values(void **state)
{
	struct config *config = parse_ok(
	    "groups:\n"
	    "  g:\n"
	    "    tasks:\n"
	    "      systemd: {command: a, readiness: {notify: systemd}}\n"
	    "      systemd-timeout: {command: a, readiness: {notify: systemd, timeout: 1m}}\n"
	    "      fd: {command: a, lifecycle: {hook: prestart, sidecar: true}, "
	    "readiness: {notify: fd, fd: 3}}\n"
	    "      fd-max: {command: a, readiness: {notify: fd, fd: 1023, timeout: 0}}\n"
	    "      exec: {command: a, lifecycle: {hook: poststart, sidecar: true}, "
	    "readiness: {exec: [pg_isready, -q], interval: 250ms, timeout: 30s}}\n"
	    "      exec-defaults: {command: a, readiness: {exec: [check]}}\n"
	    "      none: {command: a}\n");
	const struct task_config *task;

	task = find_task(config, "g/systemd");
	assert_int_equal(readiness_of(task)->kind, READINESS_NOTIFY_SYSTEMD);
	assert_int_equal(readiness_of(task)->fd, 0);
	assert_int_equal(readiness_of(task)->timeout_ms, 0); /* no limit */
	assert_no_probe(&readiness_of(task)->probe);

	task = find_task(config, "g/systemd-timeout");
	assert_int_equal(readiness_of(task)->kind, READINESS_NOTIFY_SYSTEMD);
	assert_int_equal(readiness_of(task)->timeout_ms, 60000);

	task = find_task(config, "g/fd");
	assert_int_equal(readiness_of(task)->kind, READINESS_NOTIFY_FD);
	assert_int_equal(readiness_of(task)->fd, 3);
	assert_int_equal(readiness_of(task)->timeout_ms, 0);
	assert_no_probe(&readiness_of(task)->probe);

	task = find_task(config, "g/fd-max");
	assert_int_equal(readiness_of(task)->fd, 1023);
	assert_int_equal(readiness_of(task)->timeout_ms, 0);

	/* Each run of the probe is cut at the interval. */
	task = find_task(config, "g/exec");
	assert_int_equal(readiness_of(task)->kind, READINESS_PROBE);
	assert_probe(&readiness_of(task)->probe, (const char *const[]){"pg_isready", "-q"}, 2, 250,
		     250);
	assert_int_equal(readiness_of(task)->timeout_ms, 30000);

	task = find_task(config, "g/exec-defaults");
	assert_probe(&readiness_of(task)->probe, (const char *const[]){"check"}, 1, 1000, 1000);
	assert_int_equal(readiness_of(task)->timeout_ms, 0);

	/* Started means ready. */
	task = find_task(config, "g/none");
	assert_int_equal(readiness_of(task)->kind, READINESS_NONE);
	assert_int_equal(readiness_of(task)->fd, 0);
	assert_int_equal(readiness_of(task)->timeout_ms, 0);
	assert_no_probe(&readiness_of(task)->probe);
	config_free(config);
}

static void test_health_values(void **state)
{
	struct config *config = parse_ok(
	    "groups:\n"
	    "  g:\n"
	    "    tasks:\n"
	    "      full: {command: a, health: {exec: [/bin/check, --quick], interval: 30s, "
	    "timeout: 2s, failures: 5}}\n"
	    "      defaults: {command: a, health: {exec: [check]}}\n"
	    "      short: {command: a, health: {exec: [check], interval: 2s}}\n"
	    "      equal: {command: a, health: {exec: [check], interval: 3s, timeout: 3s, "
	    "failures: 1}}\n"
	    "      sidecar: {command: a, lifecycle: {hook: prestart, sidecar: true}, "
	    "health: {exec: [check], failures: \"4294967295\"}}\n"
	    "      none: {command: a}\n");
	const struct task_config *task;

	task = find_task(config, "g/full");
	assert_probe(&health_of(task)->probe, (const char *const[]){"/bin/check", "--quick"}, 2,
		     30000, 2000);
	assert_int_equal(health_of(task)->failures, 5);
	/* health says nothing about readiness. */
	assert_int_equal(readiness_of(task)->kind, READINESS_NONE);

	task = find_task(config, "g/defaults");
	assert_probe(&health_of(task)->probe, (const char *const[]){"check"}, 1, 10000, 5000);
	assert_int_equal(health_of(task)->failures, 3);

	/* The default timeout never exceeds a short interval. */
	task = find_task(config, "g/short");
	assert_probe(&health_of(task)->probe, (const char *const[]){"check"}, 1, 2000, 2000);

	task = find_task(config, "g/equal");
	assert_probe(&health_of(task)->probe, (const char *const[]){"check"}, 1, 3000, 3000);
	assert_int_equal(health_of(task)->failures, 1);

	task = find_task(config, "g/sidecar");
	assert_int_equal(task->stage, STAGE_PRESTART_SIDECAR);
	assert_int_equal(health_of(task)->failures, 4294967295U);

	task = find_task(config, "g/none");
	assert_no_probe(&health_of(task)->probe);
	assert_int_equal(health_of(task)->failures, 0);
	config_free(config);
}

static void test_max_delay_follows_long_delay(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  g:\n"
		     "    restart: {delay: 2m}\n"
		     "    tasks:\n"
		     "      inherits: {command: a}\n"
		     "      own: {command: a, restart: {delay: 45s}}\n"
		     "      short: {command: a, restart: {delay: 0}}\n"
		     "      capped: {command: a, restart: {delay: 1m, max_delay: 1h}}\n");

	/* Unset max_delay never undercuts the delay asked for. */
	assert_int_equal(find_task(config, "g/inherits")->restart.delay_ms, 120000);
	assert_int_equal(find_task(config, "g/inherits")->restart.max_delay_ms, 120000);
	assert_int_equal(find_task(config, "g/own")->restart.delay_ms, 45000);
	assert_int_equal(find_task(config, "g/own")->restart.max_delay_ms, 45000);
	assert_int_equal(find_task(config, "g/short")->restart.delay_ms, 0);
	assert_int_equal(find_task(config, "g/short")->restart.max_delay_ms, 30000);
	assert_int_equal(find_task(config, "g/capped")->restart.max_delay_ms, 3600000);
	config_free(config);
}

static void test_scalars_as_strings(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  g1.a_b-c:\n"
		     "    tasks:\n"
		     "      0task:\n"
		     "        command: [prog, 8080, true, '', 'null', \"~\"]\n"
		     "        env: {PORT: 8080, DEBUG: true, EMPTY: '', _x1: \"a=b\", Q: 'null'}\n"
		     "        user: 1000\n"
		     "        kill: {signal: hup, timeout: 0, mode: control-group}\n"
		     "      t2: {command: x, user: www-data, kill: {signal: RTMIN+2}}\n");
	const struct task_config *task = find_task(config, "g1.a_b-c/0task");

	/* Quoted null is text; numbers and booleans are their spelling. */
	assert_argv(task, (const char *const[]){"prog", "8080", "true", "", "null", "~"}, 6);
	assert_env(task,
		   (const char *const[]){"PORT=8080", "DEBUG=true", "EMPTY=", "_x1=a=b", "Q=null"},
		   5);
	assert_string_equal(task->user, "1000");
	assert_int_equal(task->kill_signal, SIGHUP);
	assert_int_equal(task->kill_timeout_ms, 0);
	assert_int_equal(task->kill_mode, KILL_MODE_CONTROL_GROUP);
	task = find_task(config, "g1.a_b-c/t2");
	assert_string_equal(task->user, "www-data");
	assert_int_equal(task->kill_signal, SIGRTMIN + 2);
	config_free(config);
}

static void test_aliases(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  a:\n"
		     "    restart: &policy {policy: never, attempts: 7}\n"
		     "    tasks:\n"
		     "      one: {command: &cmd [/bin/true, --x], env: &env {A: b}}\n"
		     "  b:\n"
		     "    restart: *policy\n"
		     "    tasks:\n"
		     "      two: {command: *cmd, env: *env}\n");
	const struct task_config *two = find_task(config, "b/two");

	assert_argv(two, (const char *const[]){"/bin/true", "--x"}, 2);
	assert_env(two, (const char *const[]){"A=b"}, 1);
	assert_restart(&two->restart, RESTART_NEVER, 7, 60000, 1000, 30000, RESTART_MODE_FAIL);
	config_free(config);
}

static void test_json_inline(void **state)
{
	struct config *config = parse_ok(
	    "{\"shutdown_timeout\": \"1m30s\", \"groups\": {\"g\": {\"tasks\": {\"t\": "
	    "{\"command\": [\"/bin/echo\", \"hi\"], \"lifecycle\": {\"hook\": \"poststart\", "
	    "\"sidecar\": true}, \"kill\": {\"signal\": \"SIGKILL\"}}}}}}");
	const struct task_config *task = find_task(config, "g/t");

	assert_int_equal(config->shutdown_timeout_ms, 90000);
	assert_argv(task, (const char *const[]){"/bin/echo", "hi"}, 2);
	assert_int_equal(task->stage, STAGE_POSTSTART_SIDECAR);
	assert_int_equal(task->kill_signal, SIGKILL);
	config_free(config);
}

static void test_document_markers_and_comments(void **state)
{
	struct config *config = parse_ok("%YAML 1.1\n---\n# comment\ngroups: {g: {tasks: {t: "
					 "{command: x}}}} # trailing\n...\n");

	assert_int_equal(config->group_count, 1);
	config_free(config);
}

static void test_load_file_full(void **state)
{
	struct config_diagnostics diagnostics;
	struct config *config = config_load_file("configs/full.yaml", &diagnostics);
	const struct task_config *task;

	config_diagnostics_print(&diagnostics, "configs/full.yaml", stderr);
	assert_int_equal(diagnostics.count, 0);
	assert_non_null(config);
	assert_string_equal(config->path, "configs/full.yaml");
	assert_int_equal(config->shutdown_timeout_ms, 45000);
	assert_int_equal(config->group_count, 2);
	assert_string_equal(config->groups[0].name, "web");
	assert_string_equal(config->groups[1].name, "jobs");
	assert_int_equal(config->groups[0].task_count, 5);

	task = find_task(config, "web/app");
	assert_env(task, (const char *const[]){"PORT=8080", "MODE=production"}, 2);
	assert_int_equal(task->kill_signal, SIGINT);
	assert_int_equal(task->kill_timeout_ms, 5000);
	assert_int_equal(task->location.line, 9);
	task = find_task(config, "jobs/worker");
	assert_argv(task, (const char *const[]){"/bin/sh", "-c", "/usr/bin/worker --queue default"},
		    3);
	/* No group default: the stage default. */
	assert_restart(&task->restart, RESTART_ALWAYS, 3, 60000, 1000, 30000, RESTART_MODE_FAIL);
	/* The group's resources, with the task's own memory. */
	assert_int_equal(task->resources.memory, 512 << 20);
	assert_int_equal(task->resources.cpu_millicores, 1500);
	assert_int_equal(task->resources.pids, 256);
	assert_string_equal(task->resources.cpuset, "2-3");
	config_free(config);
}

static void test_load_file_json_with_tabs(void **state)
{
	struct config_diagnostics diagnostics;
	struct config *config = config_load_file("configs/tabs.json", &diagnostics);
	const struct task_config *task;

	config_diagnostics_print(&diagnostics, "configs/tabs.json", stderr);
	assert_int_equal(diagnostics.count, 0);
	assert_non_null(config);
	assert_int_equal(config->shutdown_timeout_ms, 10000);
	task = find_task(config, "api/server");
	assert_argv(task, (const char *const[]){"/srv/api", "--listen", ":80"}, 3);
	assert_env(task, (const char *const[]){"LOG=debug"}, 1);
	assert_int_equal(task->restart.attempts, 0);
	config_free(config);
}

static void test_load_file_errors(void **state)
{
	static const struct {
		unsigned line, column;
		const char *message;
	} expected[] = {
	    {5, 9, "web/app: unknown key \"comand\"; did you mean \"command\"?"},
	    {6, 26,
	     "web/app: restart.delay: invalid duration \"5x\": unknown unit (use ms, s, m or h)"},
	    {7, 24, "web/app: kill.signal: unknown signal \"SIGFOO\""},
	    {8, 7, "group web: duplicate task \"app\" (first defined at line 4)"},
	};
	struct config_diagnostics diagnostics;
	struct config *config = config_load_file("configs/several_errors.yaml", &diagnostics);

	assert_null(config);
	assert_int_equal(diagnostics.count, ARRAY_SIZE(expected));
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++) {
		assert_int_equal(diagnostics.items[i].location.line, expected[i].line);
		assert_int_equal(diagnostics.items[i].location.column, expected[i].column);
		assert_string_equal(diagnostics.items[i].message, expected[i].message);
	}
	config_diagnostics_free(&diagnostics);
	assert_int_equal(diagnostics.count, 0);
	assert_null(diagnostics.items);
}

static void test_load_missing_file(void **state)
{
	struct config_diagnostics diagnostics;
	struct config *config = config_load_file("configs/does-not-exist.yaml", &diagnostics);

	assert_null(config);
	assert_int_equal(diagnostics.count, 1);
	assert_int_equal(diagnostics.items[0].location.line, 0);
	assert_int_equal(diagnostics.items[0].location.column, 0);
	assert_string_equal(diagnostics.items[0].message, "cannot read: No such file or directory");
	config_diagnostics_free(&diagnostics);
}

static void test_load_directory(void **state)
{
	struct config_diagnostics diagnostics;
	struct config *config = config_load_file("configs", &diagnostics);

	assert_null(config);
	assert_int_equal(diagnostics.count, 1);
	assert_string_equal(diagnostics.items[0].message,
			    "cannot read: is a directory, not a regular file");
	config_diagnostics_free(&diagnostics);
}

static void test_print(void **state)
{
	struct config_diagnostic items[] = {
	    {{0, 0, 0}, "cannot read: No such file or directory"},
	    {{3, 7, 0}, "group web: duplicate task \"app\" (first defined at line 2)"},
	};
	struct config_diagnostics diagnostics = {.items = items, .count = ARRAY_SIZE(items)};
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_non_null(out);
	config_diagnostics_print(&diagnostics, "corral.yaml", out);
	fclose(out);
	assert_string_equal(text, "corral.yaml: cannot read: No such file or directory\n"
				  "corral.yaml:3:7: group web: duplicate task \"app\" (first "
				  "defined at line 2)\n");
	free(text);
}

/* Parses exactly `size` bytes from a buffer of that size, so that
 * AddressSanitizer catches a read past the end. Either a config or
 * diagnostics, never both, never neither. */
static void parse_exact(const char *data, size_t size)
{
	struct config_diagnostics diagnostics;
	char *copy = malloc(size ? size : 1);
	struct config *config;

	assert_non_null(copy);
	memcpy(copy, data, size);
	config = config_parse_buffer("fuzz.yaml", copy, size, &diagnostics);
	assert_true((config != NULL) != (diagnostics.count > 0));
	for (size_t i = 0; i < diagnostics.count; i++)
		assert_non_null(diagnostics.items[i].message);
	config_free(config);
	config_diagnostics_free(&diagnostics);
	free(copy);
}

static void test_every_prefix_of_the_example(void **state)
{
	/* A cheap fuzz run: every truncation of a real file. */
	for (size_t size = 0; size <= strlen(full_example); size++)
		parse_exact(full_example, size);
}

static void test_hostile_inputs(void **state)
{
	static const char *const inputs[] = {
	    "&a [*a]",
	    "groups: &g {web: {tasks: *g}}",
	    "groups: &g {web: *g}",
	    "groups: {g: {tasks: {t: &t {command: x, env: *t}}}}",
	    "*undefined",
	    "groups: {? [a, b] : c, ? {x: y} : z}",
	    "\xef\xbb\xbfgroups: {g: {tasks: {t: {command: x}}}}",
	    "groups: {g: {tasks: {t: {command: \"a\\0b\", env: {\"A\\0\": x}}}}}",
	    "groups: {\"\\x01\\n\\\"\": {tasks: {\"\\t\": {command: x}}}}",
	    "!!map {groups: !!str x}",
	    "\t",
	    "---\n---\n---\n",
	    "groups: !<tag:yaml.org,2002:null>",
	};
	static const char with_nul[] = "groups: {g: {tasks: {t: {command: x}}}}\0# tail";
	static char deep[20001];
	static char long_key[5000];

	for (size_t i = 0; i < ARRAY_SIZE(inputs); i++)
		parse_exact(inputs[i], strlen(inputs[i]));
	parse_exact(with_nul, sizeof(with_nul) - 1);

	memset(deep, '[', sizeof(deep) - 1);
	parse_exact(deep, strlen(deep));
	memset(long_key, 'k', sizeof(long_key) - 1);
	memcpy(long_key, "groups: {", 9);
	long_key[sizeof(long_key) - 3] = ':';
	long_key[sizeof(long_key) - 2] = '}';
	parse_exact(long_key, strlen(long_key));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_full_example),
	    cmocka_unit_test(test_stage_defaults),
	    cmocka_unit_test(test_stage_names),
	    cmocka_unit_test(test_group_default_merges_field_by_field),
	    cmocka_unit_test(test_log_shared_dir),
	    cmocka_unit_test(test_hooks_group_then_task_replacing_in_place),
	    cmocka_unit_test(test_resources_values),
	    cmocka_unit_test(test_resources_bounds),
	    cmocka_unit_test(test_resources_group_defaults_merge_field_by_field),
	    cmocka_unit_test(test_readiness_values),
	    cmocka_unit_test(test_health_values),
	    cmocka_unit_test(test_max_delay_follows_long_delay),
	    cmocka_unit_test(test_scalars_as_strings),
	    cmocka_unit_test(test_aliases),
	    cmocka_unit_test(test_json_inline),
	    cmocka_unit_test(test_document_markers_and_comments),
	    cmocka_unit_test(test_load_file_full),
	    cmocka_unit_test(test_load_file_json_with_tabs),
	    cmocka_unit_test(test_load_file_errors),
	    cmocka_unit_test(test_load_missing_file),
	    cmocka_unit_test(test_load_directory),
	    cmocka_unit_test(test_print),
	    cmocka_unit_test(test_every_prefix_of_the_example),
	    cmocka_unit_test(test_hostile_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
