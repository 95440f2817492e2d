/* `corral import` of systemd service units: each unit becomes a group of
 * its own (its ExecStartPre= and ExecStartPost= lines one-shot tasks beside
 * its main task), After=/Requires=/Wants= among the units given become
 * `after:`, and the sandbox becomes `isolation:` (import_systemd_sandbox.c).
 * Every setting is used or reported. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/import/import_report.h"
#include "cli/import/unit_file.h"
#include "cli/import/yaml_tree.h"

/* One unit while it is imported. */
struct systemd_unit {
	struct unit_file file;
	char *name;               /* group and main task name: "redis-server" */
	char *user, *group_name;  /* User=, Group= (specifiers replaced) */
	struct ytree_node *group; /* in the config's groups */
	struct ytree_node *task;  /* the main task */
	bool oneshot;
	bool privileged_main; /* ExecStart=+...: no sandbox */
	uint64_t stop_ms;     /* its kill.timeout */
	/* The one-shot tasks of ExecStartPre=/Post=/ExecStopPost= lines, which
	 * get the main task's environment, directory and (unless +) sandbox. */
	struct systemd_helper {
		char *name;
		bool privileged;
	} * helpers;
	size_t helper_count;
	struct import_report *report;
};

/* `Key=value` as the report names a setting, in a static buffer. */
const char *setting_text(const struct unit_setting *setting);
void unit_drop(struct systemd_unit *unit, const struct unit_setting *setting, const char *why, ...)
    __attribute__((format(printf, 3, 4)));
/* A setting's value with specifiers replaced (malloc'd); one it cannot
 * replace is reported. */
char *unit_value(struct systemd_unit *unit, const struct unit_setting *setting);

/* The unit's group's `tasks` map. */
struct ytree_node *systemd_tasks(struct systemd_unit *unit);

/* Command lines (import_systemd_exec.c): ExecStart= into the main task;
 * ExecStartPre=, ExecStartPost=, ExecStopPost= (KEY) into one-shot tasks
 * of STAGE named BASE, BASE-2...; ExecStop=; ExecReload=. */
void import_exec_start(struct systemd_unit *unit);
void import_helpers(struct systemd_unit *unit, const char *key, const char *stage, const char *base,
		    const char *note);
void import_exec_stop(struct systemd_unit *unit);
void import_exec_reload(struct systemd_unit *unit);

/* RuntimeDirectory= and its kin; the cgroup limits
 * (import_systemd_resources.c). */
void import_directories(struct systemd_unit *unit);
void import_resources(struct systemd_unit *unit);

/* The [Service] sandbox, Limit* and UMask into the main task's
 * `isolation:` (and the lists of prestart tasks that need it). */
void systemd_import_sandbox(struct systemd_unit *unit);

/* After=, Before=, Requires=, Wants=, BindsTo= and Requisite= among the
 * units imported together become `after:` of their main tasks
 * (import_systemd_ordering.c). */
void systemd_import_ordering(struct systemd_unit *units, size_t count);

/* systemd_import() itself is in import_sources.h, beside the other
 * sources'. */
