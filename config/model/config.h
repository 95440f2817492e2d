/* The validated configuration model: groups of tasks, immutable after load.
 *
 * Everything here is plain data. config_load() (config_load.h) builds it from
 * a YAML file; the supervisor only reads it. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/model/config_files.h"
#include "config/text/cron.h"
#include "config/yaml/diagnostics.h"

/* Nomad's six lifecycle stages. The order is the start order. */
enum lifecycle_stage {
	STAGE_PRESTART_EPHEMERAL,
	STAGE_PRESTART_SIDECAR,
	STAGE_MAIN,
	STAGE_POSTSTART_EPHEMERAL,
	STAGE_POSTSTART_SIDECAR,
	STAGE_POSTSTOP,
};
#define STAGE_COUNT 6

/* "prestart-ephemeral", "prestart-sidecar", "main", ... */
const char *lifecycle_stage_name(enum lifecycle_stage stage);
/* Where a stage starts in its group's lifecycle: 0 prestart, 1 main,
 * 2 poststart, 3 poststop (ephemeral and sidecar alike). */
int lifecycle_stage_step(enum lifecycle_stage stage);
bool lifecycle_stage_is_sidecar(enum lifecycle_stage stage);

enum restart_policy_kind {
	RESTART_ALWAYS,
	RESTART_ON_FAILURE,
	RESTART_NEVER,
};

enum restart_mode {
	RESTART_MODE_FAIL,  /* give up once attempts are spent in an interval */
	RESTART_MODE_DELAY, /* wait for the interval to end, then go on */
};

/* Exit statuses a config lists (restart.success_exit,
 * restart.no_restart_exit): exit codes 0..255 and signals 1..64. */
struct exit_status_set {
	uint64_t codes[4]; /* bit n of the set: code n */
	uint64_t signals;  /* bit n-1: signal n */
};

bool exit_status_set_has_code(const struct exit_status_set *set, int code);
bool exit_status_set_has_signal(const struct exit_status_set *set, int signal_number);

struct restart_policy {
	enum restart_policy_kind policy;
	/* restarts allowed within interval_ms; RESTART_ATTEMPTS_UNLIMITED
	 * (`attempts: unlimited`) never runs out */
	unsigned attempts;
	uint64_t interval_ms;
	uint64_t delay_ms;     /* before the first restart of an interval */
	uint64_t max_delay_ms; /* cap of the exponential backoff, >= delay_ms */
	enum restart_mode mode;
	/* Count as success besides 0 (systemd's SuccessExitStatus): a JVM's
	 * 143 after SIGTERM. */
	struct exit_status_set success_exit;
	/* Never restarted, whatever the policy (systemd's
	 * RestartPreventExitStatus): a failure among them fails for good. */
	struct exit_status_set no_restart_exit;
};

/* Resource limits of one task (config `resources:`, group defaults merged
 * field by field). A field that is not set is 0 / false / NULL. The loader
 * (config_resources.c) guarantees the ranges noted here; whether a
 * controller exists is for the runtime to find out. */
struct resources_config {
	uint64_t memory;         /* bytes, > 0; memory.max */
	uint64_t memory_high;    /* bytes, > 0, <= memory when both set; memory.high */
	bool has_memory_swap;    /* 0 is meaningful: no swap at all */
	uint64_t memory_swap;    /* bytes, memory.swap.max */
	uint32_t cpu_millicores; /* cores * 1000 (0.5 -> 500), 10..1024000; cpu.max */
	uint32_t cpu_weight;     /* 1..10000, cpu.weight */
	uint64_t pids;           /* 1..4194304 (PID_MAX_LIMIT), pids.max */
	char *cpuset;            /* "0-1,3": syntax checked, CPUs not; cpuset.cpus */
	uint32_t io_weight;      /* 1..10000, io.weight */
	bool optional;           /* a controller found nowhere: warn, not fail */
};

/* True when any limit is set (optional alone is not a limit). */
bool resources_config_has_limits(const struct resources_config *resources);

enum probe_kind {
	PROBE_NONE,
	PROBE_EXEC, /* a command that exits 0 */
	PROBE_TCP,  /* a TCP connect succeeds */
	PROBE_HTTP, /* a GET answers 200..399 */
	PROBE_UNIX, /* a connect to a Unix stream socket succeeds */
	PROBE_PATH, /* wait_for only: a path exists */
};

/* "exec", "tcp", "http", "unix"; "none". */
const char *probe_kind_name(enum probe_kind kind);

/* How corral asks about a task now and then (readiness or health probes):
 * a command it runs, or a connection it makes from its own loop (no
 * process: docs/config.md, "Probes"). The loader (config_probes.c)
 * guarantees, when kind is not PROBE_NONE: interval_ms > 0, 0 < timeout_ms
 * <= interval_ms, so runs of one probe never overlap; and the fields of
 * its kind. */
/* A probe target written with the instance number (`${CORRAL_INSTANCE}`,
 * `$((8000 + CORRAL_INSTANCE))`: config/text/instance_template.h), kept as
 * written so that each instance, and one `corral scale` adds, gets its
 * own (probe_config_for_instance). text NULL: none. */
