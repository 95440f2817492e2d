/* Every class of config error: where it is reported (line:column of the
 * offending node) and the exact message. One table row per mistake, and
 * one message for it: a mistake must not be reported twice. An input with
 * several mistakes is a row of several_cases, with all its messages in
 * order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/load/config_load.h"
#include "config_cases.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A task "app" in group "web": its value starts at line 4, column 12, so a
 * node at offset N of the flow map is at column 12 + N. */
#define TASK(flow)   "groups:\n  web:\n    tasks:\n      app: " flow "\n"
#define VALID_GROUPS "groups: {g: {tasks: {t: {command: x}}}}\n"
#define NAME_RULE                                                                                  \
	"may only use lowercase letters, digits, '-', '_' and '.', starting with a letter or "     \
	"digit"

static const struct error_case cases[] = {
    /* Keys */
    {"unknown task key, with a suggestion", TASK("{comand: [a]}"), 4, 13,
     "web/app: unknown key \"comand\"; did you mean \"command\"?"},
    {"unknown task key, nothing close", TASK("{command: a, foo: 1}"), 4, 25,
     "web/app: unknown key \"foo\" (expected command, env, env_file, cwd, user, groups, lifecycle, "
     "restart, kill, resources, readiness, health, isolation, cdi, task_dirs, hooks, after, "
     "log, wait_for, autostart, instances, schedule, oom_score_adj, control, watch, profiles or "
     "update)"},
    /* update: (offsets: "{command: a, " is 13 characters) */
    {"update without instances", TASK("{command: a, update: {strategy: rolling}}"), 4, 33,
     "web/app: update: only for a task with instances: it says how a reload replaces them; "
     "give the task instances: N (instances: 1 keeps one, named TASK@0)"},
    {"update strategy unknown", TASK("{command: a, instances: 2, update: {strategy: rollin}}"), 4,
     58,
     "web/app: update.strategy: unknown update strategy \"rollin\"; did you mean "
     "\"rolling\"?"},
    {"max_unavailable zero", TASK("{command: a, instances: 2, update: {max_unavailable: 0}}"), 4,
     65,
     "web/app: update.max_unavailable: must be a whole number from 1 to 1000 (instances "
     "replaced at once), not \"0\""},
    {"max_unavailable with recreate",
     TASK("{command: a, instances: 2, update: {strategy: recreate, max_unavailable: 2}}"), 4, 85,
     "web/app: update.max_unavailable: goes with strategy: rolling (recreate replaces every "
     "instance at once)"},
    {"update key unknown", TASK("{command: a, instances: 2, update: {surge: 1}}"), 4, 48,
     "web/app: update: unknown key \"surge\" (expected strategy, max_unavailable or "
     "min_ready)"},
    {"min_ready not a count", TASK("{command: a, instances: 2, update: {min_ready: -1}}"), 4, 59,
     "web/app: update.min_ready: must be a whole number from 0 to 1000 (instances ready during "
     "a rolling restart), not \"-1\""},
    {"oom_score_adj out of range", TASK("{command: a, oom_score_adj: 1001}"), 4, 40,
     "web/app: oom_score_adj: must be a whole number from -1000 to 1000, not \"1001\""},
    {"oom_score_adj not a number", TASK("{command: a, oom_score_adj: high}"), 4, 40,
     "web/app: oom_score_adj: must be a whole number from -1000 to 1000, not \"high\""},
    {"misspelt key in capitals", TASK("{Command: a}"), 4, 13,
     "web/app: unknown key \"Command\"; did you mean \"command\"?"},
    {"unknown restart key", TASK("{command: a, restart: {dealy: 1s}}"), 4, 35,
     "web/app: restart: unknown key \"dealy\"; did you mean \"delay\"?"},
    {"unknown group key", "groups:\n  web:\n    taks: {a: {command: x}}\n", 3, 5,
     "group web: unknown key \"taks\"; did you mean \"tasks\"?"},
    {"misspelt groups", "group: {web: {tasks: {a: {command: x}}}}\n", 1, 1,
     "unknown key \"group\"; did you mean \"groups\"?"},
    {"relative socket path", "socket: run/corral.sock\n" VALID_GROUPS, 1, 9,
     "socket: must be an absolute path, not \"run/corral.sock\""},
    {"socket path too long for sun_path",
     "socket: "
     "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaa\n" VALID_GROUPS,
     1, 9, "socket: is longer than the 107 bytes a socket path can have"},
    {"unknown control key", VALID_GROUPS "control: {grop: adm}\n", 2, 11,
     "control: unknown key \"grop\"; did you mean \"group\"?"},
    {"control is not a map", VALID_GROUPS "control: adm\n", 2, 10,
     "control: must be a map such as {group: NAME}, not a string"},
    {"empty control group", VALID_GROUPS "control: {group: \"\"}\n", 2, 18,
     "control.group: must not be empty"},
    {"notify.ready naming an unknown group", VALID_GROUPS "notify: {ready: [g, h]}\n", 2, 21,
     "notify.ready[1]: unknown group \"h\""},
    {"notify.ready listing a group twice", VALID_GROUPS "notify: {ready: [g, g]}\n", 2, 21,
     "notify.ready[1]: group \"g\" is listed twice"},
    {"notify.ready an empty list", VALID_GROUPS "notify: {ready: []}\n", 2, 17,
     "notify.ready: must name at least one group (or be \"all\" or \"started\")"},
    {"notify.ready a group's name alone", VALID_GROUPS "notify: {ready: g}\n", 2, 17,
     "notify.ready: \"g\" is a group: list the groups, as [g]"},
    {"notify.ready misspelt", VALID_GROUPS "notify: {ready: startd}\n", 2, 17,
     "notify.ready: unknown value \"startd\"; did you mean \"started\"?"},
    {"notify is not a map", VALID_GROUPS "notify: all\n", 2, 9,
     "notify: must be a map such as {ready: all}, not a string"},
    {"key that is a list", "groups: {g: {tasks: {[a]: {command: x}}}}\n", 1, 22,
     "group g: keys must be strings, not a list"},

    /* Hooks */
    {"hooks not a list", TASK("{command: a, hooks: {name: x}}"), 4, 32,
     "web/app: hooks: must be a list of hooks, not a map"},
    {"hook without exec", TASK("{command: a, hooks: [{name: v, stage: prestart}]}"), 4, 33,
     "web/app: hooks[0]: missing \"exec\""},
    {"hook with an unknown stage",
     TASK("{command: a, hooks: [{name: v, stage: prestrat, exec: [x]}]}"), 4, 50,
     "web/app: hooks[0].stage: unknown stage \"prestrat\"; did you mean \"prestart\"?"},
    {"hook with a bad name", TASK("{command: a, hooks: [{name: V!, stage: stop, exec: [x]}]}"), 4,
     40, "web/app: hooks[0].name: the name \"V!\" " NAME_RULE},
    {"hook with a zero timeout",
     TASK("{command: a, hooks: [{name: v, stage: stop, exec: [x], timeout: 0s}]}"), 4, 76,
     "web/app: hooks[0].timeout: must be longer than 0s"},
    {"hook exec empty", TASK("{command: a, hooks: [{name: v, stage: stop, exec: []}]}"), 4, 62,
     "web/app: hooks[0].exec: must not be empty"},
    {"duplicate hook for a stage",
     TASK("{command: a, hooks: [{name: v, stage: stop, exec: [x]}, {name: v, stage: stop, exec: "
	  "[y]}]}"),
     4, 68, "web/app: hooks[1]: duplicate hook \"v\" for stage stop (first defined at line 4)"},
    {"unknown hook key",
     TASK("{command: a, hooks: [{name: v, stage: stop, exec: [x], tmeout: 1s}]}"), 4, 67,
     "web/app: hooks[0]: unknown key \"tmeout\"; did you mean \"timeout\"?"},

    /* Duplicates */
    {"duplicate task",
     "groups:\n  web:\n    tasks:\n      app: {command: a}\n"
     "      app: {command: b}\n",
     5, 7, "group web: duplicate task \"app\" (first defined at line 4)"},
    {"duplicate group",
     "groups:\n  web: {tasks: {a: {command: x}}}\n"
     "  web: {tasks: {b: {command: x}}}\n",
     3, 3, "groups: duplicate group \"web\" (first defined at line 2)"},
    {"duplicate task key",
     "groups:\n  web:\n    tasks:\n      app:\n        command: a\n        cwd: /\n"
     "        command: b\n",
     7, 9, "web/app: duplicate key \"command\" (first defined at line 5)"},
    {"duplicate variable", TASK("{command: a, env: {A: 1, A: 2}}"), 4, 37,
     "web/app: env: duplicate variable \"A\" (first defined at line 4)"},
    {"duplicate restart key", TASK("{command: a, restart: {delay: 1s, delay: 2s}}"), 4, 46,
     "web/app: restart: duplicate key \"delay\" (first defined at line 4)"},

    /* Types */
    {"command as a map", TASK("{command: {a: b}}"), 4, 22,
     "web/app: command: must be a list of strings or a string, not a map"},
    {"env as a list", TASK("{command: a, env: [A=1]}"), 4, 30,
     "web/app: env: must be a map of variable names to values, not a list"},
    {"groups as a list", "groups: [a]\n", 1, 9,
     "groups: must be a map of group names to groups, not a list"},
    {"tasks as a string", "groups:\n  web:\n    tasks: app\n", 3, 12,
     "group web: tasks: must be a map of task names to tasks, not a string"},
    {"task as a string", TASK("/bin/true"), 4, 12,
     "web/app: must be a map with \"command\", not a string"},
    {"group as null", "groups:\n  web:\n", 2, 7,
     "group web: must be a map with \"tasks\", not null"},
    {"kill as a string", TASK("{command: a, kill: TERM}"), 4, 31,
     "web/app: kill: must be a map of \"signal\" and \"timeout\", not a string"},
    {"restart as a string", TASK("{command: a, restart: always}"), 4, 34,
     "web/app: restart: must be a map of restart fields, not a string"},
    {"lifecycle as a list", TASK("{command: a, lifecycle: [prestart]}"), 4, 36,
     "web/app: lifecycle: must be a map with \"hook\", not a list"},
    {"sidecar not a boolean", TASK("{command: a, lifecycle: {hook: prestart, sidecar: yes}}"), 4,
     62, "web/app: lifecycle.sidecar: must be true or false, not \"yes\""},
    {"env value null", TASK("{command: a, env: {X: ~}}"), 4, 34,
     "web/app: env.X: must be a string, not null"},
    {"env value a map", TASK("{command: a, env: {X: {a: b}}}"), 4, 34,
     "web/app: env.X: must be a string, not a map"},
    {"cwd null", TASK("{command: a, cwd: }"), 4, 30, "web/app: cwd: must be a string, not null"},

    /* Commands */
    {"empty command list", TASK("{command: []}"), 4, 22, "web/app: command: must not be empty"},
    {"empty command string", TASK("{command: \"\"}"), 4, 22, "web/app: command: must not be empty"},
    {"blank command string", TASK("{command: '  '}"), 4, 22, "web/app: command: must not be empty"},
    {"null command", TASK("{command: ~}"), 4, 22, "web/app: command: must not be empty"},
    {"missing command", TASK("{cwd: /}"), 4, 12, "web/app: missing \"command\""},
    {"command word a list", TASK("{command: [a, [b]]}"), 4, 26,
     "web/app: command[1]: must be a string, not a list"},
    {"command word null", TASK("{command: [a, b, ~]}"), 4, 29,
     "web/app: command[2]: must be a string, not null"},
    {"empty program", TASK("{command: [\"\", x]}"), 4, 23,
     "web/app: command[0]: the program must not be empty"},
    {"NUL in a word", TASK("{command: [\"a\\0b\"]}"), 4, 23,
     "web/app: command[0]: must not contain a NUL character"},

    /* Names */
    {"task name in capitals", "groups:\n  web:\n    tasks:\n      App: {command: a}\n", 4, 7,
     "group web: invalid task name \"App\": " NAME_RULE},
    {"group name starting with a dash", "groups:\n  -web: {tasks: {a: {command: x}}}\n", 2, 3,
     "groups: invalid group name \"-web\": " NAME_RULE},
    {"group name with control characters", "groups: {\"a\\tb\\\"\": {tasks: {t: {command: x}}}}\n",
     1, 10, "groups: invalid group name \"a\\tb\\\"\": " NAME_RULE},
    {"empty task name", "groups: {g: {tasks: {'': {command: x}}}}\n", 1, 22,
     "group g: invalid task name \"\": is empty"},
    {"task name too long",
     "groups: {g: {tasks: "
     "{aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa: {command: x}}}}\n",
     1, 22,
     "group g: invalid task name "
     "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": is longer than 64 "
     "characters"},
    {"variable name", TASK("{command: a, env: {1X: a}}"), 4, 31,
     "web/app: env: invalid variable name \"1X\": use letters, digits and '_', not starting "
     "with a digit"},

    /* Values */
    {"bad duration", TASK("{command: a, restart: {delay: 5x}}"), 4, 42,
     "web/app: restart.delay: invalid duration \"5x\": unknown unit (use ms, s, m or h)"},
    {"bare number as a duration", TASK("{command: a, kill: {timeout: 30}}"), 4, 41,
     "web/app: kill.timeout: invalid duration \"30\": a number needs a unit (ms, s, m or h); "
     "only 0 goes without"},
    {"negative shutdown timeout", "shutdown_timeout: -1s\n" VALID_GROUPS, 1, 19,
     "shutdown_timeout: invalid duration \"-1s\": must not be negative"},
    {"unknown signal", TASK("{command: a, kill: {signal: SIGFOO}}"), 4, 40,
     "web/app: kill.signal: unknown signal \"SIGFOO\""},
    {"misspelt signal", TASK("{command: a, kill: {signal: SIGTREM}}"), 4, 40,
     "web/app: kill.signal: unknown signal \"SIGTREM\"; did you mean \"SIGTERM\"?"},
    {"signal as a number", TASK("{command: a, kill: {signal: 9}}"), 4, 40,
     "web/app: kill.signal: unknown signal \"9\"; write it by name: \"SIGKILL\""},
    {"signal as a number with no name", TASK("{command: a, kill: {signal: 99}}"), 4, 40,
     "web/app: kill.signal: unknown signal \"99\""},
    {"interval of 0", TASK("{command: a, restart: {interval: 0}}"), 4, 45,
     "web/app: restart.interval: must be longer than 0"},
    {"negative attempts", TASK("{command: a, restart: {attempts: -1}}"), 4, 45,
     "web/app: restart.attempts: must be a whole number, 0 or more, or \"unlimited\", not "
     "\"-1\""},
    {"too many attempts", TASK("{command: a, restart: {attempts: 4294967296}}"), 4, 45,
     "web/app: restart.attempts: \"4294967296\" is too large"},
    {"misspelt policy", TASK("{command: a, restart: {policy: alwys}}"), 4, 43,
     "web/app: restart.policy: unknown restart policy \"alwys\"; did you mean \"always\"?"},
    {"unknown mode", TASK("{command: a, restart: {mode: backoff}}"), 4, 41,
     "web/app: restart.mode: unknown restart mode \"backoff\" (use fail or delay)"},
    {"relative cwd", TASK("{command: a, cwd: app}"), 4, 30,
     "web/app: cwd: must be an absolute path, not \"app\""},
    {"empty user", TASK("{command: a, user: ''}"), 4, 31,
     "web/app: user: must not be empty (write a name, a uid or uid:gid)"},

    /* Restart delays */
    {"max_delay below delay in a task", TASK("{command: a, restart: {delay: 1m, max_delay: 10s}}"),
     4, 57, "web/app: restart.max_delay: 10s is shorter than restart.delay (1m)"},
    {"max_delay below delay in a group, reported once",
     "groups:\n  web:\n    restart: {delay: 1m, max_delay: 10s}\n"
     "    tasks: {a: {command: a}, b: {command: b}}\n",
     3, 37, "group web: restart.max_delay: 10s is shorter than restart.delay (1m)"},
    {"max_delay of the group below the delay of a task",
     "groups:\n  web:\n    restart: {max_delay: 10s}\n"
     "    tasks: {app: {command: a, restart: {delay: 1m}}}\n",
     3, 26,
     "web/app: restart.max_delay: 10s (set in group web) is shorter than restart.delay (1m)"},

    /* Resources */
    {"resources as a string", TASK("{command: a, resources: 1G}"), 4, 36,
     "web/app: resources: must be a map of resource limits, not a string"},
    {"misspelt resources key", TASK("{command: a, resources: {memroy: 1G}}"), 4, 37,
     "web/app: resources: unknown key \"memroy\"; did you mean \"memory\"?"},
    {"unknown resources key", TASK("{command: a, resources: {gpus: 1}}"), 4, 37,
     "web/app: resources: unknown key \"gpus\" (expected memory, memory_high, memory_swap, cpu, "
     "cpu_weight, pids, cpuset, io_weight or optional)"},
    {"unknown group key lists resources",
     "groups:\n  web:\n    limits: {}\n    tasks: {a: {command: x}}\n", 3, 5,
     "group web: unknown key \"limits\" (expected restart, resources, isolation, network, "
     "cdi, task_dirs, hooks, tasks, order, on_failure, log, "
     "env_file or profiles)"},
    {"misspelt log mode", TASK("{command: a, log: {mode: nonblocking}}"), 4, 37,
     "web/app: log.mode: unknown log mode \"nonblocking\"; did you mean \"non-blocking\"?"},
    /* Found by fuzz_config: a mount whose target key was misspelt was kept
     * without a target, and copying it crashed. */
    {"misspelt mount target",
     TASK("{command: a, isolation: {namespaces: [mount], mounts: [{source: /tmp, targt: /x}]}}"), 4,
     82, "web/app: isolation.mounts[0]: unknown key \"targt\"; did you mean \"target\"?"},
    {"misspelt log streams", TASK("{command: a, log: {streams: seperate}}"), 4, 40,
     "web/app: log.streams: unknown log streams \"seperate\"; did you mean \"separate\"?"},
    {"log history too small", TASK("{command: a, log: {history: 512}}"), 4, 40,
     "web/app: log.history: must be from 1K to 64M, not \"512\""},
    {"log as a string", TASK("{command: a, log: non-blocking}"), 4, 30,
     "web/app: log: must be a map of log fields, not a string"},
    {"log shared_dir not a boolean", TASK("{command: a, log: {shared_dir: yes please}}"), 4, 43,
     "web/app: log.shared_dir: must be true or false, not \"yes please\""},
    {"misspelt log shared_dir", TASK("{command: a, log: {share_dir: true}}"), 4, 31,
     "web/app: log: unknown key \"share_dir\"; did you mean \"shared_dir\"?"},
    {"memory of 0", TASK("{command: a, resources: {memory: 0}}"), 4, 45,
     "web/app: resources.memory: must be more than 0 (leave it out for no limit)"},
    {"memory with an unknown unit", TASK("{command: a, resources: {memory: 10Q}}"), 4, 45,
     "web/app: resources.memory: invalid size \"10Q\": unknown unit (use K, M, G or T, or a "
     "plain number of bytes)"},
    {"negative memory", TASK("{command: a, resources: {memory: -1M}}"), 4, 45,
     "web/app: resources.memory: invalid size \"-1M\": must not be negative"},
    {"memory null", TASK("{command: a, resources: {memory: ~}}"), 4, 45,
     "web/app: resources.memory: must be a size such as 512K, 256M or 1G, not null"},
    {"memory_swap as a list", TASK("{command: a, resources: {memory_swap: [1G]}}"), 4, 50,
     "web/app: resources.memory_swap: must be a size such as 512K, 256M or 1G, not a list"},
    {"memory_high of 0", TASK("{command: a, resources: {memory_high: 0}}"), 4, 50,
     "web/app: resources.memory_high: must be more than 0 (leave it out for no limit)"},
    {"memory_swap with a decimal", TASK("{command: a, resources: {memory_swap: 1.5G}}"), 4, 50,
     "web/app: resources.memory_swap: invalid size \"1.5G\": use whole numbers (write e.g. "
     "1536M, not 1.5G)"},
    {"cpu of 0", TASK("{command: a, resources: {cpu: 0}}"), 4, 42,
     "web/app: resources.cpu: must be at least 0.01, not \"0\" (cpu.max gives no less than 1ms "
     "per 100ms; leave cpu out for no limit)"},
    {"cpu under 0.01", TASK("{command: a, resources: {cpu: 0.005}}"), 4, 42,
     "web/app: resources.cpu: must be at least 0.01, not \"0.005\" (cpu.max gives no less than "
     "1ms per 100ms; leave cpu out for no limit)"},
    {"cpu with 4 decimals", TASK("{command: a, resources: {cpu: 1.2345}}"), 4, 42,
     "web/app: resources.cpu: \"1.2345\" has more than 3 decimals (the finest step is 0.001 of "
     "a core)"},
    {"cpu with a 4th decimal that counts", TASK("{command: a, resources: {cpu: 0.5001}}"), 4, 42,
     "web/app: resources.cpu: \"0.5001\" has more than 3 decimals (the finest step is 0.001 of "
     "a core)"},
    {"negative cpu", TASK("{command: a, resources: {cpu: -1}}"), 4, 42,
     "web/app: resources.cpu: must be a number of cores such as 0.5, 2 or 1.25, not \"-1\""},
    {"cpu as a word", TASK("{command: a, resources: {cpu: half}}"), 4, 42,
     "web/app: resources.cpu: must be a number of cores such as 0.5, 2 or 1.25, not \"half\""},
    {"cpu ending in a point", TASK("{command: a, resources: {cpu: 1.}}"), 4, 42,
     "web/app: resources.cpu: must be a number of cores such as 0.5, 2 or 1.25, not \"1.\""},
    {"cpu in millicores", TASK("{command: a, resources: {cpu: 500m}}"), 4, 42,
     "web/app: resources.cpu: must be a number of cores such as 0.5, 2 or 1.25, not \"500m\" "
     "(cores, not millicores: 0.5 for 500m)"},
    {"cpu above 1024 cores", TASK("{command: a, resources: {cpu: 1024.001}}"), 4, 42,
     "web/app: resources.cpu: must be at most 1024 cores, not \"1024.001\""},
    {"cpu far too large", TASK("{command: a, resources: {cpu: 99999999999999999999999}}"), 4, 42,
     "web/app: resources.cpu: must be at most 1024 cores, not \"99999999999999999999999\""},
    {"cpu_weight of 0", TASK("{command: a, resources: {cpu_weight: 0}}"), 4, 49,
     "web/app: resources.cpu_weight: must be a whole number from 1 to 10000, not \"0\""},
    {"cpu_weight above 10000", TASK("{command: a, resources: {cpu_weight: 10001}}"), 4, 49,
     "web/app: resources.cpu_weight: must be a whole number from 1 to 10000, not \"10001\""},
    {"io_weight with a decimal", TASK("{command: a, resources: {io_weight: 1.5}}"), 4, 48,
     "web/app: resources.io_weight: must be a whole number from 1 to 10000, not \"1.5\""},
    {"pids of 0", TASK("{command: a, resources: {pids: 0}}"), 4, 43,
     "web/app: resources.pids: must be a whole number from 1 to 4194304, not \"0\""},
    {"pids above the kernel's limit", TASK("{command: a, resources: {pids: 4194305}}"), 4, 43,
     "web/app: resources.pids: must be a whole number from 1 to 4194304, not \"4194305\""},
    {"negative pids", TASK("{command: a, resources: {pids: -1}}"), 4, 43,
     "web/app: resources.pids: must be a whole number from 1 to 4194304, not \"-1\""},
    {"cpuset with a space", TASK("{command: a, resources: {cpuset: \"0-1, 3\"}}"), 4, 45,
     "web/app: resources.cpuset: must be a CPU list such as \"0-1,3,5-7\" (numbers and ranges, "
     "commas, no spaces), not \"0-1, 3\""},
    {"cpuset ending in a comma", TASK("{command: a, resources: {cpuset: \"0-1,\"}}"), 4, 45,
     "web/app: resources.cpuset: must be a CPU list such as \"0-1,3,5-7\" (numbers and ranges, "
     "commas, no spaces), not \"0-1,\""},
    {"empty cpuset", TASK("{command: a, resources: {cpuset: \"\"}}"), 4, 45,
     "web/app: resources.cpuset: must be a CPU list such as \"0-1,3,5-7\" (numbers and ranges, "
     "commas, no spaces), not \"\""},
    {"cpuset range backwards", TASK("{command: a, resources: {cpuset: \"0,3-1\"}}"), 4, 45,
     "web/app: resources.cpuset: range \"3-1\" goes backwards (write \"1-3\")"},
    {"cpuset number too large", TASK("{command: a, resources: {cpuset: \"4294967296\"}}"), 4, 45,
     "web/app: resources.cpuset: CPU number too large in \"4294967296\""},
    {"optional not a boolean", TASK("{command: a, resources: {optional: yes}}"), 4, 47,
     "web/app: resources.optional: must be true or false, not \"yes\""},
    {"group resources wrong, reported once for the group",
     "groups:\n  web:\n    resources: {cpu: 0}\n    tasks: {a: {command: a}, b: {command: b}}\n", 3,
     22,
     "group web: resources.cpu: must be at least 0.01, not \"0\" (cpu.max gives no less than 1ms "
     "per 100ms; leave cpu out for no limit)"},

    /* Isolation */
    {"isolation as a boolean", TASK("{command: a, isolation: true}"), 4, 36,
     "web/app: isolation: must be a map of isolation settings, not a string"},
    {"unknown isolation key, nothing close", TASK("{command: a, isolation: {colour: red}}"), 4, 37,
     "web/app: isolation: unknown key \"colour\" (expected namespaces, hostname, init, "
     "capabilities, seccomp, no_new_privileges, rlimits, umask, devices, rootfs, "
     "readonly_rootfs, mounts, user or network)"},
    {"misspelt isolation key", TASK("{command: a, isolation: {namespace: [pid]}}"), 4, 37,
     "web/app: isolation: unknown key \"namespace\"; did you mean \"namespaces\"?"},
    {"namespaces as a string", TASK("{command: a, isolation: {namespaces: pid}}"), 4, 49,
     "web/app: isolation.namespaces: must be a list of namespaces such as [pid, mount], not "
     "a string"},
    {"duplicate namespace", TASK("{command: a, isolation: {namespaces: [pid, mount, pid]}}"), 4, 62,
     "web/app: isolation.namespaces[2]: duplicate namespace \"pid\""},
    {"misspelt namespace", TASK("{command: a, isolation: {namespaces: [pdi]}}"), 4, 50,
     "web/app: isolation.namespaces[0]: unknown namespace \"pdi\"; did you mean \"pid\"?"},
    {"namespace by its OCI name", TASK("{command: a, isolation: {namespaces: [network]}}"), 4, 50,
     "web/app: isolation.namespaces[0]: unknown namespace \"network\"; did you mean \"net\"?"},
    {"unknown namespace", TASK("{command: a, isolation: {namespaces: [time]}}"), 4, 50,
     "web/app: isolation.namespaces[0]: unknown namespace \"time\" (use pid, mount, uts, "
     "ipc, net, cgroup or user)"},
    {"namespace as a list", TASK("{command: a, isolation: {namespaces: [[pid]]}}"), 4, 50,
     "web/app: isolation.namespaces[0]: must be a string, not a list"},
    {"hostname without uts", TASK("{command: a, isolation: {hostname: app}}"), 4, 47,
     "web/app: isolation.hostname: \"app\" needs the uts namespace; add uts to "
     "isolation.namespaces"},
    {"hostname with an underscore",
     TASK("{command: a, isolation: {namespaces: [uts], hostname: my_app}}"), 4, 66,
     "web/app: isolation.hostname: must be 1 to 64 letters, digits, '-' and '.', starting "
     "and ending with a letter or digit, not \"my_app\""},
    {"hostname starting with a dash",
     TASK("{command: a, isolation: {namespaces: [uts], hostname: -app}}"), 4, 66,
     "web/app: isolation.hostname: must be 1 to 64 letters, digits, '-' and '.', starting "
     "and ending with a letter or digit, not \"-app\""},
    {"empty hostname", TASK("{command: a, isolation: {namespaces: [uts], hostname: \"\"}}"), 4, 66,
     "web/app: isolation.hostname: must be 1 to 64 letters, digits, '-' and '.', starting "
     "and ending with a letter or digit, not \"\""},
    {"hostname of 65 characters",
     TASK("{command: a, isolation: {namespaces: [uts], "
	  "hostname: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}}"),
     4, 66,
     "web/app: isolation.hostname: must be 1 to 64 letters, digits, '-' and '.', starting "
     "and ending with a letter or digit, not "
     "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\""},
    {"init false without pid", TASK("{command: a, isolation: {init: false}}"), 4, 43,
     "web/app: isolation.init: init only matters with the pid namespace; add pid to "
     "isolation.namespaces or leave init out"},
    {"init not a boolean", TASK("{command: a, isolation: {namespaces: [pid], init: no}}"), 4, 62,
     "web/app: isolation.init: must be true or false, not \"no\""},
    {"capabilities as a list", TASK("{command: a, isolation: {capabilities: [net_raw]}}"), 4, 51,
     "web/app: isolation.capabilities: must be a map such as {drop: [all], add: [net_raw]}, "
     "not a list"},
    {"drop as a string", TASK("{command: a, isolation: {capabilities: {drop: all}}}"), 4, 58,
     "web/app: isolation.capabilities.drop: must be a list of capability names such as "
     "[net_raw], not a string"},
    {"unknown capabilities key", TASK("{command: a, isolation: {capabilities: {keep: [kill]}}}"), 4,
     52, "web/app: isolation.capabilities: unknown key \"keep\" (expected drop or add)"},
    {"misspelt all", TASK("{command: a, isolation: {capabilities: {drop: [al]}}}"), 4, 59,
     "web/app: isolation.capabilities.drop[0]: unknown capability \"al\"; did you mean "
     "\"all\"?"},
    {"misspelt capability",
     TASK("{command: a, isolation: {capabilities: {add: [kill, net_bind_servce]}}}"), 4, 64,
     "web/app: isolation.capabilities.add[1]: unknown capability \"net_bind_servce\"; did "
     "you mean \"net_bind_service\"?"},
    {"misspelt capability with CAP_",
     TASK("{command: a, isolation: {capabilities: {add: [CAP_NET_BIND_SERVCE]}}}"), 4, 58,
     "web/app: isolation.capabilities.add[0]: unknown capability \"CAP_NET_BIND_SERVCE\"; "
     "did you mean \"net_bind_service\"?"},
    {"unknown capability", TASK("{command: a, isolation: {capabilities: {add: [superpower]}}}"), 4,
     58,
     "web/app: isolation.capabilities.add[0]: unknown capability \"superpower\" (see "
     "capabilities(7))"},
    {"capability as a number", TASK("{command: a, isolation: {capabilities: {add: [\"12\"]}}}"), 4,
     58,
     "web/app: isolation.capabilities.add[0]: unknown capability \"12\" (see "
     "capabilities(7))"},
    {"unknown seccomp profile", TASK("{command: a, isolation: {seccomp: strict}}"), 4, 46,
     "web/app: isolation.seccomp: unknown seccomp profile \"strict\" (use default or "
     "unconfined)"},
    {"misspelt seccomp profile", TASK("{command: a, isolation: {seccomp: defualt}}"), 4, 46,
     "web/app: isolation.seccomp: unknown seccomp profile \"defualt\"; did you mean "
     "\"default\"?"},
    {"seccomp as a list", TASK("{command: a, isolation: {seccomp: [mount]}}"), 4, 46,
     "web/app: isolation.seccomp: must be default, unconfined or a map with "
     "\"default_action\", not a list"},
    {"seccomp null", TASK("{command: a, isolation: {seccomp: ~}}"), 4, 46,
     "web/app: isolation.seccomp: must be default, unconfined or a map with "
     "\"default_action\", not null"},
    {"custom seccomp without default_action",
     TASK("{command: a, isolation: {seccomp: {deny: [mount]}}}"), 4, 46,
     "web/app: isolation.seccomp: missing \"default_action\" (allow, errno, kill or log), "
     "the action for syscalls not listed"},
    {"unknown seccomp action", TASK("{command: a, isolation: {seccomp: {default_action: trap}}}"),
     4, 63,
     "web/app: isolation.seccomp.default_action: unknown action \"trap\" (use allow, errno, "
     "kill or log)"},
    {"misspelt syscall",
     TASK("{command: a, isolation: {seccomp: {default_action: errno, "
	  "deny: [kexec_load, reboot, mout]}}}"),
     4, 97,
     "web/app: isolation.seccomp.deny[2]: unknown syscall \"mout\"; did you mean \"mount\"?"},
    {"unknown syscall",
     TASK("{command: a, isolation: {seccomp: {default_action: errno, "
	  "allow: [notasyscall]}}}"),
     4, 78, "web/app: isolation.seccomp.allow[0]: unknown syscall \"notasyscall\""},
    {"syscall list as a string",
     TASK("{command: a, isolation: {seccomp: {default_action: errno, allow: read}}}"), 4, 77,
     "web/app: isolation.seccomp.allow: must be a list of syscall names such as [mount, "
     "reboot], not a string"},
    {"exit denied",
     TASK("{command: a, isolation: {seccomp: {default_action: allow, deny: [exit]}}}"), 4, 77,
     "web/app: isolation.seccomp.deny[0]: \"exit\" cannot be denied: execve, execveat, exit "
     "and exit_group are how a task starts (or reports that it could not)"},
    {"syscall allowed and denied",
     TASK("{command: a, isolation: {seccomp: {default_action: errno, "
	  "allow: [read, mount], deny: [mount]}}}"),
     4, 99,
     "web/app: isolation.seccomp.deny[0]: \"mount\" is also in isolation.seccomp.allow; "
     "keep one"},
    {"misspelt seccomp key",
     TASK("{command: a, isolation: {seccomp: {default_action: errno, alow: [read]}}}"), 4, 70,
     "web/app: isolation.seccomp: unknown key \"alow\"; did you mean \"allow\"?"},
    {"no_new_privileges as a number", TASK("{command: a, isolation: {no_new_privileges: 1}}"), 4,
     56, "web/app: isolation.no_new_privileges: must be true or false, not \"1\""},
    {"rlimits as a list", TASK("{command: a, isolation: {rlimits: [nofile]}}"), 4, 46,
     "web/app: isolation.rlimits: must be a map of limits such as {nofile: 4096}, not a list"},
    {"unknown rlimit", TASK("{command: a, isolation: {rlimits: {files: 10}}}"), 4, 47,
     "web/app: isolation.rlimits: unknown key \"files\" (expected as, core, cpu, data, "
     "fsize, locks, memlock, msgqueue, nice, nofile, nproc, rss, rtprio, rttime, sigpending "
     "or stack)"},
    {"misspelt rlimit", TASK("{command: a, isolation: {rlimits: {nofle: 10}}}"), 4, 47,
     "web/app: isolation.rlimits: unknown key \"nofle\"; did you mean \"nofile\"?"},
    {"negative rlimit", TASK("{command: a, isolation: {rlimits: {nofile: -1}}}"), 4, 55,
     "web/app: isolation.rlimits.nofile: must be a whole number or \"unlimited\", not \"-1\""},
    {"size for a count rlimit", TASK("{command: a, isolation: {rlimits: {nofile: 1K}}}"), 4, 55,
     "web/app: isolation.rlimits.nofile: must be a whole number or \"unlimited\", not \"1K\""},
    {"rlimit too large", TASK("{command: a, isolation: {rlimits: {nofile: 99999999999999999999}}}"),
     4, 55,
     "web/app: isolation.rlimits.nofile: must be a whole number or \"unlimited\", not "
     "\"99999999999999999999\" (too large)"},
    {"rlimit null", TASK("{command: a, isolation: {rlimits: {nofile: ~}}}"), 4, 55,
     "web/app: isolation.rlimits.nofile: must be a whole number, \"unlimited\" or [soft, "
     "hard], not null"},
    {"size rlimit with a decimal", TASK("{command: a, isolation: {rlimits: {core: 1.5G}}}"), 4, 53,
     "web/app: isolation.rlimits.core: invalid size \"1.5G\": use whole numbers (write e.g. "
     "1536M, not 1.5G)"},
    {"rlimit as a map", TASK("{command: a, isolation: {rlimits: {stack: {soft: 1}}}}"), 4, 54,
     "web/app: isolation.rlimits.stack: must be a size such as 8M, \"unlimited\" or [soft, "
     "hard], not a map"},
    {"soft rlimit above hard", TASK("{command: a, isolation: {rlimits: {nproc: [200, 100]}}}"), 4,
     54,
     "web/app: isolation.rlimits.nproc: the soft limit (200) must not exceed the hard limit "
     "(100)"},
    {"unlimited soft rlimit below hard",
     TASK("{command: a, isolation: {rlimits: {nproc: [unlimited, 100]}}}"), 4, 54,
     "web/app: isolation.rlimits.nproc: the soft limit (unlimited) must not exceed the hard "
     "limit (100)"},
    {"rlimit pair of one", TASK("{command: a, isolation: {rlimits: {nproc: [100]}}}"), 4, 54,
     "web/app: isolation.rlimits.nproc: must be [soft, hard], two values, not 1"},
    {"rlimit pair with a word", TASK("{command: a, isolation: {rlimits: {nproc: [1, x]}}}"), 4, 58,
     "web/app: isolation.rlimits.nproc[1]: must be a whole number or \"unlimited\", not "
     "\"x\""},
    {"umask without its leading 0", TASK("{command: a, isolation: {umask: 27}}"), 4, 44,
     "web/app: isolation.umask: must be an octal mask from 0 to 0777 with its leading 0, "
     "such as \"0027\", not \"27\""},
    {"umask with an 8", TASK("{command: a, isolation: {umask: \"0028\"}}"), 4, 44,
     "web/app: isolation.umask: must be an octal mask from 0 to 0777 with its leading 0, "
     "such as \"0027\", not \"0028\""},
    {"umask above 0777", TASK("{command: a, isolation: {umask: \"01000\"}}"), 4, 44,
     "web/app: isolation.umask: must be an octal mask from 0 to 0777 with its leading 0, "
     "such as \"0027\", not \"01000\""},
    {"umask of 0o alone", TASK("{command: a, isolation: {umask: 0o}}"), 4, 44,
     "web/app: isolation.umask: must be an octal mask from 0 to 0777 with its leading 0, "
     "such as \"0027\", not \"0o\""},
    {"umask as a list", TASK("{command: a, isolation: {umask: [0]}}"), 4, 44,
     "web/app: isolation.umask: must be an octal mask such as \"0027\", not a list"},
    {"wrong namespaces, no second message about the hostname",
     TASK("{command: a, isolation: {namespaces: [uts, usr], hostname: app}}"), 4, 55,
     "web/app: isolation.namespaces[1]: unknown namespace \"usr\"; did you mean \"user\"?"},
    {"wrong group namespaces, nothing more for the tasks",
     "groups:\n  web:\n    isolation: {namespaces: uts, hostname: h}\n"
     "    tasks: {a: {command: a}, b: {command: b}}\n",
     3, 29,
     "group web: isolation.namespaces: must be a list of namespaces such as [pid, mount], "
     "not a string"},
    {"group isolation wrong, reported once for the group",
     "groups:\n  web:\n    isolation: {seccomp: {default_action: errno, deny: [mout]}}\n"
     "    tasks: {a: {command: a}, b: {command: b}}\n",
     3, 57,
     "group web: isolation.seccomp.deny[0]: unknown syscall \"mout\"; did you mean "
     "\"mount\"?"},
    {"group hostname without the group's uts, reported once",
     "groups:\n  web:\n    isolation: {namespaces: [pid], hostname: h}\n"
     "    tasks: {a: {command: a}, b: {command: b}}\n",
     3, 46,
     "group web: isolation.hostname: \"h\" needs the uts namespace; add uts to "
     "isolation.namespaces"},
    {"group hostname, task namespaces without uts",
     "groups:\n  web:\n    isolation: {namespaces: [uts], hostname: h}\n"
     "    tasks: {a: {command: a, isolation: {namespaces: [pid]}}}\n",
     3, 46,
     "web/a: isolation.hostname: \"h\" (set in group web) needs the uts namespace; add "
     "uts to isolation.namespaces"},
    {"task hostname, group namespaces without uts",
     "groups:\n  web:\n    isolation: {namespaces: [pid]}\n"
     "    tasks: {a: {command: a, isolation: {hostname: h}}}\n",
     4, 51,
     "web/a: isolation.hostname: \"h\" needs the uts namespace; add uts to "
     "isolation.namespaces"},
    {"group init false, task without pid",
     "groups:\n  web:\n    isolation: {init: false}\n"
     "    tasks: {a: {command: a, isolation: {namespaces: [net]}}}\n",
     3, 23,
     "web/a: isolation.init: false (set in group web): init only matters with the pid "
     "namespace; add pid to isolation.namespaces or leave init out"},

    /* memory_high above memory, from the task, the group, or both */
    {"memory_high above memory in a task",
     TASK("{command: a, resources: {memory: 256M, memory_high: 300M}}"), 4, 64,
     "web/app: resources.memory_high: 300M must not exceed resources.memory (256M)"},
    {"memory_high above memory in a group, reported once",
     "groups:\n  web:\n    resources: {memory: 256M, memory_high: 300M}\n"
     "    tasks: {a: {command: a}, b: {command: b}}\n",
     3, 44, "group web: resources.memory_high: 300M must not exceed resources.memory (256M)"},
    {"memory_high of a task above the memory of its group",
     "groups:\n  web:\n    resources: {memory: 256M}\n"
     "    tasks: {app: {command: a, resources: {memory_high: 300M}}}\n",
     4, 56,
     "web/app: resources.memory_high: 300M must not exceed resources.memory (256M, set in group "
     "web)"},
    {"memory_high of the group above the memory of a task",
     "groups:\n  web:\n    resources: {memory_high: 300M}\n"
     "    tasks: {app: {command: a, resources: {memory: 256M}}}\n",
     3, 30,
     "web/app: resources.memory_high: 300M (set in group web) must not exceed resources.memory "
     "(256M)"},
    {"a task's wrong memory is not also compared with the group's memory_high",
     "groups:\n  web:\n    resources: {memory_high: 300M}\n"
     "    tasks: {app: {command: a, resources: {memory: 10Q}}}\n",
     4, 51,
     "web/app: resources.memory: invalid size \"10Q\": unknown unit (use K, M, G or T, or a plain "
     "number of bytes)"},

    /* Readiness and health */
    /* readiness.log: back-references and costly repetitions, at the pattern's column */
    {"log pattern with a back-reference",
     TASK("{command: a, readiness: {log: '^(.*)(.*)\\2\\1x$'}}"), 4, 52,
     "web/app: readiness.log: \\2 is a "
     "back-reference, which corral refuses: matching one can take time exponential in the "
     "line's length, in corral's one loop, which every task waits on; write the text it "
     "stands for again ((ab)\\1 as (ab)ab), or a class that covers it ([0-9]+)"},
    {"back-reference in a scalar with escapes: at its start",
     TASK("{command: a, readiness: {log: \"a(b)\\\\1\"}}"), 4, 42,
     "web/app: readiness.log: \\1 is a "
     "back-reference, which corral refuses: matching one can take time exponential in the "
     "line's length, in corral's one loop, which every task waits on; write the text it "
     "stands for again ((ab)\\1 as (ab)ab), or a class that covers it ([0-9]+)"},
    /* libyaml's columns count characters: "é" is one column and two bytes */
    {"back-reference after a two-byte character: at its own column",
     TASK("{command: a, readiness: {log: 'é(b)\\1'}}"), 4, 47,
     "web/app: readiness.log: \\1 is a "
     "back-reference, which corral refuses: matching one can take time exponential in the "
     "line's length, in corral's one loop, which every task waits on; write the text it "
     "stands for again ((ab)\\1 as (ab)ab), or a class that covers it ([0-9]+)"},
    {"escapes and a two-byte character: at its start, not where the bytes would put it",
     TASK("{command: a, readiness: {log: \"é(b)\\\\1\"}}"), 4, 42,
     "web/app: readiness.log: \\1 is a "
     "back-reference, which corral refuses: matching one can take time exponential in the "
     "line's length, in corral's one loop, which every task waits on; write the text it "
     "stands for again ((ab)\\1 as (ab)ab), or a class that covers it ([0-9]+)"},
    {"too many repetition operators", TASK("{command: a, readiness: {log: '(.*){40}b'}}"), 4, 47,
     "web/app: readiness.log: has 40 "
     "repetition operators (*, +, ?, and the optional copies of {n,m}) once its {n,m} "
     "repetitions are multiplied out, more than 16: each line's cost in corral's one loop, "
     "which every task waits on, grows with their square; write one .* for a run of them "
     "((.*a){40}b as .*a.*b if the count does not matter)"},
    {"too many positions in not_ready",
     TASK("{command: a, readiness: {log: {ready: up, not_ready: 'x(y{20}){20}'}}}"), 4, 74,
     "web/app: readiness.log.not_ready: has 400 characters and classes once its {n,m} "
     "repetitions are multiplied out, more than 256: every line of output would cost as much "
     "in corral's one loop, which every task waits on; repeat less (a{3,} for a{3,300}, .* "
     "for .{0,300})"},
    {"repetitions too many only together: at the pattern's start",
     TASK("{command: a, readiness: {log: '(.*a){9}(.*b){9}'}}"), 4, 43,
     "web/app: readiness.log: has 18 "
     "repetition operators (*, +, ?, and the optional copies of {n,m}) once its {n,m} "
     "repetitions are multiplied out, more than 16: each line's cost in corral's one loop, "
     "which every task waits on, grows with their square; write one .* for a run of them "
     "((.*a){40}b as .*a.*b if the count does not matter)"},
    {"continuous readiness on a notify fd",
     TASK("{command: a, readiness: {notify: fd, fd: 3, continuous: true}}"), 4, 68,
     "web/app: readiness.continuous: does not go with \"notify: fd\" (its newline is said once; "
     "take a probe, or notify: systemd with RELOADING=1 and READY=1)"},
    {"readiness failures without continuous",
     TASK("{command: a, readiness: {exec: [true], failures: 2}}"), 4, 61,
     "web/app: readiness.failures: only goes with \"continuous: true\" (until the task is first "
     "ready, failures only mean \"not ready yet\")"},
    {"readiness failures of 0",
     TASK("{command: a, readiness: {exec: [true], continuous: true, failures: 0}}"), 4, 79,
     "web/app: readiness.failures: must be a whole number, 1 or more, not \"0\""},
    {"readiness as a string", TASK("{command: a, readiness: systemd}"), 4, 36,
     "web/app: readiness: must be a map with \"notify\" or a probe (\"exec\", \"tcp\", ...), not a "
     "string"},
    {"misspelt readiness key", TASK("{command: a, readiness: {notify: systemd, timout: 1s}}"), 4,
     54, "web/app: readiness: unknown key \"timout\"; did you mean \"timeout\"?"},
    {"unknown readiness key", TASK("{command: a, readiness: {notify: systemd, port: 80}}"), 4, 54,
     "web/app: readiness: unknown key \"port\" (expected notify, fd, exec, tcp, http, unix, "
     "interval, timeout, watchdog, start_interval, initial_delay, inside, continuous, failures, "
     "start_period or log)"},
    {"readiness without notify or exec", TASK("{command: a, readiness: {timeout: 1s}}"), 4, 36,
     "web/app: readiness: missing \"notify\" (systemd or fd), \"log\" (a line to wait for) or a "
     "probe: \"exec\" (a command), \"tcp\", \"http\" or \"unix\""},
    {"misspelt notify is not also missing", TASK("{command: a, readiness: {notfy: systemd}}"), 4,
     37, "web/app: readiness: unknown key \"notfy\"; did you mean \"notify\"?"},
    {"notify and exec together", TASK("{command: a, readiness: {notify: systemd, exec: [a]}}"), 4,
     60, "web/app: readiness: \"notify\" and \"exec\" exclude each other; keep one"},
    {"exec and notify together, at the second",
     TASK("{command: a, readiness: {exec: [a], notify: fd}}"), 4, 56,
     "web/app: readiness: \"notify\" and \"exec\" exclude each other; keep one"},
    {"misspelt notify method", TASK("{command: a, readiness: {notify: sytemd}}"), 4, 45,
     "web/app: readiness.notify: unknown notify method \"sytemd\"; did you mean \"systemd\"?"},
    {"unknown notify method", TASK("{command: a, readiness: {notify: socket}}"), 4, 45,
     "web/app: readiness.notify: unknown notify method \"socket\" (use systemd or fd)"},
    {"notify fd without fd", TASK("{command: a, readiness: {notify: fd}}"), 4, 36,
     "web/app: readiness: \"notify: fd\" needs \"fd\", the fd number the task writes to (3 to "
     "1023)"},
    {"fd 0", TASK("{command: a, readiness: {notify: fd, fd: 0}}"), 4, 53,
     "web/app: readiness.fd: 0 is the task's stdin; use 3 to 1023"},
    {"fd 1", TASK("{command: a, readiness: {notify: fd, fd: 1}}"), 4, 53,
     "web/app: readiness.fd: 1 is the task's stdout; use 3 to 1023"},
    {"fd 2", TASK("{command: a, readiness: {notify: fd, fd: 2}}"), 4, 53,
     "web/app: readiness.fd: 2 is the task's stderr; use 3 to 1023"},
    {"fd above 1023", TASK("{command: a, readiness: {notify: fd, fd: 1024}}"), 4, 53,
     "web/app: readiness.fd: must be a whole number from 3 to 1023, not \"1024\""},
    {"negative fd", TASK("{command: a, readiness: {notify: fd, fd: -1}}"), 4, 53,
     "web/app: readiness.fd: must be a whole number from 3 to 1023, not \"-1\""},
    {"fd far too large", TASK("{command: a, readiness: {notify: fd, fd: 99999999999999999999999}}"),
     4, 53,
     "web/app: readiness.fd: must be a whole number from 3 to 1023, not "
     "\"99999999999999999999999\""},
    {"fd as a list", TASK("{command: a, readiness: {notify: fd, fd: [3]}}"), 4, 53,
     "web/app: readiness.fd: must be a string, not a list"},
    {"fd with notify systemd", TASK("{command: a, readiness: {notify: systemd, fd: 3}}"), 4, 58,
     "web/app: readiness.fd: only goes with \"notify: fd\""},
    {"fd with exec", TASK("{command: a, readiness: {exec: [a], fd: 3}}"), 4, 52,
     "web/app: readiness.fd: only goes with \"notify: fd\""},
    {"interval with notify", TASK("{command: a, readiness: {notify: systemd, interval: 1s}}"), 4,
     64, "web/app: readiness.interval: only goes with a probe (a notifying task is not polled)"},
    {"start_period with notify",
     TASK("{command: a, readiness: {notify: systemd, start_period: 5s}}"), 4, 68,
     "web/app: readiness.start_period: only goes with a probe (a notifying task is not polled)"},
    {"bad readiness start_period", TASK("{command: a, readiness: {tcp: 80, start_period: 5x}}"), 4,
     60,
     "web/app: readiness.start_period: invalid duration \"5x\": unknown unit (use ms, s, m or h)"},
    {"readiness interval of 0", TASK("{command: a, readiness: {exec: [a], interval: 0}}"), 4, 58,
     "web/app: readiness.interval: must be longer than 0"},
    {"bad readiness timeout", TASK("{command: a, readiness: {notify: systemd, timeout: 5x}}"), 4,
     63, "web/app: readiness.timeout: invalid duration \"5x\": unknown unit (use ms, s, m or h)"},
    {"empty readiness exec", TASK("{command: a, readiness: {exec: []}}"), 4, 43,
     "web/app: readiness.exec: must not be empty"},
    {"null readiness exec", TASK("{command: a, readiness: {exec: ~}}"), 4, 43,
     "web/app: readiness.exec: must not be empty"},
    {"readiness exec as a string", TASK("{command: a, readiness: {exec: pg_isready}}"), 4, 43,
     "web/app: readiness.exec: must be a list of strings, not a string (for a shell line, write "
     "[\"/bin/sh\", \"-c\", \"...\"])"},
    {"readiness exec as a map", TASK("{command: a, readiness: {exec: {a: b}}}"), 4, 43,
     "web/app: readiness.exec: must be a list of strings, not a map"},
    {"readiness exec word a list", TASK("{command: a, readiness: {exec: [a, [b]]}}"), 4, 47,
     "web/app: readiness.exec[1]: must be a string, not a list"},
    {"readiness exec empty program", TASK("{command: a, readiness: {exec: [\"\", x]}}"), 4, 44,
     "web/app: readiness.exec[0]: the program must not be empty"},
    {"readiness on a prestart task",
     TASK("{command: a, lifecycle: {hook: prestart}, readiness: {notify: systemd}}"), 4, 65,
     "web/app: readiness: only for main tasks and sidecars; an ephemeral task is ready when it "
     "exits 0"},
    {"readiness on a poststart task, lifecycle written after",
     TASK("{command: a, readiness: {notify: systemd}, lifecycle: {hook: poststart}}"), 4, 36,
     "web/app: readiness: only for main tasks and sidecars; an ephemeral task is ready when it "
     "exits 0"},
    {"readiness on a poststop task",
     TASK("{command: a, lifecycle: {hook: poststop}, readiness: {exec: [a]}}"), 4, 65,
     "web/app: readiness: only for main tasks and sidecars; nothing waits for a poststop task"},
    {"health as a list", TASK("{command: a, health: [a]}"), 4, 33,
     "web/app: health: must be a map with a probe (\"exec\", \"tcp\", ...), not a list"},
    {"health without exec", TASK("{command: a, health: {interval: 5s}}"), 4, 33,
     "web/app: health: missing a probe: \"exec\" (a command), \"tcp\", \"http\" or \"unix\""},
    {"misspelt health exec is not also missing", TASK("{command: a, health: {exce: [a]}}"), 4, 34,
     "web/app: health: unknown key \"exce\"; did you mean \"exec\"?"},
    {"unknown health key", TASK("{command: a, health: {exec: [a], retries: 3}}"), 4, 45,
     "web/app: health: unknown key \"retries\" (expected exec, tcp, http, unix, interval, timeout, "
     "failures, start_interval, initial_delay or inside)"},
    {"notify systemd with its own network and rootfs",
     TASK("{command: a, readiness: {notify: systemd}, isolation: {namespaces: [mount], "
	  "rootfs: /tmp, network: {mode: none}}}"),
     4, 36,
     "web/app: readiness.notify: systemd: with a network namespace of its own, NOTIFY_SOCKET "
     "is a path on the host's file system, which a task with its own rootfs does not see; take "
     "notify: fd, or a probe (tcp, http, unix, exec)"},
    {"watchdog without notify systemd",
     TASK("{command: a, readiness: {notify: fd, fd: 3, watchdog: 10s}}"), 4, 66,
     "web/app: readiness.watchdog: only goes with \"notify: systemd\" (WATCHDOG=1 comes that "
     "way)"},
    {"tcp not a port", TASK("{command: a, health: {tcp: abc}}"), 4, 39,
     "web/app: health.tcp: must be PORT or ADDRESS:PORT with a port from 1 to 65535, not \"abc\""},
    {"tcp port 0", TASK("{command: a, health: {tcp: 0}}"), 4, 39,
     "web/app: health.tcp: must be PORT or ADDRESS:PORT with a port from 1 to 65535, not \"0\""},
    {"tcp host name", TASK("{command: a, health: {tcp: 'db:5432'}}"), 4, 39,
     "web/app: health.tcp: \"db\" is not an IP address; probes take addresses (127.0.0.1, ::1), "
     "since a name lookup could stall corral"},
    {"http without port", TASK("{command: a, health: {http: {path: /x}}}"), 4, 40,
     "web/app: health.http: missing \"port\""},
    {"http path without slash", TASK("{command: a, health: {http: {port: 80, path: x}}}"), 4, 57,
     "web/app: health.http.path: must start with / and hold no space, line break or #, not \"x\""},
    {"http path with a fragment", TASK("{command: a, health: {http: {port: 80, path: \"/x#y\"}}}"),
     4, 57,
     "web/app: health.http.path: must start with / and hold no space, line break or #, not "
     "\"/x#y\""},
    {"http header with a line break",
     TASK("{command: a, health: {http: {port: 80, headers: {X-A: \"b\\r\\nc\"}}}}"), 4, 66,
     "web/app: health.http.headers.X-A: must not hold a line break"},
    {"unix relative", TASK("{command: a, health: {unix: run/app.sock}}"), 4, 40,
     "web/app: health.unix: must be an absolute path, not \"run/app.sock\""},
    {"exec and tcp together", TASK("{command: a, health: {exec: [a], tcp: 80}}"), 4, 50,
     "web/app: health: \"exec\" and \"tcp\" exclude each other; a probe asks one way"},
    {"notify and http together",
     TASK("{command: a, readiness: {http: {port: 80}, notify: systemd}}"), 4, 63,
     "web/app: readiness: \"notify\" and \"http\" exclude each other; keep one"},
    {"health exec as a string", TASK("{command: a, health: {exec: /bin/check}}"), 4, 40,
     "web/app: health.exec: must be a list of strings, not a string (for a shell line, write "
     "[\"/bin/sh\", \"-c\", \"...\"])"},
    {"empty health exec", TASK("{command: a, health: {exec: []}}"), 4, 40,
     "web/app: health.exec: must not be empty"},
    {"health interval of 0", TASK("{command: a, health: {exec: [a], interval: 0}}"), 4, 55,
     "web/app: health.interval: must be longer than 0"},
    {"health timeout of 0", TASK("{command: a, health: {exec: [a], timeout: 0}}"), 4, 54,
     "web/app: health.timeout: must be longer than 0"},
    {"health timeout longer than the interval",
     TASK("{command: a, health: {exec: [a], interval: 5s, timeout: 10s}}"), 4, 68,
     "web/app: health.timeout: 10s is longer than health.interval (5s)"},
    {"health timeout longer than the default interval",
     TASK("{command: a, health: {exec: [a], timeout: 1m}}"), 4, 54,
     "web/app: health.timeout: 1m is longer than health.interval (10s, the default)"},
    {"a wrong health interval is not also compared",
     TASK("{command: a, health: {exec: [a], interval: 0, timeout: 20s}}"), 4, 55,
     "web/app: health.interval: must be longer than 0"},
    {"health failures of 0", TASK("{command: a, health: {exec: [a], failures: 0}}"), 4, 55,
     "web/app: health.failures: must be a whole number, 1 or more, not \"0\""},
    {"negative health failures", TASK("{command: a, health: {exec: [a], failures: -1}}"), 4, 55,
     "web/app: health.failures: must be a whole number, 1 or more, not \"-1\""},
    {"health failures with a decimal", TASK("{command: a, health: {exec: [a], failures: 1.5}}"), 4,
     55, "web/app: health.failures: must be a whole number, 1 or more, not \"1.5\""},
    {"too many health failures", TASK("{command: a, health: {exec: [a], failures: 4294967296}}"), 4,
     55, "web/app: health.failures: \"4294967296\" is too large"},
    {"health on a prestart task",
     TASK("{command: a, lifecycle: {hook: prestart}, health: {exec: [a]}}"), 4, 62,
     "web/app: health: only for main tasks and sidecars; an ephemeral task runs once, to its exit"},
    {"health on a poststop task",
     TASK("{command: a, lifecycle: {hook: poststop}, health: {exec: [a]}}"), 4, 62,
     "web/app: health: only for main tasks and sidecars; a poststop task runs once, to its exit"},

    /* Lifecycle */
    {"sidecar on poststop", TASK("{command: a, lifecycle: {hook: poststop, sidecar: true}}"), 4, 62,
     "web/app: lifecycle.sidecar: a poststop task cannot be a sidecar (it runs after the group "
     "stopped)"},
    {"sidecar without hook", TASK("{command: a, lifecycle: {sidecar: true}}"), 4, 46,
     "web/app: lifecycle: \"sidecar\" needs a \"hook\" (prestart or poststart)"},
    {"empty lifecycle", TASK("{command: a, lifecycle: {}}"), 4, 36,
     "web/app: lifecycle: missing \"hook\" (prestart, poststart or poststop)"},
    {"misspelt hook", TASK("{command: a, lifecycle: {hook: prestrat}}"), 4, 43,
     "web/app: lifecycle.hook: unknown hook \"prestrat\"; did you mean \"prestart\"?"},
    {"unknown hook", TASK("{command: a, lifecycle: {hook: main}}"), 4, 43,
     "web/app: lifecycle.hook: unknown hook \"main\" (use prestart, poststart or poststop)"},

    /* The file as a whole */
    {"empty file", "", 0, 0, "the file is empty; expected a map with \"groups\""},
    {"only comments", "# nothing yet\n", 0, 0, "the file is empty; expected a map with \"groups\""},
    {"a list at the top", "- a\n", 1, 1,
     "must be a map with \"groups\" at the top level, not a list"},
    {"a string at the top", "hello\n", 1, 1,
     "must be a map with \"groups\" at the top level, not a string"},
    {"missing groups", "shutdown_timeout: 1s\n", 1, 1,
     "missing \"groups\" (a map of group names to groups)"},
    {"empty groups", "groups: {}\n", 1, 9, "groups: must define at least one group"},
    {"null groups", "groups:\n", 1, 8, "groups: must define at least one group"},
    {"group without tasks", "groups:\n  web: {tasks: {}}\n", 2, 16,
     "group web: tasks: must define at least one task"},
    {"group with tasks missing", "groups:\n  web: {restart: {delay: 1s}}\n", 2, 8,
     "group web: missing \"tasks\" (a group needs at least one task)"},
    {"two documents", VALID_GROUPS "---\nfoo: 1\n", 2, 1,
     "only one YAML document is allowed; this file has more"},
    {"YAML syntax error", "groups:\n  web:\n    tasks: {app: [}\n", 3, 19,
     "YAML syntax error: did not find expected node content (while parsing a flow node)"},
    {"bad indentation", "groups:\n  web:\n    tasks:\n   app: {command: a}\n", 4, 4,
     "YAML syntax error: did not find expected key (while parsing a block mapping at line 2, "
     "column 3)"},
    {"undefined alias", "groups: *nope\n", 1, 9, "YAML syntax error: found undefined alias"},
    {"invalid UTF-8", "groups: \xff\n", 1, 9,
     "YAML syntax error: invalid leading UTF-8 octet (byte 0xff)"},
    {"tab indentation", "groups:\n\tweb: {}\n", 2, 1,
     "YAML syntax error: found character that cannot start any token (a tab: indent with "
     "spaces)"},
};

