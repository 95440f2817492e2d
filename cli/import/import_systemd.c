#include "cli/import/import_systemd.h"
#include "cli/import/import_sources.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/regular_file.h"
#include "base/text_buffer.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "cli/import/import_names.h"
#include "cli/import/shell_words.h"
#include "cli/import/systemd_values.h"
#include "cli/import/systemd_words.h"
#include "config/text/env_file.h"

const char *setting_text(const struct unit_setting *setting)
{
	static char text[512];
	snprintf(text, sizeof(text), "%s=%s", setting->key, setting->value);
	return text;
}

void unit_drop(struct systemd_unit *unit, const struct unit_setting *setting, const char *why, ...)
{
	va_list arguments;
	va_start(arguments, why);
	char *reason = xvasprintf(why, arguments);
	va_end(arguments);
	import_drop(unit->report, setting->file, setting->line, setting_text(setting), "%s",
		    reason);
	free(reason);
}

char *unit_value(struct systemd_unit *unit, const struct unit_setting *setting)
{
	char unknown[8];
	char *value =
	    unit_specifiers(&unit->file, setting->value, unit->user, unknown, sizeof(unknown));
	if (unknown[0])
		unit_drop(unit, setting,
			  "the specifier %s is only known to systemd when it starts the unit; it "
			  "is left as written",
			  unknown);
	return value;
}

struct ytree_node *systemd_tasks(struct systemd_unit *unit)
{
	return ytree_child_map(unit->group, "tasks");
}

/* --- type, restart, stop ---------------------------------------------- */

static bool timespan(struct systemd_unit *unit, const struct unit_setting *setting, uint64_t *ms,
		     bool *infinite)
{
	if (systemd_timespan_ms(setting->value, ms, infinite) == 0)
		return true;
	unit_drop(unit, setting, "not a time span systemd reads");
	return false;
}

