/* What the pieces of the loader share: config_load.c walks the file and its
 * groups, config_task.c reads one task, config_restart.c and
 * config_resources.c read restart and resources fields and merge a group's
 * defaults into each task, config_probes.c reads a task's readiness and
 * health probes, config_isolation.c reads and merges `isolation` with the
 * help of config_capabilities.c, config_seccomp.c, config_rlimits.c,
 * config_mounts.c, config_user_namespace.c and config_devices.c (and
 * config_network_parse.h), config_cdi.c reads `cdi`, config_hooks.c
 * `hooks`, config_dependencies.c `after` and `order`, config_control.c
 * the top level's `control` map and a task's `control` list,
 * config_notify.c the top level's `notify` map, and config_http.c the
 * top level's `http` map. */
#pragma once

#include <stdbool.h>

#include "config/model/config.h"
#include "config/yaml/yaml_walk.h"

/* The restart fields written in one place (a group or a task): which ones
 * are set, so that merging goes field by field. */
struct restart_fields {
	bool has_policy, has_attempts, has_interval, has_delay, has_max_delay, has_mode,
	    has_success_exit, has_no_restart_exit;
	struct restart_policy values;      /* meaningful where set */
	const yaml_node_t *max_delay_node; /* for a max_delay shorter than delay */
};

/* Reads a `restart` map; reports and skips fields that are wrong. */
void restart_fields_parse(struct load_context *context, const yaml_node_t *node,
			  const struct where *where, struct restart_fields *out);

/* Checks a group's own fields against each other (max_delay >= delay), so
 * that a mistake there is reported once, not once per task. */
void restart_fields_check_group(struct load_context *context, const struct restart_fields *group,
				const struct where *where);

/* A list of exit codes (0..255) and signal names, as in
 * restart.success_exit; false after reporting a wrong item. */
bool exit_status_list_parse(struct load_context *context, const yaml_node_t *node,
			    const struct where *where, struct exit_status_set *out);

/* A group's `on_failure:`: "stop", "restart", "ignore", or a map of
 * action, attempts and interval. `out` holds the defaults on entry. */
void on_failure_parse(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct group_failure_policy *out);

/* A `log` map (mode, history); a field left out keeps its value as it
 * is, so a task keeps its group's. */
/* A `log` map's values, a group's defaults or a task's own. */
struct log_fields {
	enum log_mode mode;
	uint64_t history;
	const char *dir; /* in the YAML document: valid while it is */
	uint64_t max_size;
	unsigned keep;
	uint64_t rate_limit;
	bool separate_streams;
	bool shared_dir;
};

void log_fields_parse(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct log_fields *fields);

/* `WHERE: unknown signal "x"; did you mean "SIGY"?` */
void report_unknown_signal(struct load_context *context, const yaml_node_t *node,
			   const struct where *where, const char *text);

/* The stage default, overridden by the group's fields, then by the task's. */
struct restart_policy restart_policy_merge(struct load_context *context, enum lifecycle_stage stage,
					   const struct restart_fields *group,
					   const char *group_owner,
					   const struct restart_fields *task,
					   const struct where *task_where);

/* The resources fields written in one place (a group or a task): which
 * ones are set, so that merging goes field by field. */
struct resources_fields {
	bool has_memory, has_memory_high, has_memory_swap, has_cpu, has_cpu_weight, has_pids,
	    has_cpuset, has_io_weight, has_optional;
	struct resources_config values; /* meaningful where set; values.cpuset unused */
	const char *cpuset;             /* the document's text: no copy until a task owns one */
	/* For memory_high above memory, which can come from two places. */
	const yaml_node_t *memory_node, *memory_high_node;
};

/* Reads a `resources` map; reports and skips fields that are wrong. Pure:
 * whether a controller exists is for the runtime to find out. */
void resources_fields_parse(struct load_context *context, const yaml_node_t *node,
			    const struct where *where, struct resources_fields *out);

/* Checks a group's own fields against each other (memory_high <= memory),
 * so that a mistake there is reported once, not once per task. */
void resources_fields_check_group(struct load_context *context,
				  const struct resources_fields *group, const struct where *where);

/* The group's fields, overridden by the task's. The result's cpuset is a
 * copy the task owns. */
struct resources_config resources_merge(struct load_context *context,
					const struct resources_fields *group,
					const char *group_owner,
					const struct resources_fields *task,
					const struct where *task_where);

/* A list of strings into a NULL-terminated vector, read as `command` is:
 * not empty, each word a string, the program not empty. Only valid words
 * are stored; each error is reported. */
void command_list_parse(struct load_context *context, const yaml_node_t *node,
			const struct where *where, char ***argv, size_t *argc);