struct probe_template {
	char *text;
	char *where; /* "web/app: readiness.http.port", for an instance's errors */
	struct source_location location;
};

struct probe_config {
	enum probe_kind kind;
	char **argv; /* PROBE_EXEC: NULL-terminated, argc >= 1 */
	size_t argc;
	/* PROBE_TCP, PROBE_HTTP: an IPv4 or IPv6 literal (default 127.0.0.1:
	 * in the task's own network namespace when it has one) and a port;
	 * for a wait_for target, also a host name (host_is_name). */
	char *host;
	uint16_t port;
	bool host_is_name; /* resolved at each run, without blocking (name_resolver.h) */
	/* PROBE_HTTP: the request path, "/..." (default "/"); PROBE_UNIX: the
	 * socket's path, absolute, in the task's root. */
	char *path;
	char **headers;       /* PROBE_HTTP: NULL-terminated "Name: value", or NULL */
	uint64_t interval_ms; /* between the start of one run and the next */
	uint64_t timeout_ms;  /* a run still going after this counts as failed */
	/* Compose's start_interval: the interval until the first pass; 0:
	 * interval_ms. Kubernetes' initialDelaySeconds: the first run waits
	 * this long after the probe starts. */
	uint64_t start_interval_ms;
	uint64_t initial_delay_ms;
	/* PROBE_EXEC: run inside the task (its namespaces, root, cgroup,
	 * user, capabilities, filter), as `corral exec` does, as Kubernetes
	 * runs exec probes; false: on the host, with the task's user, env and
	 * cwd. */
	bool inside;
	/* The fields above as written, when they name the instance: tcp's
	 * "ADDRESS:PORT" and http's port in `port_template`; http's path and
	 * unix's socket path in `path_template`. The fields hold instance
	 * 0's until probe_config_for_instance says another's. */
	struct probe_template port_template;
	struct probe_template path_template;
};

void probe_config_free(struct probe_config *probe);

/* The probe's targets for instance `instance`, from its templates (none:
 * nothing changes). 0, or -1 with `error` ("web/app: readiness.http.port:
 * must be a port number from 1 to 65535, not \"65536\" (instance 2)")
 * and its place in `location`. */
int probe_config_for_instance(struct probe_config *probe, unsigned instance, char *error,
			      size_t error_size, struct source_location *location);

enum readiness_kind {
	READINESS_NONE,           /* started means ready, as in Nomad */
	READINESS_NOTIFY_SYSTEMD, /* sd_notify READY=1 on NOTIFY_SOCKET */
	READINESS_NOTIFY_FD,      /* s6 style: a newline written to fd `fd` */
	READINESS_PROBE,          /* `probe` passes (exec, tcp, http, unix) */
	READINESS_LOG,            /* a line of its output matches `log_ready` */
};

/* How a task says it is ready (config `readiness:`). Only main tasks and
 * sidecars have a kind other than READINESS_NONE (the loader refuses the
 * others). */
struct readiness_config {
	enum readiness_kind kind;
	int fd; /* READINESS_NOTIFY_FD: the fd number in the task, 3..1023 */
	/* READINESS_PROBE: interval_ms from the config (default 1s), and
	 * timeout_ms = interval_ms: each run is cut at the interval. Unset
	 * (argv NULL, zeros) for the other kinds. */
	struct probe_config probe;
	/* Every kind: counted from the start of the run, the start fails if
	 * the task is not ready by then; 0: no limit. */
	uint64_t timeout_ms;
	/* READINESS_NOTIFY_SYSTEMD: once ready, WATCHDOG=1 is expected at
	 * least this often (systemd's WatchdogSec); 0: no watchdog. */
	uint64_t watchdog_ms;
	/* `continuous: true`, Kubernetes' readiness after the start: a probe
	 * goes on every interval once the task is ready, and `failures` in a
	 * row make it not ready until the next pass; with notify systemd,
	 * RELOADING=1 makes it not ready until READY=1. */
	bool continuous;
	unsigned failures; /* a probe with continuous: >= 1, default 3; else 0 */
	/* READINESS_LOG: extended regular expressions (regex(7)) over the
	 * task's lines, stdout and stderr, without their newline. A line
	 * matching `log_ready` makes it ready; with `continuous`, one
	 * matching `log_not_ready` makes it not ready until the next ready
	 * line. NULL for the other kinds (and log_not_ready without one). */
	char *log_ready;
	char *log_not_ready;
	/* A probe: until the task is first ready in a run, its failures
	 * within this long of the start are not said, unless the start fails
	 * (compose's start_period, Kubernetes' startupProbe). Default: the
	 * timeout, or 30s without one; 0: said from the first. */
	uint64_t start_period_ms;
};

/* Liveness (config `health:`): a task whose probe fails `failures` times in
 * a row is restarted. Main tasks and sidecars only. Defaults: interval 10s,
 * timeout 5s (or the interval when shorter), failures 3. */