static void import_type(struct systemd_unit *unit)
{
	struct unit_setting *type = unit_last(&unit->file, "Service", "Type");
	struct unit_setting *pid_file = unit_last(&unit->file, "Service", "PIDFile");
	struct unit_setting *start_timeout = unit_last(&unit->file, "Service", "TimeoutStartSec");
	struct unit_setting *both_timeouts = unit_last(&unit->file, "Service", "TimeoutSec");
	struct unit_setting *watchdog = unit_last(&unit->file, "Service", "WatchdogSec");
	struct unit_setting *notify_access = unit_last(&unit->file, "Service", "NotifyAccess");
	struct unit_setting *remain = unit_last(&unit->file, "Service", "RemainAfterExit");
	const char *kind = type ? type->value : "simple";
	if (!start_timeout)
		start_timeout = both_timeouts;
	bool notify = strcmp(kind, "notify") == 0 || strcmp(kind, "notify-reload") == 0;
	if (notify) {
		struct ytree_node *readiness = ytree_set(unit->task, "readiness", ytree_map());
		readiness->flow = true;
		ytree_set(readiness, "notify", ytree_plain("systemd"));
		uint64_t ms = 90000;
		bool infinite = false;
		if (start_timeout && !timespan(unit, start_timeout, &ms, &infinite))
			ms = 90000;
		ytree_set(readiness, "timeout", ytree_plain(infinite ? "0" : duration_text(ms)));
		if (!start_timeout)
			ytree_comment(unit->task, "readiness",
				      "Type=%s; timeout: systemd's default TimeoutStartSec", kind);
		if (strcmp(kind, "notify-reload") == 0) {
			ytree_set(readiness, "continuous", ytree_plain("true"));
			ytree_comment(
			    unit->task, "readiness",
			    "Type=notify-reload: reload with `corral signal %s/%s SIGHUP`",
			    unit->name, unit->name);
		}
		if (watchdog) {
			uint64_t watchdog_ms;
			if (timespan(unit, watchdog, &watchdog_ms, &infinite) && !infinite &&
			    watchdog_ms)
				ytree_set(readiness, "watchdog",
					  ytree_plain(duration_text(watchdog_ms)));
		}
		if (notify_access && strcmp(notify_access->value, "all") != 0 &&
		    strcmp(notify_access->value, "main") != 0 &&
		    strcmp(notify_access->value, "exec") != 0)
			unit_drop(unit, notify_access,
				  "corral takes notifications from the task's main process and its "
				  "session");
	} else {
		if (watchdog)
			unit_drop(unit, watchdog, "a watchdog needs Type=notify");
		if (start_timeout && strcmp(kind, "oneshot") == 0)
			unit_drop(unit, start_timeout,
				  "corral does not bound how long a one-shot task runs");
		if (notify_access)
			unit_drop(unit, notify_access, "without Type=notify nothing is notified");
	}
	if (strcmp(kind, "oneshot") == 0) {
		unit->oneshot = true;
		if (remain && unit_boolean(remain->value) == 1)
			ytree_comment(
			    systemd_tasks(unit), unit->name,
			    "RemainAfterExit=yes: corral shows it completed once it exits 0");
	} else if (remain && unit_boolean(remain->value) == 1) {
		unit_drop(unit, remain, "only a Type=oneshot unit remains after its exit");
	}
	if (strcmp(kind, "forking") == 0) {
		unit_drop(
		    unit, type,
		    "corral follows the process it starts; a daemon that forks and exits looks "
		    "finished to it, whatever its PIDFile= says. Run the program in the "
		    "foreground (its --foreground, -D or --nodaemon flag) with Type=simple, "
		    "and import again");
		if (pid_file)
			unit_drop(unit, pid_file, "goes with Type=forking, which is not carried");
	} else if (strcmp(kind, "dbus") == 0) {
		unit_drop(unit, type,
			  "corral cannot see a D-Bus name appear: readiness is the start of the "
			  "process (readiness: {exec: [busctl, status, NAME]} would wait for it)");
	} else if (strcmp(kind, "idle") == 0) {
		ytree_comment(systemd_tasks(unit), unit->name, "Type=idle: started as Type=simple");
	} else if (!notify && strcmp(kind, "simple") != 0 && strcmp(kind, "exec") != 0 &&
		   strcmp(kind, "oneshot") != 0) {
		unit_drop(unit, type, "an unknown Type=");
	} else if (pid_file) {
		ytree_comment(systemd_tasks(unit), unit->name,
			      "PIDFile=%s: not needed, corral knows the pid it started",
			      pid_file->value);
	}
	if (unit_last(&unit->file, "Service", "BusName"))
		unit_drop(unit, unit_last(&unit->file, "Service", "BusName"),
			  "corral does not watch D-Bus names");
}

/* sysexits.h's and LSB's exit statuses, which systemd takes by name. */
static int exit_status_named(const char *name)
{
	static const struct {
		const char *name;
		int code;
	} names[] = {
	    {"USAGE", 64},         {"DATAERR", 65},     {"NOINPUT", 66},     {"NOUSER", 67},
	    {"NOHOST", 68},        {"UNAVAILABLE", 69}, {"SOFTWARE", 70},    {"OSERR", 71},
	    {"OSFILE", 72},        {"CANTCREAT", 73},   {"IOERR", 74},       {"TEMPFAIL", 75},
	    {"PROTOCOL", 76},      {"NOPERM", 77},      {"CONFIG", 78},      {"INVALIDARGUMENT", 2},
	    {"NOTIMPLEMENTED", 3}, {"NOPERMISSION", 4}, {"NOTINSTALLED", 5}, {"NOTCONFIGURED", 6},
	    {"NOTRUNNING", 7},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i].name) == 0)
			return names[i].code;
	return -1;
}