static void test_one_error_each(void **state)
{
	assert_error_cases(cases, ARRAY_SIZE(cases));
}

/* One input with several mistakes: every diagnostic it must give, sorted by
 * place and, at one place, in the order found. */
#define MAX_EXPECTED 8
struct several_case {
	const char *what;
	const char *yaml;
	struct {
		unsigned line, column;
		const char *message;
	} expected[MAX_EXPECTED]; /* up to the first without a message */
};

#define DELAY_5X(owner)                                                                            \
	owner ": restart.delay: invalid duration \"5x\": unknown unit (use ms, s, m or h)"

static const struct several_case several_cases[] = {
    {"several errors, sorted by line and column",
     "shutdown_timeout: 10\n"
     "groups:\n"
     "  web:\n"
     "    tasks:\n"
     "      b: {command: [], kill: {signal: NOPE}}\n"
     "      a: {comand: x, cwd: rel}\n"
     "  Bad: {tasks: {x: {command: y, restart: {policy: sometimes}}}}\n",
     {{1, 19,
       "shutdown_timeout: invalid duration \"10\": a number needs a unit (ms, s, m or h); "
       "only 0 goes without"},
      {5, 20, "web/b: command: must not be empty"},
      {5, 39, "web/b: kill.signal: unknown signal \"NOPE\""},
      {6, 11, "web/a: unknown key \"comand\"; did you mean \"command\"?"},
      {6, 27, "web/a: cwd: must be an absolute path, not \"rel\""},
      {7, 3, "groups: invalid group name \"Bad\": " NAME_RULE},
      {7, 51,
       "\"Bad\"/x: restart.policy: unknown restart policy \"sometimes\" (use always, "
       "on-failure or never)"}}},
    /* One node reached through an alias from the group and three tasks:
     * four errors at one place, kept in the order they were found. */
    {"same place, kept in the order found",
     "groups:\n"
     "  g:\n"
     "    restart: &r {delay: 5x}\n"
     "    tasks: {t1: {command: a, restart: *r}, t2: {command: a, restart: *r},"
     " t3: {command: a, restart: *r}}\n",
     {{3, 25, DELAY_5X("group g")},
      {3, 25, DELAY_5X("g/t1")},
      {3, 25, DELAY_5X("g/t2")},
      {3, 25, DELAY_5X("g/t3")}}},
};