struct health_config {
	struct probe_config probe; /* kind PROBE_NONE: no health check */
	unsigned failures;         /* >= 1 with a probe; 0 without */
};

/* Namespaces a task may get (config `isolation.namespaces`). */
enum isolation_namespace {
	ISOLATION_NS_PID = 1u << 0,
	ISOLATION_NS_MOUNT = 1u << 1,
	ISOLATION_NS_UTS = 1u << 2,
	ISOLATION_NS_IPC = 1u << 3,
	ISOLATION_NS_NET = 1u << 4, /* a new netns with only lo, up */
	ISOLATION_NS_CGROUP = 1u << 5,
	ISOLATION_NS_USER = 1u << 6, /* with isolation.user's uid/gid maps */
};

/* One mount in a task's mount namespace: from `isolation.mounts`, or
 * returned by a prestart hook (hooks/). Both go through one path
 * (isolation/mount_plan), so a hook's mount is exactly a configured one. */
struct mount_config {
	char *type;     /* NULL: a bind mount of `source`; else "tmpfs", ... */
	char *source;   /* bind: a host path (must exist); else the fs source, NULL: type */
	char *target;   /* absolute, resolved inside the task's root */
	char **options; /* NULL-terminated fs data options ("size=64m"), or NULL */
	bool readonly;
	unsigned long propagation; /* MS_PRIVATE|MS_SLAVE|MS_SHARED, maybe |MS_REC;
				    * 0: the default, rprivate */
	/* propagation: bidirectional (a bind): the mount is a peer of the
	 * host's source, so mounts the task makes below it reach the host
	 * and other tasks binding the same source, and the host's reach it. */
	bool bidirectional;
};

/* `schedule:`: a one-shot run at times (cron) and/or at an interval. */
enum schedule_concurrency {
	SCHEDULE_SKIP,    /* the previous run still goes: this one is skipped (k8s Forbid) */
	SCHEDULE_REPLACE, /* it is stopped, and the new one starts (k8s Replace) */
};
enum schedule_missed {
	SCHEDULE_MISSED_RUN_ONCE, /* times missed (a suspend, corral stopped): one run now */
	SCHEDULE_MISSED_SKIP,     /* nothing until the next time */
};
struct schedule_config {
	bool set;
	bool has_cron;
	struct cron cron;
	char *cron_text;   /* as written, for status */
	uint64_t every_ms; /* 0: none */
	enum schedule_concurrency concurrency;
	enum schedule_missed missed;
	char *time_zone; /* "Europe/Paris"; NULL: corral's own (TZ, /etc/localtime) */
};

/* `instances:` at most. */
#define TASK_INSTANCES_MAX 1000

/* How a reload replaces the running instances of a task written with
 * `instances:` (config `update:`: Kubernetes' Deployment strategy, Nomad's
 * update stanza). */
enum update_strategy {
	/* Each replaced instance restarts at once, all together: corral's way
	 * before the key (Kubernetes' Recreate, near enough). */
	UPDATE_RECREATE,
	/* max_unavailable at a time, in instance order, each new one ready
	 * before the next old one stops (RollingUpdate with maxSurge 0). */
	UPDATE_ROLLING,
};

struct update_config {
	enum update_strategy strategy;
	unsigned max_unavailable; /* UPDATE_ROLLING: 1..TASK_INSTANCES_MAX; else 0 */
	/* `min_ready`: during any rolling restart of the instances (a
	 * reload's, `corral restart --rolling`), the set counts as ready
	 * for /readyz, `status --ready` and READY=1 while at least this many
	 * are ready. Not written (min_ready_set false): the roll's instances
	 * less its max_unavailable, at least 1. */
	bool min_ready_set;
	unsigned min_ready; /* 0..TASK_INSTANCES_MAX */
};

/* Bidirectional mounts of one task, at most. */
#define MOUNT_BIDIRECTIONAL_MAX 8

void mount_configs_free(struct mount_config *mounts, size_t count);
/* `to` gets copies of `from`'s strings. */
void mount_config_copy(struct mount_config *to, const struct mount_config *from);

enum device_permission {
	DEVICE_READ = 1u << 0,  /* r */
	DEVICE_WRITE = 1u << 1, /* w */
	DEVICE_MKNOD = 1u << 2, /* m */
};

/* One device a task may use: bind-mounted at `target` and allowed by its
 * cgroup's device policy. From `isolation.devices` or a prestart hook. */
struct device_config {
	char *source;         /* the host's node, e.g. /dev/fuse */
	char *target;         /* in the task; NULL: same as source */
	unsigned permissions; /* DEVICE_* */
};

/* Where the device is in the task: target, or source when none. */
const char *device_config_target(const struct device_config *device);
void device_configs_free(struct device_config *devices, size_t count);
/* `to` gets copies of `from`'s strings (`to` may be `from`). */
void device_config_copy(struct device_config *to, const struct device_config *from);

/* One line of a uid_map or gid_map: `count` ids from `inside` map to ids
 * from `outside`. */