/* Reads a task's `readiness` map into `out`. Refused (reported) for a task
 * of a stage that does not keep running: ephemeral and poststop tasks. */
/* A probe's target: one of `probe_target_keys` in `fields` (exec, tcp,
 * http, unix), parsed into `probe` with its kind (config_probe_targets.c).
 * false when none is there, or two are (reported). */
extern const char *const probe_target_keys[];
bool probe_target_parse(struct load_context *context, const yaml_node_t *node,
			const struct map_entries *fields, const struct where *where,
			struct probe_config *probe);
/* `exec`: the probe command, a list. */
void probe_command_parse(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, struct probe_config *probe);

/* `interpolate: true`: ${NAME} and the rest replaced in every string value
 * of the document (config_variables.c), errors with their place. */
void config_interpolate_document(struct load_context *context, yaml_document_t *document);

void readiness_parse(struct load_context *context, const yaml_node_t *node,
		     const struct where *where, enum lifecycle_stage stage,
		     struct readiness_config *out);

/* Reads a task's `health` map into `out`, with the same stage rule. */
void health_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		  enum lifecycle_stage stage, struct health_config *out);

/* `rootfs`, `readonly_rootfs` and `mounts` written in one place (a group
 * or a task), read by config_mounts.c. Owns what it holds. */
struct root_fields {
	bool has_rootfs, has_readonly_rootfs;
	char *rootfs;
	bool readonly_rootfs;
	struct mount_config *mounts; /* the valid ones, in order */
	size_t mount_count;
	/* Set when written, valid or not: for "needs the mount namespace". */
	const yaml_node_t *rootfs_node, *readonly_rootfs_node, *mounts_node;
	/* The first `propagation: bidirectional`, and which mount has it:
	 * refused with a user namespace. */
	const yaml_node_t *bidirectional_node;
	size_t bidirectional_index;
};

/* Reads the three keys from an `isolation` map's entries. The checks that
 * touch the file system (rootfs is a directory, a bind's source exists)
 * are made here, at load. */
void root_fields_parse(struct load_context *context, const struct map_entries *entries,
		       const struct where *where, struct root_fields *out);

/* Each of the three fields of `fields` set without the mount namespace,
 * reported at its node for `owner`; `set_in` is "" or " (set in group X)". */
void root_fields_check(struct load_context *context, const char *owner,
		       const struct root_fields *fields, const char *set_in, unsigned namespaces);

/* Into the task's model: rootfs and readonly_rootfs from the task when it
 * wrote them, else the group's; mounts are the group's followed by the
 * task's. Copies. */
void root_fields_merge(struct isolation_config *merged, const struct root_fields *group,
		       const struct root_fields *task);

void root_fields_free(struct root_fields *fields);

/* The isolation fields written in one place (a group or a task): which
 * ones are set, so that merging goes field by field. `values` owns its
 * hostname, seccomp lists and devices: isolation_fields_free() releases
 * them. */
struct isolation_fields {
	bool present; /* `isolation` was written, even as {} */
	bool has_namespaces, has_hostname, has_init, has_capabilities, has_seccomp,
	    has_no_new_privileges, has_umask, has_user, has_network;
	/* Meaningful where set. rlimits holds the ones written (merged one
	 * resource at a time). */
	struct isolation_config values;
	/* For the checks between fields, which can come from two places;
	 * set when written, valid or not. */
	const yaml_node_t *namespaces_node, *hostname_node, *init_node, *no_new_privileges_node;
	struct root_fields root; /* rootfs, readonly_rootfs, mounts */
	/* `user` in namespaces, and the `user` map (its uid/gid maps). */
	const yaml_node_t *user_namespace_node, *user_node;
	const yaml_node_t *network_node; /* isolation.network.mode (config_network.c) */
};

/* Reads an `isolation` map; reports and skips fields that are wrong. Pure
 * apart from name lookups in libseccomp and a stat(2) of each device. */
void isolation_fields_parse(struct load_context *context, const yaml_node_t *node,
			    const struct where *where, struct isolation_fields *out);

/* Checks a group's own fields against each other (hostname needs uts, init:
 * false needs pid), so that a mistake there is reported once. */
void isolation_fields_check_group(struct load_context *context,
				  const struct isolation_fields *group, const struct where *where);

/* The defaults of an isolated task, overridden by the group's fields, then
 * by the task's; not enabled when neither wrote `isolation`. The result
 * owns copies of everything. */
struct isolation_config isolation_merge(struct load_context *context,
					const struct isolation_fields *group,
					const char *group_owner,
					const struct isolation_fields *task,
					const struct where *task_where);

void isolation_fields_free(struct isolation_fields *fields);

/* `isolation.capabilities`: {drop: [...], add: [...]} applied to Docker's
 * default set; the result as a mask (bit N: capability N). */