static void test_several_errors_each(void **state)
{
	for (size_t c = 0; c < ARRAY_SIZE(several_cases); c++) {
		const struct several_case *row = &several_cases[c];
		struct config_diagnostics diagnostics = {0};
		struct config *config;
		size_t count = 0;

		while (count < MAX_EXPECTED && row->expected[count].message)
			count++;
		print_message("%s\n", row->what);
		config =
		    config_parse_buffer("test.yaml", row->yaml, strlen(row->yaml), &diagnostics);
		config_diagnostics_print(&diagnostics, "test.yaml", stderr);
		assert_null(config);
		assert_int_equal(diagnostics.count, count);
		for (size_t i = 0; i < count; i++) {
			assert_string_equal(diagnostics.items[i].message, row->expected[i].message);
			assert_int_equal(diagnostics.items[i].location.line, row->expected[i].line);
			assert_int_equal(diagnostics.items[i].location.column,
					 row->expected[i].column);
		}
		config_diagnostics_free(&diagnostics);
	}
}

static void test_long_text_is_cut_in_messages(void **state)
{
	char yaml[512];
	struct config_diagnostics diagnostics;
	struct config *config;
	const char *message;

	snprintf(yaml, sizeof(yaml), TASK("{command: a, cwd: %0200d}"), 7);
	config = config_parse_buffer("test.yaml", yaml, strlen(yaml), &diagnostics);
	assert_null(config);
	assert_int_equal(diagnostics.count, 1);
	message = diagnostics.items[0].message;
	/* One line, quoted, ending in an ellipsis inside the quotes. */
	assert_non_null(strstr(message, "web/app: cwd: must be an absolute path, not \"000"));
	assert_non_null(strstr(message, "...\""));
	assert_true(strlen(message) < 160);
	config_diagnostics_free(&diagnostics);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_error_each),
	    cmocka_unit_test(test_several_errors_each),
	    cmocka_unit_test(test_long_text_is_cut_in_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