struct id_map_range {
	uint32_t inside;
	uint32_t outside;
	uint32_t count;
};

#define ID_MAP_RANGES_MAX 340 /* the kernel's limit */

enum network_mode {
	NETWORK_HOST,   /* corral's network namespace */
	NETWORK_NONE,   /* a new one with only lo, up */
	NETWORK_BRIDGE, /* + a veth on the group's bridge, eth0 in the task */
	NETWORK_GROUP,  /* one namespace for all tasks of the group (a pod) */
};

enum seccomp_profile_kind {
	SECCOMP_PROFILE_DEFAULT,    /* Docker-like deny list, EPERM */
	SECCOMP_PROFILE_UNCONFINED, /* no filter */
	SECCOMP_PROFILE_CUSTOM,
};

enum seccomp_action_kind {
	SECCOMP_ACTION_ALLOW,
	SECCOMP_ACTION_ERRNO, /* fail with EPERM */
	SECCOMP_ACTION_KILL,  /* kill the process */
	SECCOMP_ACTION_LOG,   /* allow, and log to the kernel log */
};

struct seccomp_config {
	enum seccomp_profile_kind kind;
	enum seccomp_action_kind default_action; /* CUSTOM: for syscalls not listed */
	char **allow; /* CUSTOM: NULL-terminated syscall names, or NULL */
	char **deny;  /* CUSTOM: fail with EPERM */
};

struct rlimit_config {
	int resource;  /* RLIMIT_NOFILE, ... */
	uint64_t soft; /* UINT64_MAX: unlimited */
	uint64_t hard;
};

#define ISOLATION_RLIMITS_MAX 16

/* Per-task isolation (config `isolation:`). `enabled` is false without the
 * map: the task then runs as before, with corral's capabilities and no
 * filter. With it, the defaults are an isolated task's (docs/config.md). */
struct isolation_config {
	bool enabled;
	unsigned namespaces;   /* ISOLATION_NS_* */
	char *hostname;        /* needs the uts namespace; NULL: keep */
	bool init;             /* pid namespace: a minimal reaper is PID 1
				* (default true); false: the command is */
	uint64_t capabilities; /* bit N: capability N kept (all sets) */
	struct seccomp_config seccomp;
	bool no_new_privileges; /* default true */
	/* rlimit_count entries, owned (room for ISOLATION_RLIMITS_MAX);
	 * NULL when none is set, as for most tasks: a table in every task
	 * was 384 bytes (measured: bench_supervisor --memory-only). */
	struct rlimit_config *rlimits;
	size_t rlimit_count;
	int umask; /* -1: corral's */

	char *rootfs; /* NULL: the host's / (in its own mount ns) */
	bool readonly_rootfs;
	struct mount_config *mounts; /* in order */
	size_t mount_count;
	struct device_config *devices;
	size_t device_count;
	struct id_map_range *uid_map; /* ISOLATION_NS_USER */
	size_t uid_map_count;
	struct id_map_range *gid_map;
	size_t gid_map_count;
	enum network_mode network;
};

/* The task gets a network namespace of its own (`namespaces: [net]`, or a
 * network mode other than host). */
void schedule_config_free(struct schedule_config *schedule);

/* How many of its mounts are bidirectional. */
size_t mounts_bidirectional_count(const struct isolation_config *isolation);

static inline bool isolation_has_own_network(const struct isolation_config *isolation)
{
	return isolation->enabled &&
	       ((isolation->namespaces & ISOLATION_NS_NET) || isolation->network != NETWORK_HOST);
}

/* What one start of a task adds to its configuration: the prestart hooks'
 * results (hooks/), applied by the same code as the configured values. */
struct start_additions {
	struct mount_config *mounts;
	size_t mount_count;
	struct device_config *devices;
	size_t device_count;
	char **env; /* NULL-terminated "NAME=VALUE", or NULL; overrides config env */
};

/* CDI devices of a task (config `cdi:`, group default merged field by
 * field). Names are checked for their syntax when loading; they are looked
 * up in the spec files each time the task starts (hooks/cdi.h). */
struct cdi_config {
	char **devices; /* NULL-terminated VENDOR/CLASS=NAME, each once; NULL: none */
	size_t device_count;
	char **spec_dirs; /* NULL-terminated absolute paths; NULL: /etc/cdi, /var/run/cdi */
};

/* When a hook runs in a task's life (docs/hooks.md), as in Nomad's task
 * runner. */
enum hook_stage {
	HOOK_STAGE_PRESTART,  /* before every start; may add env, mounts, devices */
	HOOK_STAGE_POSTSTART, /* after the exec succeeded */
	HOOK_STAGE_PREKILL,   /* before the kill signal of a stop or restart */
	HOOK_STAGE_EXITED,    /* after every exit of the task's process */
	HOOK_STAGE_STOP,      /* once the task is dead for good */
	HOOK_STAGE_UPDATE,    /* a reload changed the running task in place */
};
#define HOOK_STAGE_COUNT 6