bool capabilities_parse(struct load_context *context, const yaml_node_t *node,
			const struct where *where, uint64_t *out);

/* The capabilities an isolated task keeps when nothing is written:
 * Docker's default set. */
uint64_t capabilities_default(void);

/* `isolation.seccomp`: default, unconfined or a custom map. The lists in
 * `out` (the valid names only) are the caller's to free, also on failure. */
bool seccomp_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		   struct seccomp_config *out);

/* `isolation.rlimits`: a map of rlimit names to values, into `*out` (made
 * with room for ISOLATION_RLIMITS_MAX, one per resource; NULL when none is
 * valid; the caller frees it) and `count`. */
void rlimits_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		   struct rlimit_config **out, size_t *count);

/* The `cdi` fields written in one place (a group or a task). The vectors
 * hold the valid entries only and are released by cdi_fields_free(). */
struct cdi_fields {
	bool has_devices, has_spec_dirs;
	char **devices;
	size_t device_count;
	char **spec_dirs;
	const yaml_node_t *devices_node; /* for a merged task without a mount namespace */
};

/* Reads a `cdi` map ({devices: [...], spec_dirs: [...]}); each device name
 * is checked against CDI's rules for VENDOR/CLASS=NAME. */
void cdi_fields_parse(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct cdi_fields *out);

/* The group's fields, overridden by the task's; copies the task owns.
 * Devices need the task's mount namespace (`namespaces`, merged): they are
 * bind-mounted inside it. */
struct cdi_config cdi_merge(struct load_context *context, const struct cdi_fields *group,
			    const char *group_owner, const struct cdi_fields *task,
			    const char *task_owner, unsigned namespaces);

void cdi_fields_free(struct cdi_fields *fields);

/* The hooks written in one place (a group or a task), in order. */
struct hook_list {
	struct hook_config *items;
	size_t count;
};

/* Reads a `hooks` list; reports and skips hooks that are wrong, and a
 * second hook of the same name for the same stage. */
void hooks_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		 struct hook_list *out);

/* The group's hooks, then the task's; a task hook with the name and stage
 * of a group hook replaces it in place. The result owns copies. */
void hooks_merge(const struct hook_list *group, const struct hook_list *task,
		 struct hook_config **out, size_t *count);

void hook_list_free(struct hook_list *list);

/* `isolation.user`: {uid_map, gid_map}, each lines of INSIDE OUTSIDE
 * COUNT, into out->uid_map and out->gid_map (allocated; the caller frees
 * them, also on failure). True when both are valid. */
bool user_namespace_parse(struct load_context *context, const yaml_node_t *node,
			  const struct where *where, struct isolation_config *out);

/* `isolation.devices`: a list of {path, target, permissions} (or a path
 * alone), each path a device node of this machine (stat at load). `out`
 * and `count` are the valid entries, the caller's to free. */
void devices_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		   struct device_config **out, size_t *count);

/* The group's devices then the task's into `merged` (copies it owns); a
 * task's entry replaces the group's at the same target. */
void devices_merge(struct isolation_config *merged, const struct isolation_config *group,
		   const struct isolation_config *task);

/* Reads a task's `after:` (config_dependencies.c): a list of task names,
 * or a map of names to a condition or {condition, restart}. Names stay as
 * written until dependencies_resolve(). */
void dependencies_parse(struct load_context *context, const yaml_node_t *node,
			const struct where *where, struct task_config *task);

/* An IPv4 or IPv6 address literal (config_probe_targets.c). */
bool host_is_address(const char *host);

/* `wait_for:`, a list of outside targets (config_wait_for.c). */
void wait_for_parse(struct load_context *context, const yaml_node_t *node,
		    const struct where *where, struct task_config *task);

/* Once every group is read: adds the edges of `order: sequential`, resolves
 * every name ("task" in the same group, "group/task"), gives unwritten
 * conditions their default (completed for a one-shot, ready otherwise),
 * and reports what can never hold: unknown names (with the nearest one),
 * a wait on a later stage of the same group, completed on a sidecar,
 * healthy without a health probe, and every cycle ("a -> b -> a"). */
void dependencies_resolve(struct load_context *context, struct config *config);

/* What a group hands down to each of its tasks. */
struct group_defaults {
	const char *owner; /* "group web": how the group's own messages start */
	struct restart_fields restart;
	struct resources_fields resources;
	struct isolation_fields isolation;
	struct cdi_fields cdi;
	bool task_dirs;        /* false unless the group writes `task_dirs: true` */
	struct log_fields log; /* blocking, CONFIG_DEFAULT_LOG_HISTORY, no file unless written */
	struct hook_list hooks;
	const struct group_network_config *network; /* the group's bridge, if any */
	/* The group's env_file, read once: NAME=VALUE, owned. */
	char **env_file_entries;
	size_t env_file_count;
};