static void exit_list(struct systemd_unit *unit, const struct unit_setting *setting,
		      struct ytree_node *restart, const char *key)
{
	struct ytree_node *list = ytree_child_list(restart, key);
	char *copy = xstrdup(setting->value), *save = NULL;
	for (char *word = strtok_r(copy, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
		int code = exit_status_named(word);
		if (isdigit((unsigned char)word[0])) {
			ytree_append(list, ytree_plain(word));
		} else if (code >= 0) {
			ytree_append(list, ytree_plainf("%d", code));
		} else if (parse_signal_name(word) > 0) {
			char *signal =
			    strncmp(word, "SIG", 3) == 0 ? xstrdup(word) : xasprintf("SIG%s", word);
			ytree_append(list, ytree_string(signal));
			free(signal);
		} else {
			unit_drop(unit, setting, "\"%s\" is neither an exit code nor a signal",
				  word);
		}
	}
	free(copy);
}

static void import_restart(struct systemd_unit *unit)
{
	struct unit_setting *restart_setting = unit_last(&unit->file, "Service", "Restart");
	struct unit_setting *delay = unit_last(&unit->file, "Service", "RestartSec");
	struct unit_setting *interval = unit_last(&unit->file, "Unit", "StartLimitIntervalSec");
	if (!interval)
		interval = unit_last(&unit->file, "Service", "StartLimitInterval");
	struct unit_setting *burst = unit_last(&unit->file, "Unit", "StartLimitBurst");
	if (!burst)
		burst = unit_last(&unit->file, "Service", "StartLimitBurst");
	struct unit_setting *prevent =
	    unit_last(&unit->file, "Service", "RestartPreventExitStatus");
	struct unit_setting *force = unit_last(&unit->file, "Service", "RestartForceExitStatus");
	struct unit_setting *success = unit_last(&unit->file, "Service", "SuccessExitStatus");
	struct unit_setting *action = unit_last(&unit->file, "Unit", "StartLimitAction");

	const char *mode = restart_setting ? restart_setting->value : "no";
	const char *policy = "never";
	if (strcmp(mode, "always") == 0)
		policy = "always";
	else if (strcmp(mode, "on-failure") == 0)
		policy = "on-failure";
	else if (strcmp(mode, "on-abnormal") == 0 || strcmp(mode, "on-abort") == 0 ||
		 strcmp(mode, "on-watchdog") == 0)
		policy = "on-failure";
	else if (strcmp(mode, "on-success") == 0)
		unit_drop(unit, restart_setting,
			  "corral restarts on failure, or always, never on success alone");
	else if (strcmp(mode, "no") != 0)
		unit_drop(unit, restart_setting, "an unknown Restart=");

	struct ytree_node *restart = ytree_child_map(unit->task, "restart");
	ytree_set(restart, "policy", ytree_plain(policy));
	if (!restart_setting)
		ytree_comment(unit->task, "restart", "Restart=no, systemd's default");
	else if (strcmp(policy, "on-failure") == 0 && strcmp(mode, "on-failure") != 0)
		ytree_comment(unit->task, "restart",
			      "Restart=%s: carried as on-failure, which also restarts after a "
			      "non-zero exit code",
			      mode);
	if (strcmp(policy, "never") != 0) {
		uint64_t delay_ms = 100, interval_ms = 10000, burst_count = 5;
		bool infinite = false;
		if (delay && !timespan(unit, delay, &delay_ms, &infinite))
			delay_ms = 100;
		if (interval && !timespan(unit, interval, &interval_ms, &infinite))
			interval_ms = 10000;
		if (burst)
			burst_count = strtoull(burst->value, NULL, 10);
		ytree_set(restart, "delay", ytree_plain(duration_text(delay_ms)));
		ytree_set(restart, "max_delay", ytree_plain(duration_text(delay_ms)));
		if (interval_ms == 0 || burst_count == 0) {
			ytree_set(restart, "attempts", ytree_plain("unlimited"));
			ytree_comment(unit->task, "restart",
				      "StartLimitIntervalSec=0: restarts are not limited");
		} else {
			/* systemd counts every start within the interval, the
			 * first included; corral counts the restarts. */
			ytree_set(restart, "attempts",
				  ytree_plainf("%llu", (unsigned long long)(burst_count - 1)));
			ytree_set(restart, "interval", ytree_plain(duration_text(interval_ms)));
			char delay_text[64];
			snprintf(delay_text, sizeof(delay_text), "%s", duration_text(delay_ms));
			ytree_comment(unit->task, "restart",
				      "RestartSec=%s, at most %llu starts in %s (StartLimitBurst, "
				      "StartLimitIntervalSec%s): the restarts that leaves",
				      delay_text, (unsigned long long)burst_count,
				      duration_text(interval_ms),
				      interval || burst ? "" : ", systemd's defaults");
		}
		ytree_set(restart, "mode", ytree_plain("fail"));
	} else if (delay) {
		ytree_comment(unit->task, "restart", "RestartSec=%s: no restart to delay",
			      delay->value);
	}
	if (prevent)
		exit_list(unit, prevent, restart, "no_restart_exit");
	if (success)
		exit_list(unit, success, restart, "success_exit");
	if (force)
		unit_drop(unit, force, "corral's restart policy decides alone which exits restart");
	if (action && strcmp(action->value, "none") != 0)
		unit_drop(unit, action,
			  "a task that fails for good stops its group, and corral exits once every "
			  "group is done: the machine is not touched");
}

static void import_kill(struct systemd_unit *unit)
{
	struct unit_setting *signal = unit_last(&unit->file, "Service", "KillSignal");
	struct unit_setting *mode = unit_last(&unit->file, "Service", "KillMode");
	struct unit_setting *timeout = unit_last(&unit->file, "Service", "TimeoutStopSec");
	struct unit_setting *both = unit_last(&unit->file, "Service", "TimeoutSec");
	struct unit_setting *sigkill = unit_last(&unit->file, "Service", "SendSIGKILL");
	struct unit_setting *sighup = unit_last(&unit->file, "Service", "SendSIGHUP");
	struct unit_setting *final = unit_last(&unit->file, "Service", "FinalKillSignal");
	struct unit_setting *restart_signal =
	    unit_last(&unit->file, "Service", "RestartKillSignal");
	if (!timeout)
		timeout = both;
	struct ytree_node *kill = ytree_child_map(unit->task, "kill");
	kill->flow = true;
	if (signal) {
		char *name = strncmp(signal->value, "SIG", 3) == 0
				 ? xstrdup(signal->value)
				 : xasprintf("SIG%s", signal->value);
		ytree_set(kill, "signal", ytree_string(name));
		free(name);
	}
	uint64_t ms = 90000;
	bool infinite = false;
	if (timeout && !timespan(unit, timeout, &ms, &infinite))
		ms = 90000;
	if (infinite || (timeout && ms == 0)) {
		/* corral's kill.timeout has no "never": a day is as long as
		 * any shutdown may wait, and shutdown_timeout bounds it. */
		ytree_set(kill, "timeout", ytree_plain("24h"));
		unit->stop_ms = 24 * 3600 * 1000;
		ytree_comment(unit->task, "kill",
			      "%s (no limit): 24h, bounded by the config's shutdown_timeout",
			      setting_text(timeout));
	} else {
		ytree_set(kill, "timeout", ytree_plain(duration_text(ms)));
		unit->stop_ms = ms;
		if (!timeout)
			ytree_comment(unit->task, "kill",
				      "timeout: systemd's default TimeoutStopSec");
	}
	const char *kill_mode = mode ? mode->value : "control-group";
	if (strcmp(kill_mode, "control-group") == 0 || strcmp(kill_mode, "mixed") == 0)
		ytree_set(kill, "mode", ytree_plain(kill_mode));
	else
		unit_drop(
		    unit, mode,
		    "corral never leaves a task's processes behind: at its stop, what is left "
		    "of them gets SIGKILL after kill.timeout. kill.mode: mixed signals the "
		    "main process alone");
	if (sigkill && unit_boolean(sigkill->value) == 0)
		unit_drop(unit, sigkill,
			  "corral always ends a stop with SIGKILL after kill.timeout; it is never "
			  "left running");
	if (sighup && unit_boolean(sighup->value) == 1)
		unit_drop(unit, sighup, "corral sends no SIGHUP after the kill signal");
	if (final)
		unit_drop(unit, final, "corral's last signal is always SIGKILL");
	if (restart_signal)
		unit_drop(unit, restart_signal, "a restart stops the task with kill.signal");
}

/* --- identity, environment, directories ------------------------------- */

static void import_identity(struct systemd_unit *unit)
{
	struct unit_setting *user = unit_last(&unit->file, "Service", "User");
	struct unit_setting *group = unit_last(&unit->file, "Service", "Group");
	struct unit_setting *dynamic = unit_last(&unit->file, "Service", "DynamicUser");
	if (user && *user->value) {
		char *name = unit_value(unit, user);
		unit->user = name;
	}
	if (group && *group->value)
		unit->group_name = unit_value(unit, group);
	if (unit->user) {
		char *text = unit->group_name ? xasprintf("%s:%s", unit->user, unit->group_name)
					      : xstrdup(unit->user);
		ytree_set(unit->task, "user", ytree_string(text));
		free(text);
	} else if (unit->group_name) {
		unit_drop(unit, group,
			  "corral's user: sets a group with a user only (user: \"0:%s\" would run "
			  "as root with that group)",
			  unit->group_name);
	}
	if (dynamic && unit_boolean(dynamic->value) == 1)
		unit_drop(unit, dynamic,
			  "corral does not allocate users: create one and write it as user:");
	size_t count;
	struct unit_setting **groups =
	    unit_list(&unit->file, "Service", "SupplementaryGroups", &count);
	for (size_t i = 0; i < count; i++) {
		struct ytree_node *list = ytree_child_list(unit->task, "groups");
		char *copy = unit_value(unit, groups[i]), *save = NULL;
		for (char *word = strtok_r(copy, " \t", &save); word;
		     word = strtok_r(NULL, " \t", &save))
			ytree_append_unique(list, word);
		free(copy);
	}
	free(groups);

	struct unit_setting *cwd = unit_last(&unit->file, "Service", "WorkingDirectory");
	if (cwd) {
		char *value = unit_value(unit, cwd);
		const char *path = value[0] == '-' ? value + 1 : value;
		if (strcmp(path, "~") == 0) {
			char *home =
			    unit_specifiers(&unit->file, "%h", unit->user, (char[8]){0}, 8);
			ytree_set(unit->task, "cwd", ytree_string(home));
			ytree_comment(unit->task, "cwd", "WorkingDirectory=~: the home of %s",
				      unit->user ? unit->user : "root");
			free(home);
		} else if (path[0] == '/') {
			ytree_set(unit->task, "cwd", ytree_string(path));
			if (value[0] == '-')
				ytree_comment(unit->task, "cwd",
					      "WorkingDirectory=-: corral needs the directory to "
					      "exist");
		} else {
			unit_drop(unit, cwd, "not an absolute path");
		}
		free(value);
	}
}

struct shadowed {
	struct systemd_unit *unit;
	struct ytree_node *env;
	const char *path;
};

static void take_out_of_env(void *context, const char *name, size_t name_length, const char *value,
			    size_t value_length)
{
	(void)value;
	(void)value_length;
	struct shadowed *shadowed = context;
	char *key = xstrndup(name, name_length);
	if (ytree_get(shadowed->env, key)) {
		ytree_remove(shadowed->env, key);
		ytree_comment(systemd_tasks(shadowed->unit), shadowed->unit->name,
			      "Environment=%s=...: left to EnvironmentFile=%s, which systemd lets "
			      "override it",
			      key, shadowed->path);
	}
	free(key);
}

/* The variables of the env file at PATH (as it is here) out of ENV. */
static void leave_to_file(struct systemd_unit *unit, struct ytree_node *env, const char *path)
{
	char *text, reason[REGULAR_FILE_REASON_SIZE], error[160];
	size_t size;
	unsigned line;
	if (regular_file_read(path, ENV_FILE_MAX_BYTES, &text, &size, reason) < 0)
		return;
	struct shadowed shadowed = {unit, env, path};
	env_file_parse(text, size, take_out_of_env, &shadowed, &line, error, sizeof(error));
	free(text);
}

/* Environment=: words of NAME=VALUE, later ones winning. */
static void import_environment(struct systemd_unit *unit)
{
	size_t count;
	struct unit_setting **lines = unit_list(&unit->file, "Service", "Environment", &count);
	for (size_t i = 0; i < count; i++) {
		char *value = unit_value(unit, lines[i]);
		const char *why = NULL;
		char **words = systemd_words(value, &why);
		free(value);
		if (!words) {
			unit_drop(unit, lines[i], "%s", why);
			continue;
		}
		struct ytree_node *env = ytree_child_map(unit->task, "env");
		for (size_t w = 0; words[w]; w++) {
			char *equals = strchr(words[w], '=');
			if (!equals || equals == words[w]) {
				unit_drop(unit, lines[i], "\"%s\" is not NAME=VALUE", words[w]);
				continue;
			}
			*equals = '\0';
			if (import_env_name_problem(words[w])) {
				unit_drop(unit, lines[i], "%s: %s", words[w],
					  import_env_name_problem(words[w]));
				continue;
			}
			ytree_set(env, words[w], ytree_string(equals + 1));
		}
		string_vector_free(words);
	}
	free(lines);

	struct unit_setting **files = unit_list(&unit->file, "Service", "EnvironmentFile", &count);
	for (size_t i = 0; i < count; i++) {
		char *value = unit_value(unit, files[i]);
		bool optional = value[0] == '-';
		const char *path = optional ? value + 1 : value;
		if (optional && access(path, R_OK) != 0) {
			ytree_comment(
			    systemd_tasks(unit), unit->name,
			    "%s: skipped, as systemd does, since it is not here (corral's "
			    "env_file must exist)",
			    setting_text(files[i]));
		} else {
			struct ytree_node *list = ytree_child_list(unit->task, "env_file");
			ytree_append_unique(list, path);
		}
		free(value);
	}
	/* systemd lets EnvironmentFile= override Environment=, corral lets env:
	 * override env_file: a variable in both is left to the file. */
	struct ytree_node *env = ytree_get(unit->task, "env");
	struct ytree_node *env_files = ytree_get(unit->task, "env_file");
	for (size_t f = 0; env && env_files && f < env_files->count; f++)
		leave_to_file(unit, env, env_files->entries[f].value->text);
	if (env && !env->count)
		ytree_remove(unit->task, "env");
	if (count && ytree_get(unit->task, "env_file"))
		ytree_comment(
		    unit->task, "env_file",
		    "read by corral as compose's env files: NAME=VALUE lines, # comments, "
		    "quotes; systemd also takes lines ending in \\");
	free(files);

	struct unit_setting *pass = unit_last(&unit->file, "Service", "PassEnvironment");
	if (pass)
		ytree_comment(systemd_tasks(unit), unit->name,
			      "PassEnvironment=%s: every task gets corral's environment",
			      pass->value);
	struct unit_setting *unset = unit_last(&unit->file, "Service", "UnsetEnvironment");
	if (unset)
		unit_drop(unit, unset,
			  "a task gets corral's environment with env: over it; nothing is taken "
			  "out");
}

/* --- the unit as a whole ----------------------------------------------- */

/* Settings that need nothing of corral. */
static void import_descriptions(struct systemd_unit *unit, struct ytree_node *groups)
{
	struct unit_setting *description = unit_last(&unit->file, "Unit", "Description");
	ytree_comment(groups, unit->name, "%s%s%s", unit->file.name, description ? ": " : "",
		      description ? description->value : "");
	unit_last(&unit->file, "Unit", "Documentation");
	unit_last(&unit->file, "Service", "SyslogIdentifier");
	unit_last(&unit->file, "Unit", "DefaultDependencies");
	for (size_t i = 0; i < unit->file.count; i++)
		if (strcmp(unit->file.settings[i].section, "Install") == 0)
			unit->file.settings[i].used = true;
	static const char *const streams[] = {"StandardOutput", "StandardError"};
	for (size_t i = 0; i < 2; i++) {
		struct unit_setting *stream = unit_last(&unit->file, "Service", streams[i]);
		if (stream && strcmp(stream->value, "journal") != 0 &&
		    strcmp(stream->value, "inherit") != 0 &&
		    strcmp(stream->value, "journal+console") != 0 &&
		    strcmp(stream->value, "kmsg") != 0 && strcmp(stream->value, "syslog") != 0)
			unit_drop(
			    unit, stream,
			    "the task's output goes to corral's stdout and `corral logs` (and "
			    "log.dir for files)");
	}
}

/* Why corral has nothing for a setting no importer took, for the keys
 * units often carry; NULL: no reason known beyond "no equivalent". */
static const char *unused_reason(const char *key)
{
	static const struct {
		const char *key, *why;
	} reasons[] = {
	    {"RequiresMountsFor", "corral starts once the file systems are mounted"},
	    {"Sockets", "corral passes no listening sockets (socket activation): let the "
			"program listen itself"},
	    {"FileDescriptorStoreMax", "corral keeps no file descriptors for a task"},
	    {"OnFailure", "corral starts no other unit on a failure: its group's on_failure "
			  "says what happens"},
	    {"OnSuccess", "corral starts no other unit on a success"},
	    {"Conflicts", "corral stops no task because another starts"},
	    {"ReloadPropagatedFrom", "corral reloads a task by signal only"},
	    {"PropagatesReloadTo", "corral reloads a task by signal only"},
	    {"JoinsNamespaceOf", "corral's tasks join no other task's namespaces"},
	    {"Slice", "corral makes each task's cgroup under its own"},
	    {"RuntimeMaxSec", "corral does not bound how long a task runs"},
	};
	if (strncmp(key, "Condition", 9) == 0 || strncmp(key, "Assert", 6) == 0)
		return "corral starts every task of its config; test it in a prestart task "
		       "(ExecStartPre=)";
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (strcmp(key, reasons[i].key) == 0)
			return reasons[i].why;
	return NULL;
}

/* Settings that change nothing under corral. */
static bool is_systemd_only(const char *key)
{
	static const char *const keys[] = {
	    "IgnoreOnIsolate", "StopWhenUnneeded", "RefuseManualStart",   "RefuseManualStop",
	    "AllowIsolate",    "CollectMode",      "DefaultDependencies", NULL};
	for (size_t i = 0; keys[i]; i++)
		if (strcmp(key, keys[i]) == 0)
			return true;
	return false;
}

static void report_unused(struct systemd_unit *unit)
{
	for (size_t i = 0; i < unit->file.count; i++) {
		struct unit_setting *setting = &unit->file.settings[i];
		if (setting->used)
			continue;
		setting->used = true;
		const char *why = unused_reason(setting->key);
		if (strcmp(setting->section, "Service") != 0 &&
		    strcmp(setting->section, "Unit") != 0)
			unit_drop(unit, setting, "corral reads [Unit] and [Service] only");
		else if (is_systemd_only(setting->key))
			continue;
		else
			unit_drop(unit, setting, "%s", why ? why : "corral has no equivalent");
	}
}

static void systemd_unit_free(struct systemd_unit *unit)
{
	unit_file_free(&unit->file);
	free(unit->name);
	free(unit->user);
	free(unit->group_name);
	for (size_t h = 0; h < unit->helper_count; h++)
		free(unit->helpers[h].name);
	free(unit->helpers);
}

/* systemd runs every Exec*= line with the unit's environment, directory
 * and sandbox: the one-shot tasks get the main task's. */
static void share_with_helpers(struct systemd_unit *unit)
{
	static const char *const shared[] = {"cwd",       "groups",    "env_file", "env",
					     "resources", "isolation", NULL};
	for (size_t h = 0; h < unit->helper_count; h++) {
		struct ytree_node *task = ytree_get(systemd_tasks(unit), unit->helpers[h].name);
		for (size_t k = 0; task && shared[k]; k++) {
			struct ytree_node *value = ytree_get(unit->task, shared[k]);
			if (!value ||
			    (unit->helpers[h].privileged && strcmp(shared[k], "isolation") == 0))
				continue;
			ytree_set(task, shared[k], ytree_copy(value));
		}
	}
}

static void import_unit(struct systemd_unit *unit, struct ytree_node *groups)
{
	/* Two units of one name (from two directories) are two groups. */
	char *unique = import_unique_group(groups, unit->name);
	free(unit->name);
	unit->name = unique;
	unit->group = ytree_set(groups, unit->name, ytree_map());
	unit->task = ytree_set(systemd_tasks(unit), unit->name, ytree_map());
	/* The command first, where a reader looks; filled in below. */
	ytree_set(unit->task, "command", ytree_list());
	import_descriptions(unit, groups);
	import_identity(unit);
	import_type(unit);
	import_exec_start(unit);
	import_environment(unit);
	import_restart(unit);
	import_kill(unit);
	import_resources(unit);
	import_directories(unit);
	import_helpers(unit, "ExecStartPre", "prestart", "start-pre",
		       "ExecStartPre=: once before the unit starts, not again at each restart");
	import_helpers(unit, "ExecStartPost", "poststart", "start-post", NULL);
	import_helpers(unit, "ExecStopPost", "poststop", "stop-post",
		       "ExecStopPost=: once the unit has stopped for good");
	import_exec_stop(unit);
	import_exec_reload(unit);
	systemd_import_sandbox(unit);
	share_with_helpers(unit);
	/* prestart one-shots (directories, start-pre...) run one after
	 * another in the order written, as systemd runs them. */
	size_t prestarts = 0;
	struct ytree_node *tasks = systemd_tasks(unit);
	for (size_t i = 0; i < tasks->count; i++) {
		struct ytree_node *lifecycle = ytree_get(tasks->entries[i].value, "lifecycle");
		struct ytree_node *hook = lifecycle ? ytree_get(lifecycle, "hook") : NULL;
		if (hook && strcmp(hook->text, "prestart") == 0)
			prestarts++;
	}
	if (prestarts > 1)
		ytree_set(unit->group, "order", ytree_plain("sequential"));
}

/* The group (and main task) name of a unit: its name without .service,
 * in the letters corral's names take. */
static char *unit_config_name(const struct unit_file *file)
{
	const char *dot = strrchr(file->name, '.');
	char *stem = xstrndup(file->name, dot ? (size_t)(dot - file->name) : strlen(file->name));
	char *name = import_config_name(stem);
	free(stem);
	return name;
}

int systemd_import(char *const *paths, size_t count, struct ytree_node *config,
		   struct import_report *report)
{
	struct systemd_unit *units = xcalloc(count, sizeof(*units));
	size_t loaded = 0;
	int result = 0;
	for (size_t i = 0; i < count; i++) {
		struct systemd_unit *unit = &units[loaded];
		unit->report = report;
		if (unit_file_load(&unit->file, paths[i], report) < 0) {
			unit_file_free(&unit->file);
			result = -1;
			continue;
		}
		const char *at = strchr(unit->file.name, '@');
		if (at && !unit->file.instance) {
			import_error(report, paths[i], 0,
				     "a template: name an instance, %.*s@INSTANCE%s, read from it",
				     (int)(at - unit->file.name), unit->file.name, at + 1);
			unit_file_free(&unit->file);
			result = -1;
			continue;
		}
		unit->name = unit_config_name(&unit->file);
		loaded++;
	}
	if (result == 0) {
		struct ytree_node *groups = ytree_child_map(config, "groups");
		for (size_t i = 0; i < loaded; i++)
			import_unit(&units[i], groups);
		systemd_import_ordering(units, loaded);
		/* Units stop together unless after: chains them: their sum bounds
		 * a shutdown, where corral's default of 30s would cut it short. */
		uint64_t stop_ms = 0;
		for (size_t i = 0; i < loaded; i++)
			stop_ms += units[i].stop_ms;
		if (stop_ms > 30000) {
			ytree_set(config, "shutdown_timeout", ytree_plain(duration_text(stop_ms)));
			ytree_comment(config, "shutdown_timeout",
				      "the units' TimeoutStopSec= together, so that a shutdown "
				      "gives each its time");
		}
		for (size_t i = 0; i < loaded; i++)
			report_unused(&units[i]);
	}
	for (size_t i = 0; i < loaded; i++)
		systemd_unit_free(&units[i]);
	free(units);
	return result;
}