/* "prestart", "poststart", "prekill", "exited", "stop", "update" */
const char *hook_stage_name(enum hook_stage stage);

/* An external hook (config `hooks:` of a task or group): a program that
 * reads one JSON request on stdin and writes one JSON response on stdout.
 * The loader guarantees: name valid and unique per stage within the task,
 * argc >= 1, timeout_ms > 0. */
struct hook_config {
	char *name;
	enum hook_stage stage;
	char **argv; /* NULL-terminated */
	size_t argc;
	uint64_t timeout_ms;
	struct source_location location;
};

#define CONFIG_DEFAULT_HOOK_TIMEOUT_MS 10000
#define CONFIG_DEFAULT_LOG_MAX_SIZE    (10ull * 1024 * 1024)
#define CONFIG_DEFAULT_LOG_KEEP        5

void hook_configs_free(struct hook_config *hooks, size_t count);
/* `to` gets copies of `from`'s strings. */
void hook_config_copy(struct hook_config *to, const struct hook_config *from);

/* What a task waits for in another (config `after:`), docs/config.md. */
enum dependency_condition {
	DEPENDS_STARTED,   /* its exec succeeded */
	DEPENDS_READY,     /* its readiness passed (started, without readiness) */
	DEPENDS_HEALTHY,   /* its health probe passed since its last start */
	DEPENDS_COMPLETED, /* it exited with success */
	DEPENDS_EXITED,    /* it ended, whatever the code */
};

/* "started", "ready", "healthy", "completed", "exited". */
const char *dependency_condition_name(enum dependency_condition condition);
/* How status says what a task waits for: "to start", "to be ready", ... */
const char *dependency_condition_wait(enum dependency_condition condition);
/* What a wait that ran out says of it: "not ready", "not completed". */
const char *dependency_condition_failed(enum dependency_condition condition);

/* A target outside the config that a task waits for before it starts
 * (config `wait_for:`; compose's `depends_on` cannot name one, #2868): a
 * TCP port or an HTTP URL, of another host as a rule, or a path that must
 * exist. Checked from corral's own namespaces every interval while the
 * task waits; it may start once every target passed. */
struct wait_target {
	/* PROBE_TCP, PROBE_HTTP (host: an address or a name) or PROBE_PATH;
	 * each check is cut at the interval. */
	struct probe_config probe;
	/* From when the wait began: past it, not passed, the start fails. 0:
	 * as long as it takes. */
	uint64_t timeout_ms;
	char *text;   /* "tcp db:5432", "http http://auth/healthz", "path /run/x" */
	size_t index; /* in the task's list, for messages: wait_for[N] */
};

/* One edge of the dependency graph. The loader (config_dependencies.c)
 * resolves the name and guarantees: the target exists and is not the task
 * itself, each target once per task, no cycle, and a condition that the
 * stage gates and the target's probes allow. */
struct task_dependency {
	char *name;         /* as written: "redis" or "cache/memcached" */
	size_t group_index; /* the target, in config->groups */
	size_t task_index;  /* in that group's tasks */
	enum dependency_condition condition;
	bool condition_default; /* not written: chosen by the target's kind */
	bool restart;           /* stop with the target's restarts, start again after */
	bool implicit;          /* made by the group's `order: sequential` */
	/* `timeout:`: how long the dependent waits for the condition, from
	 * when its wait began, before its start fails (or, optional, goes
	 * ahead); 0 waits for as long as it takes. */
	uint64_t timeout_ms;
	/* compose's `required: false`: a target missing from the config is
	 * dropped at load, and one that is dead (never started, failed) or
	 * not there within the timeout does not hold the dependent back. */
	bool optional;
	struct source_location location;           /* of the name */
	struct source_location condition_location; /* of the condition, else the name */
};

/* What corral does with a task's lines when its stdout cannot take them
 * (config `log.mode`, Docker's log mode). */
enum log_mode {
	LOG_MODE_BLOCKING,     /* the task waits in write(): nothing is lost */
	LOG_MODE_NON_BLOCKING, /* the lines are dropped from stdout, and counted */
};

/* Who gets a task's kill signal (`kill.mode`, systemd's KillMode=). At the
 * kill timeout, and when the main process is gone, everything left in the
 * task's cgroup is SIGKILLed in either mode. */
enum kill_mode {
	/* The main process alone, as Docker and Kubernetes signal PID 1: a
	 * program that passes it on to its children (a shell that execs, a
	 * supervisor) stops them its own way. The default, and corral's
	 * behaviour before the key existed. */
	KILL_MODE_MIXED,
	/* Every process of the task's cgroup (supervisord's stopasgroup):
	 * a `sh -c` wrapper and the program behind it both get it. */
	KILL_MODE_CONTROL_GROUP,
};

/* What a change to watched files does (config `watch:`). */
enum watch_action {
	WATCH_ACTION_RESTART, /* the task restarts, as `corral restart TASK` */
	WATCH_ACTION_SIGNAL,  /* a signal to its main process (a reload of its own) */
	WATCH_ACTION_RELOAD,  /* corral reads its config again, as `corral reload` */
};