/* `env_file:` of a task or group: every NAME=VALUE of its files, in order,
 * into *entries (owned by the caller; NULL when none). */
void env_files_parse(struct load_context *context, const yaml_node_t *node,
		     const struct where *where, char ***entries, size_t *count);

/* Reads one task of a group into `task`, whose name, full_name and location
 * the caller set. `owner` is how messages name it ("web/app"). */
void task_parse(struct load_context *context, const yaml_node_t *node, const char *owner,
		const struct group_defaults *group, struct task_config *task);

/* ---- config_load.c, for config_sources.c ---- */

/* Nobody writes a config file this large; /dev/zero or a log file named
 * by mistake stops here. */
#define CONFIG_FILE_MAX_BYTES (16u << 20)

/* One config file, a regular file of at most CONFIG_FILE_MAX_BYTES read
 * with regular_file_read: 0 with its text (NUL-terminated, to free); or
 * -errno after adding "cannot read: REASON" at `file`, line 0. */
int config_read_file(const char *path, unsigned file, char **out, size_t *out_size,
		     struct config_diagnostics *diagnostics);

/* One file's YAML, within yaml_limits.h's bounds, as a document (the
 * caller deletes it): true; false with the errors, at `file`. */
bool config_load_document(const char *buffer, size_t size, unsigned file, yaml_document_t *document,
			  struct config_diagnostics *diagnostics);

/* The config a document holds, every check made (variables replaced when
 * it asks), with `profiles` active (NULL-terminated; NULL: none). `files`:
 * the names of a merged document's files; NULL for one. NULL with the
 * diagnostics, sorted. */
struct config *config_from_document(const char *path, yaml_document_t *document,
				    const char *const *files, size_t file_count,
				    const char *const *profiles,
				    struct config_diagnostics *diagnostics);

/* config_load_file with `profiles` active. */
struct config *config_load_file_with_profiles(const char *path, const char *const *profiles,
					      struct config_diagnostics *diagnostics);

/* `schedule:` of a task (config_schedule.c). */
/* A task's `update:` (config_update.c); `has_instances`: the task has
 * `instances:`, without which the key is refused. */
void update_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		  bool has_instances, struct update_config *out);

void schedule_parse(struct load_context *context, const yaml_node_t *node,
		    const struct where *where, struct schedule_config *out);

/* The top level's `control` map: group, exec, idle_timeout,
 * connections_per_user. */
void control_settings_parse(struct load_context *context, const yaml_node_t *node,
			    struct config *config);

/* The top level's `http` map: listen (an address and port, or a socket
 * path) and idle_timeout. */
void http_settings_parse(struct load_context *context, const yaml_node_t *node,
			 struct config *config);

/* The top level's `notify` map (ready: all, started or a list of groups).
 * Read after the groups, whose names a list must give. */
void notify_settings_parse(struct load_context *context, const yaml_node_t *node,
			   struct config *config);

/* A task's `control` list: the control requests it may make, as enum
 * control_right bits. Unknown and repeated names are reported. */
void task_control_rights_parse(struct load_context *context, const yaml_node_t *node,
			       const struct where *where, unsigned *rights);

/* A task's `watch` list (config_watch.c): each entry's paths (absolute,
 * or from the config file's directory; cleaned), action and debounce. */
void watches_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		   struct task_config *task);

/* ---- profiles (config_profiles.c) ---- */

/* A group or task left out: its name ("web", "web/app"), and its
 * profiles as written ("debug, tools"). */
struct profile_exclusion {
	char *name;
	char *profiles;
};
struct profile_exclusions {
	struct profile_exclusion *items;
	size_t count;
};

/* Whether the group or task whose map is `map` is part of the config: it
 * has no `profiles`, or one of them is active. Its profiles as written go
 * into `written` ("" without). A wrong `profiles` is reported at its place
 * (and the owner read as active, so that its other mistakes are found). */
bool profiles_active(struct load_context *context, const yaml_node_t *map, const char *owner,
		     char *written, size_t written_size);

/* Remembers that `name` was left out, for a later message naming it. */
void profiles_exclude(struct load_context *context, const char *name, const char *written);

/* The profiles of `name` (length bytes) if it was left out, else NULL. */
const char *profiles_excluded(const struct load_context *context, const char *name, size_t length);

/* Whether a task of group `group` (length bytes) was left out: a group
 * whose tasks all were is left out without its own name. */
bool profiles_excluded_in_group(const struct load_context *context, const char *group,
				size_t length);

void profile_exclusions_free(struct profile_exclusions *excluded);

/* config.c's, for a group or task read and then left out. */
void config_group_free(struct group_config *group);
void config_task_free(struct task_config *task);