/* "restart", "signal", "reload". */
const char *watch_action_name(enum watch_action action);

/* One entry of a task's `watch:` list (docs/config.md, "Watching files";
 * compose's develop.watch, pm2's watch). The loader (config_watch.c)
 * guarantees: path_count >= 1; each path absolute and cleaned (no ".",
 * "..", "//" or trailing "/"), not "/", with glob characters (* ? [) in
 * its last part only and its brackets closed. */
struct watch_config {
	char **paths; /* NULL-terminated */
	size_t path_count;
	enum watch_action action;
	int signal;           /* WATCH_ACTION_SIGNAL: its number */
	uint64_t debounce_ms; /* quiet this long after the last change, then act */
};

#define CONFIG_DEFAULT_WATCH_DEBOUNCE_MS 1000

void watch_configs_free(struct watch_config *watches, size_t count);

struct task_config {
	char *name;      /* "app", or "app@1" for an instance */
	char *full_name; /* "web/app": how every message names the task */
	struct source_location location;
	/* `instances: N` (supervisord's numprocs): N tasks "NAME@0" ...
	 * "NAME@N-1", each with instance_of "NAME" and its number; NULL for a
	 * task written once. */
	char *instance_of;
	unsigned instance;
	unsigned instances;          /* as written; 0: not written, a task of its own */
	struct update_config update; /* `update:`; only with instances */
	struct schedule_config schedule;

	char **argv; /* NULL-terminated; argv[0] is the program */
	size_t argc;
	char **env; /* NULL-terminated "NAME=VALUE", added to corral's own */
	size_t env_count;
	char *cwd; /* NULL: corral's working directory */
	/* `oom_score_adj:` (compose's, systemd's OOMScoreAdjust=), from -1000
	 * to 1000; not set: the value corral started with
	 * (base/oom_protection.h). */
	bool oom_score_adj_set;
	int oom_score_adj;
	char *user; /* NULL: corral's user; else "uid[:gid]" or a name */
	/* NULL-terminated names or gids ("44"), added to the user's groups;
	 * NULL: none written */
	char **groups;
	size_t group_count;

	enum lifecycle_stage stage;
	struct restart_policy restart;
	int kill_signal;
	enum kill_mode kill_mode; /* in kill_signal's padding */
	uint64_t kill_timeout_ms;
	struct resources_config resources;
	/* `readiness:` and `health:`, allocated only where written: most
	 * tasks have neither, and the two take 232 bytes (docs/benchmarks-history.md,
	 * the third memory pass). Read them through readiness_of() and health_of(). */
	struct readiness_config *readiness;
	struct health_config *health;
	struct isolation_config isolation;
	struct cdi_config cdi;
	bool task_dirs; /* config `task_dirs`: alloc/, local/, secrets/ (hooks/task_dirs.h) */
	/* config `autostart: false`: it starts only when asked (`corral
	 * start`), never by itself nor with its group. */
	bool manual_start;
	enum log_mode log_mode;
	uint64_t log_history; /* bytes of recent output kept for `corral logs`, 1K..64M */
	/* log.dir: its lines also go to DIR/GROUP/TASK.log, rotated at
	 * log_max_size into .1 ... .log_keep; NULL: no file. */
	char *log_dir;
	uint64_t log_max_size;
	unsigned log_keep;
	/* log.shared_dir: DIR or DIR/GROUP may be owned by another user or
	 * writable by group or others (a task's user could plant links
	 * there). Off: such a directory is refused. Either way the file is
	 * opened without following links. */
	bool log_shared_dir;
	/* log.rate_limit: bytes a second read from the task's output; past it
	 * the task waits. 0: no limit. */
	uint64_t log_rate_limit;
	/* log.streams: separate: stderr has a pipe of its own and every line
	 * says which stream it came from; else both share one (the default). */
	bool log_separate_streams;
	/* The group's hooks, then the task's own; one of the task's with the
	 * name and stage of a group hook replaces it in place. */
	struct hook_config *hooks;
	size_t hook_count;
	/* Config `after:`, then the edges `order: sequential` adds; NULL
	 * when it waits for nobody. */
	struct task_dependency *after;
	size_t after_count;
	/* Config `wait_for:`, in its order; NULL when none. */
	struct wait_target *wait_for;
	size_t wait_for_count;
	/* Config `control:`: the control requests the task may make
	 * (enum control_right bits); 0, the default, for none. */
	unsigned control_rights;
	/* Config `watch:`: files whose changes restart or signal it, or
	 * reload corral; NULL when none. */
	struct watch_config *watches;
	size_t watch_count;
};

/* probe_config_for_instance for a task's readiness and health probes. */
int task_config_probes_for_instance(struct task_config *task, unsigned instance, char *error,
				    size_t error_size, struct source_location *location);

/* The task's readiness; without `readiness:`, READINESS_NONE. */
static inline const struct readiness_config *readiness_of(const struct task_config *task)
{
	static const struct readiness_config none;
	return task->readiness ? task->readiness : &none;
}

/* The task's liveness check; without `health:`, a probe of kind PROBE_NONE. */
static inline const struct health_config *health_of(const struct task_config *task)
{
	static const struct health_config none;
	return task->health ? task->health : &none;
}

/* What a task may ask of corral's control socket (a task's `control:`
 * list): one right per kind of request, named as the request is. A task
 * is never an operator: without a right listed here every request from
 * inside it is refused, and a task with a mount namespace does not even
 * see the socket. */
enum control_right {
	CONTROL_RIGHT_STATUS = 1u << 0,
	CONTROL_RIGHT_LOGS = 1u << 1,
	CONTROL_RIGHT_EVENTS = 1u << 2,
	CONTROL_RIGHT_INSPECT = 1u << 3,
	CONTROL_RIGHT_START = 1u << 4,
	CONTROL_RIGHT_STOP = 1u << 5,
	CONTROL_RIGHT_RESTART = 1u << 6,
	CONTROL_RIGHT_SIGNAL = 1u << 7,
	CONTROL_RIGHT_RELOAD = 1u << 8,
	CONTROL_RIGHT_EXEC = 1u << 9,
	CONTROL_RIGHT_SHUTDOWN = 1u << 10,
	CONTROL_RIGHT_SCALE = 1u << 11,
	/* `corral upgrade` of corral's own binary, and SIGUSR2 from the task
	 * (a task may not name another binary). */
	CONTROL_RIGHT_UPGRADE = 1u << 12,
};
#define CONTROL_RIGHT_COUNT 13

/* "status", "logs", ... for the right of bit `index`; NULL past the last. */
const char *control_right_name(unsigned index);

/* "status, logs", or "none", into `buffer`. */
void control_rights_describe(unsigned rights, char *buffer, size_t size);

/* A group's bridge (config `network:` of a group), for tasks with
 * network mode bridge. */
struct group_network_config {
	char *bridge;           /* NULL: no task of the group uses a bridge */
	uint32_t subnet;        /* IPv4, host byte order, the network address */
	unsigned prefix_length; /* 8..30 */
};

/* What a group does when one of its tasks (poststop tasks aside) fails
 * for good (config `on_failure:`). */
enum group_failure_action {
	GROUP_ON_FAILURE_STOP,    /* stop the group; corral exits with its code */
	GROUP_ON_FAILURE_RESTART, /* restart every task in lifecycle order */
	GROUP_ON_FAILURE_IGNORE,  /* report it; the other tasks go on */
	/* stop the group, and corral with every other group: it exits with
	 * the task's code (s6-overlay's, a container's "essential" task) */
	GROUP_ON_FAILURE_EXIT,
};

/* "stop", "restart", "ignore", "exit". */
const char *group_failure_action_name(enum group_failure_action action);

struct group_failure_policy {
	enum group_failure_action action;
	/* GROUP_ON_FAILURE_RESTART: restarts allowed within interval_ms,
	 * then the group stops as with GROUP_ON_FAILURE_STOP. */
	unsigned attempts;
	uint64_t interval_ms;
};

struct group_config {
	char *name;
	struct group_network_config network;
	struct source_location location;
	/* `order: sequential`: prestart tasks one after another, in file
	 * order, as Kubernetes starts init containers and sidecars. */
	bool sequential;
	struct group_failure_policy on_failure;
	struct task_config *tasks; /* in file order */
	size_t task_count;
};

/* How task lines look on corral's stdout (config `log_format`, `corral
 * run --log-format`). */
enum log_format {
	LOG_FORMAT_PLAIN,       /* web/app | line */
	LOG_FORMAT_TIMESTAMPED, /* 2026-11-24T10:00:00.123Z web/app | line */
	LOG_FORMAT_JSON,        /* one JSON object per line */
};

/* "plain", "timestamped", "json"; -1 for anything else. */
int log_format_parse(const char *text);

/* Config `http`: where corral's read-only HTTP endpoint listens
 * (docs/http.md); off without the key. */
enum http_listen_kind {
	HTTP_LISTEN_OFF,
	HTTP_LISTEN_INET,  /* "127.0.0.1:9090", "0.0.0.0:9090" */
	HTTP_LISTEN_INET6, /* "[::1]:9090", "[::]:9090" */
	HTTP_LISTEN_UNIX,  /* "/run/corral/http.sock" */
};

struct http_config {
	enum http_listen_kind kind;
	char *listen;              /* as written; the socket's path for HTTP_LISTEN_UNIX */
	unsigned char address[16]; /* network order: 4 bytes for INET, 16 for INET6 */
	uint16_t port;
	/* http.idle_timeout: a kept-alive connection with no request for this
	 * long is closed. */
	uint64_t idle_timeout_ms;
};

/* Whether two `http` settings listen on the same address and port, or
 * socket path, however written: a reload that changes nothing there keeps
 * the listening socket. */
bool http_listen_equal(const struct http_config *a, const struct http_config *b);
/* The same, and the same idle_timeout. */
bool http_config_equal(const struct http_config *a, const struct http_config *b);

/* Config `notify.ready`: when corral tells its own parent READY=1 (the
 * NOTIFY_SOCKET of systemd's Type=notify, podman's --sdnotify=container;
 * supervisor/parent/parent_notify.h). */
enum notify_ready {
	/* Every main task and sidecar is ready or at rest, as `corral status
	 * --ready` says (supervisor/lifecycle/ready_rule.h). */
	NOTIFY_READY_ALL,
	/* corral is up: its groups are started and its socket listens. */
	NOTIFY_READY_STARTED,
	/* As ALL, over the tasks of notify_ready_groups only. */
	NOTIFY_READY_GROUPS,
};

/* An instance set whose count `corral scale` changed: what the files do
 * not say, and `corral upgrade` hands over with their bytes. */
struct config_scaled_set {
	char *group;
	char *task; /* the name written with `instances:` */
	unsigned count;
};

struct config {
	char *path;
	/* The paths it was loaded from (files and directories, as given),
	 * which a reload reads again; none for a config from a buffer. */
	char **sources;
	size_t source_count;
	/* The bytes of every file it was read from (config_files.h), for
	 * `corral upgrade`. */
	struct config_files files;
	enum log_format log_format;
	/* Hook processes running at once, all tasks together (config
	 * `hook_concurrency`); 0: four per CPU, at least 8. */
	unsigned hook_concurrency;
	uint64_t shutdown_timeout_ms;
	char *socket_path;       /* NULL: the default, see docs/control-protocol.md */
	char *control_group;     /* NULL: only root and corral's own uid may control */
	bool control_group_exec; /* control.exec: its members may `corral exec` too */
	/* control.idle_timeout: a connection that sends no whole request for
	 * this long (and follows no stream) is closed. */
	uint64_t control_idle_timeout_ms;
	/* control.connections_per_user: connections one user other than root
	 * and corral's own may hold at once. */
	unsigned control_connections_per_user;
	char *task_dirs_root; /* NULL: /run/corral/tasks (hooks/task_dirs.h) */
	struct http_config http;
	/* Where corral writes why it exited (Kubernetes' terminationMessagePath,
	 * supervisor/pid1/termination_log.h): an absolute path; "" for
	 * nowhere; NULL when not written: /dev/termination-log, if it is
	 * there and writable. */
	char *termination_log;
	enum notify_ready notify_ready;
	char **notify_ready_groups; /* NOTIFY_READY_GROUPS: the names, owned */
	size_t notify_ready_group_count;
	/* The profiles it was loaded with (`corral run --profile`), which a
	 * reload keeps: NULL-terminated, NULL for none. Groups and tasks in
	 * none of them are not in the model at all. */
	char **profiles;
	/* Those of `profiles` that no group or task lists (a typo, as a
	 * rule): NULL-terminated, NULL for none. The CLI warns of each. */
	char **profiles_unlisted;
	struct group_config *groups; /* in file order */
	size_t group_count;
	/* The sets `corral scale` changed since the files were read (a
	 * reload reads them again and goes back to their counts): `files`
	 * and these give this config. None for a config as read. */
	struct config_scaled_set *scaled;
	size_t scaled_count;
};

/* Built-in defaults, documented in docs/config.md. */
#define CONFIG_DEFAULT_SHUTDOWN_TIMEOUT_MS          30000
#define CONFIG_DEFAULT_KILL_TIMEOUT_MS              10000
#define CONFIG_DEFAULT_RESTART_ATTEMPTS             3
#define RESTART_ATTEMPTS_UNLIMITED                  UINT_MAX
#define CONFIG_DEFAULT_RESTART_INTERVAL_MS          60000
#define CONFIG_DEFAULT_RESTART_DELAY_MS             1000
#define CONFIG_DEFAULT_RESTART_MAX_DELAY_MS         30000
#define CONFIG_DEFAULT_LOG_HISTORY                  (16 * 1024)
#define CONFIG_DEFAULT_GROUP_RESTART_ATTEMPTS       3
#define CONFIG_DEFAULT_GROUP_RESTART_INTERVAL_MS    600000
#define CONFIG_DEFAULT_CONTROL_IDLE_TIMEOUT_MS      60000
#define CONFIG_DEFAULT_CONTROL_CONNECTIONS_PER_USER 32
#define CONFIG_DEFAULT_HTTP_IDLE_TIMEOUT_MS         60000
/* The bounds of control.connections_per_user: at least one, and fewer
 * than the socket's connections in all (supervisor/control/control_admission.h). */
#define CONFIG_CONTROL_CONNECTIONS_PER_USER_MAX 512

/* The restart policy a task of this stage gets when nothing is configured:
 * always for main tasks and sidecars, on-failure for ephemeral prestart and
 * poststart tasks, never for poststop tasks. */
struct restart_policy restart_policy_default(enum lifecycle_stage stage);

void config_free(struct config *config);
