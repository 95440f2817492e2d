/* How a task tells it is ready (`readiness`) and how corral finds out it
 * is still alive (`health`). Only the values are read here; the sockets,
 * fds and probe processes are the runtime's. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/text/line_pattern.h"
#include "config/yaml/diagnostics.h"

static const char *const readiness_keys[] = {
    "notify",        "fd",       "exec",       "tcp",      "http",
    "unix",          "interval", "timeout",    "watchdog", "start_interval",
    "initial_delay", "inside",   "continuous", "failures", "start_period",
    "log",           NULL};
static const char *const log_keys[] = {"ready", "not_ready", NULL};
static const char *const health_keys[] = {"exec",          "tcp",     "http",     "unix",
					  "interval",      "timeout", "failures", "start_interval",
					  "initial_delay", "inside",  NULL};

static bool parse_positive_duration(struct load_context *context, const yaml_node_t *node,
				    const struct where *where, uint64_t *out_ms);

/* start_interval and initial_delay, of any probe. */
static void parse_probe_timing(struct load_context *context, const struct map_entries *fields,
			       const struct where *where, struct probe_config *probe)
{
	const yaml_node_t *field;
	char buffer[64];
	struct where field_where;
	if ((field = map_lookup(fields, "start_interval"))) {
		field_where = where_field(where, "start_interval", buffer, sizeof(buffer));
		parse_positive_duration(context, field, &field_where, &probe->start_interval_ms);
	}
	if ((field = map_lookup(fields, "initial_delay"))) {
		field_where = where_field(where, "initial_delay", buffer, sizeof(buffer));
		expect_duration(context, field, &field_where, &probe->initial_delay_ms);
	}
	if ((field = map_lookup(fields, "inside"))) {
		field_where = where_field(where, "inside", buffer, sizeof(buffer));
		if (expect_bool(context, field, &field_where, &probe->inside) && probe->inside &&
		    probe->kind != PROBE_EXEC && probe->kind != PROBE_NONE)
			report(context, field, &field_where,
			       "only goes with \"exec\" (tcp, http and unix probes are made from "
			       "inside the task's network and root already)");
	}
}
/* In the order of enum notify_method. */
static const char *const notify_names[] = {"systemd", "fd"};
enum notify_method { NOTIFY_SYSTEMD, NOTIFY_FD };

/* A probe run often enough to notice readiness soon after it happens, and
 * a health check rare enough to cost little; its timeout leaves a slow
 * probe time to answer. Documented in docs/config.md. */
#define READINESS_DEFAULT_INTERVAL_MS 1000
#define HEALTH_DEFAULT_INTERVAL_MS    10000
#define HEALTH_DEFAULT_TIMEOUT_MS     5000
#define HEALTH_DEFAULT_FAILURES       3
/* Kubernetes' failureThreshold: one failed run is not yet an outage. */
#define READINESS_DEFAULT_FAILURES 3
/* Without a timeout, how long a probe's failures are not said while the
 * task starts: Kubernetes' startupProbe defaults (3 failures, 10s apart). */
#define READINESS_DEFAULT_START_PERIOD_MS 30000
/* Without a timeout, how long a probe's failures are not said while the
 * task starts: Kubernetes' startupProbe defaults (3 failures, 10s apart). */
#define READINESS_DEFAULT_START_PERIOD_MS 30000

/* 0-2 are the task's stdio. The top keeps the fd under the usual soft
 * RLIMIT_NOFILE of 1024, so the runtime can place it without raising
 * limits. */
#define NOTIFY_FD_MIN 3
#define NOTIFY_FD_MAX 1023

/* Both keep running, so "ready" and "healthy" mean something; anything
 * else runs once, to its exit. */
static bool stage_keeps_running(enum lifecycle_stage stage)
{
	return stage == STAGE_MAIN || lifecycle_stage_is_sidecar(stage);
}

/* All digits, as read_capped_number reads them. */
static bool read_whole_number(const char *text, uint64_t cap, uint64_t *out)
{
	return read_capped_number(&text, cap, out) && !*text;
}

static bool parse_notify_fd(struct load_context *context, const yaml_node_t *node,
			    const struct where *where, int *out)
{
	static const char *const stdio_names[] = {"stdin", "stdout", "stderr"};
	const char *text = expect_string(context, node, where);
	uint64_t value;

	if (!text)
		return false;
	if (!read_whole_number(text, NOTIFY_FD_MAX, &value) || value > NOTIFY_FD_MAX) {
		report(context, node, where, "must be a whole number from %d to %d, not %s",
		       NOTIFY_FD_MIN, NOTIFY_FD_MAX, quote(text, node->data.scalar.length).text);
		return false;
	}
	if (value < NOTIFY_FD_MIN) {
		report(context, node, where, "%d is the task's %s; use %d to %d", (int)value,
		       stdio_names[value], NOTIFY_FD_MIN, NOTIFY_FD_MAX);
		return false;
	}
	*out = (int)value;
	return true;
}

static bool parse_failures(struct load_context *context, const yaml_node_t *node,
			   const struct where *where, unsigned *out)
{
	const char *text = expect_string(context, node, where);
	uint64_t value;

	if (!text)
		return false;
	if (!read_whole_number(text, UINT_MAX, &value) || value < 1) {
		report(context, node, where, "must be a whole number, 1 or more, not %s",
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	if (value > UINT_MAX) {
		report(context, node, where, "%s is too large",
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	*out = (unsigned)value;
	return true;
}

/* A duration that must not be 0: a probe every 0 ms, or one that must
 * answer in 0 ms, would be a busy loop or a certain failure. */
static bool parse_positive_duration(struct load_context *context, const yaml_node_t *node,
				    const struct where *where, uint64_t *out_ms)
{
	uint64_t value;

	if (!expect_duration(context, node, where, &value))
		return false;
	if (value == 0) {
		report(context, node, where, "must be longer than 0");
		return false;
	}
	*out_ms = value;
	return true;
}

/* The probe command: a list, as `command` is read. A shell line is not
 * taken, so that `exec` never hides a /bin/sh the user did not write. */
const char *const probe_target_keys[] = {"exec", "tcp", "http", "unix", NULL};

void probe_command_parse(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, struct probe_config *probe)
{
	if (node_is_null(node))
		report(context, node, where, "must not be empty");
	else if (node->type == YAML_SEQUENCE_NODE)
		command_list_parse(context, node, where, &probe->argv, &probe->argc);
	else if (node->type == YAML_SCALAR_NODE)
		report(context, node, where,
		       "must be a list of strings, not a string (for a shell line, write "
		       "[\"/bin/sh\", \"-c\", \"...\"])");
	else
		report(context, node, where, "must be a list of strings, not %s", node_kind(node));
}

/* One pattern of `readiness.log`: an extended regular expression, checked
 * here (line_pattern.h: no back-references, a bounded cost) so that a bad
 * one is said at its place, not when the task runs. */
static char *log_pattern_parse(struct load_context *context, const yaml_node_t *node,
			       const struct where *where)
{
	const char *text = expect_string(context, node, where);
	if (!text)
		return NULL;
	if (!*text) {
		report(context, node, where, "is empty, and would match every line");
		return NULL;
	}
	char error[512];
	size_t offset = 0;
	struct line_pattern *compiled = line_pattern_compile(text, &offset, error, sizeof(error));
	if (!compiled) {
		report_at(context, node, offset, where, "%s", error);
		return NULL;
	}
	line_pattern_free(compiled);
	return xstrdup(text);
}

/* `log: REGEX`, or `log: {ready: REGEX, not_ready: REGEX}`. */
static bool log_patterns_parse(struct load_context *context, const yaml_node_t *node,
			       const struct where *where, struct readiness_config *out)
{
	char buffer[64];
	struct where field_where = where_field(where, "log", buffer, sizeof(buffer));
	if (node->type != YAML_MAPPING_NODE) {
		out->log_ready = log_pattern_parse(context, node, &field_where);
		return out->log_ready != NULL;
	}
	struct map_entries fields;
	char inner_buffer[64];
	struct where inner;
	map_collect(context, node, &field_where, "key", &fields);
	map_check_keys(context, &fields, &field_where, log_keys);
	const yaml_node_t *ready = map_lookup(&fields, "ready");
	const yaml_node_t *not_ready = map_lookup(&fields, "not_ready");
	if (ready) {
		inner = where_field(&field_where, "ready", inner_buffer, sizeof(inner_buffer));
		out->log_ready = log_pattern_parse(context, ready, &inner);
	} else if (!map_has_key_or_typo(&fields, log_keys, "ready")) {
		report(context, node, &field_where, "missing \"ready\", the line to wait for");
	}
	if (not_ready) {
		inner = where_field(&field_where, "not_ready", inner_buffer, sizeof(inner_buffer));
		out->log_not_ready = log_pattern_parse(context, not_ready, &inner);
	}
	map_entries_free(&fields);
	return out->log_ready != NULL;
}

/* Which kind the map declares; -1 when that cannot be told (neither key,
 * both, or a wrong notify method: each reported). */
static int parse_readiness_kind(struct load_context *context, const yaml_node_t *node,
				const struct map_entries *fields, const struct where *where,
				struct readiness_config *out)
{
	const yaml_node_t *notify = map_lookup(fields, "notify");
	char buffer[64];
	struct where field_where;
	int method;
	const yaml_node_t *probe = NULL;
	const char *probe_key = NULL;

	for (const char *const *key = probe_target_keys; *key && !probe; key++)
		if ((probe = map_lookup(fields, *key)))
			probe_key = *key;
	const yaml_node_t *log = map_lookup(fields, "log");
	if (!probe && log) {
		probe = log;
		probe_key = "log";
	} else if (probe && log && !notify) {
		notify = log; /* two choices: said below as for notify */
	}
	if (notify && probe) {
		/* At the second one: the first was a complete choice. */
		const yaml_node_t *later =
		    notify->start_mark.index > probe->start_mark.index ? notify : probe;

		report(context, later, where, "\"%s\" and \"%s\" exclude each other; keep one",
		       notify == log ? "log" : "notify", probe_key);
		return -1;
	}
	if (log) {
		if (!log_patterns_parse(context, log, where, out))
			return -1;
		out->kind = READINESS_LOG;
		return READINESS_LOG;
	}
	if (probe) {
		if (!probe_target_parse(context, node, fields, where, &out->probe))
			return -1;
		out->kind = READINESS_PROBE;
		return READINESS_PROBE;
	}
	if (notify) {
		field_where = where_field(where, "notify", buffer, sizeof(buffer));
		method =
		    expect_keyword(context, notify, &field_where, "notify method", notify_names, 2);
		if (method < 0)
			return -1;
		out->kind = method == NOTIFY_FD ? READINESS_NOTIFY_FD : READINESS_NOTIFY_SYSTEMD;
		return (int)out->kind;
	}
	if (!map_has_key_or_typo(fields, readiness_keys, "notify") &&
	    !map_has_key_or_typo(fields, readiness_keys, "exec"))
		report(context, node, where,
		       "missing \"notify\" (systemd or fd), \"log\" (a line to wait for) or a "
		       "probe: \"exec\" (a command), \"tcp\", \"http\" or \"unix\"");
	return -1;
}

/* `continuous` and its `failures`: a probe goes on after the start, and
 * notify systemd takes RELOADING=1 as "not ready"; a notify fd, said once,
 * cannot say it again. */
static void parse_continuous(struct load_context *context, const struct map_entries *fields,
			     const struct where *where, int kind, struct readiness_config *out)
{
	const yaml_node_t *field, *failures = map_lookup(fields, "failures");
	char buffer[64];
	struct where field_where;
	if ((field = map_lookup(fields, "continuous"))) {
		field_where = where_field(where, "continuous", buffer, sizeof(buffer));
		if (expect_bool(context, field, &field_where, &out->continuous) &&
		    out->continuous && kind == READINESS_NOTIFY_FD) {
			report(context, field, &field_where,
			       "does not go with \"notify: fd\" (its newline is said once; take "
			       "a probe, or notify: systemd with RELOADING=1 and READY=1)");
			out->continuous = false;
		}
	}
	if (kind == READINESS_PROBE && out->continuous)
		out->failures = READINESS_DEFAULT_FAILURES;
	if (!failures)
		return;
	field_where = where_field(where, "failures", buffer, sizeof(buffer));
	if (kind == READINESS_PROBE && out->continuous)
		parse_failures(context, failures, &field_where, &out->failures);
	else if (kind >= 0)
		report(context, failures, &field_where,
		       kind == READINESS_PROBE
			   ? "only goes with \"continuous: true\" (until the task is first ready, "
			     "failures only mean \"not ready yet\")"
			   : "only goes with a probe and \"continuous: true\"");
}

/* Why a key of probes is refused with another kind of readiness. */
static const char *not_polled(int kind)
{
	return kind == READINESS_LOG
		   ? "only goes with a probe (a task's output is read as it comes, not polled)"
		   : "only goes with a probe (a notifying task is not polled)";
}

/* `log.not_ready` says a ready task is not ready any more: it needs
 * `continuous`, and `continuous` with `log` needs it. */
static void check_log_continuous(struct load_context *context, const struct map_entries *fields,
				 const struct where *where, const struct readiness_config *out)
{
	char buffer[64];
	struct where field_where;
	if (out->log_not_ready && !out->continuous) {
		field_where = where_field(where, "log", buffer, sizeof(buffer));
		report(context, map_lookup(fields, "log"), &field_where,
		       "\"not_ready\" only goes with \"continuous: true\" (until the task is "
		       "first ready, it is not ready anyway)");
	} else if (out->continuous && out->log_ready && !out->log_not_ready) {
		field_where = where_field(where, "continuous", buffer, sizeof(buffer));
		report(context, map_lookup(fields, "continuous"), &field_where,
		       "with \"log\", needs the line that says the task is not ready any more: "
		       "log: {ready: REGEX, not_ready: REGEX}");
	}
}

void readiness_parse(struct load_context *context, const yaml_node_t *node,
		     const struct where *where, enum lifecycle_stage stage,
		     struct readiness_config *out)
{
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[64];
	struct where field_where;
	uint64_t interval_ms = READINESS_DEFAULT_INTERVAL_MS;
	int kind;

	if (!stage_keeps_running(stage)) {
		report(context, node, where,
		       stage == STAGE_POSTSTOP
			   ? "only for main tasks and sidecars; nothing waits for a poststop task"
			   : "only for main tasks and sidecars; an ephemeral task is ready when it "
			     "exits 0");
		return;
	}
	if (!expect_map(context, node, where,
			"a map with \"notify\" or a probe (\"exec\", \"tcp\", ...)"))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, readiness_keys);
	kind = parse_readiness_kind(context, node, &fields, where, out);

	/* fd and interval belong to one kind each; with no valid kind there
	 * is nothing to hold them against. */
	if ((field = map_lookup(&fields, "fd"))) {
		field_where = where_field(where, "fd", buffer, sizeof(buffer));
		if (kind == READINESS_NOTIFY_FD)
			parse_notify_fd(context, field, &field_where, &out->fd);
		else if (kind >= 0)
			report(context, field, &field_where, "only goes with \"notify: fd\"");
	} else if (kind == READINESS_NOTIFY_FD &&
		   !map_has_key_or_typo(&fields, readiness_keys, "fd")) {
		report(context, node, where,
		       "\"notify: fd\" needs \"fd\", the fd number the task writes to (%d to %d)",
		       NOTIFY_FD_MIN, NOTIFY_FD_MAX);
	}
	if ((field = map_lookup(&fields, "interval"))) {
		field_where = where_field(where, "interval", buffer, sizeof(buffer));
		if (kind == READINESS_PROBE)
			parse_positive_duration(context, field, &field_where, &interval_ms);
		else if (kind >= 0)
			report(context, field, &field_where, "%s", not_polled(kind));
	}
	if (kind == READINESS_PROBE) {
		parse_probe_timing(context, &fields, where, &out->probe);
	} else if (kind >= 0) {
		for (const char *const *key =
			 (const char *const[]){"start_interval", "initial_delay", "inside",
					       "start_period", NULL};
		     *key; key++)
			if ((field = map_lookup(&fields, *key))) {
				field_where = where_field(where, *key, buffer, sizeof(buffer));
				report(context, field, &field_where, "%s", not_polled(kind));
			}
	}
	if ((field = map_lookup(&fields, "timeout"))) {
		field_where = where_field(where, "timeout", buffer, sizeof(buffer));
		expect_duration(context, field, &field_where, &out->timeout_ms);
	}
	if ((field = map_lookup(&fields, "watchdog"))) {
		field_where = where_field(where, "watchdog", buffer, sizeof(buffer));
		if (kind == READINESS_NOTIFY_SYSTEMD)
			parse_positive_duration(context, field, &field_where, &out->watchdog_ms);
		else if (kind >= 0)
			report(context, field, &field_where,
			       "only goes with \"notify: systemd\" (WATCHDOG=1 comes that way)");
	}

	parse_continuous(context, &fields, where, kind, out);
	if (kind == READINESS_LOG)
		check_log_continuous(context, &fields, where, out);

	if (kind == READINESS_PROBE) {
		out->start_period_ms =
		    out->timeout_ms ? out->timeout_ms : READINESS_DEFAULT_START_PERIOD_MS;
		if ((field = map_lookup(&fields, "start_period"))) {
			field_where = where_field(where, "start_period", buffer, sizeof(buffer));
			expect_duration(context, field, &field_where, &out->start_period_ms);
		}
		/* A run is cut at the interval, so that runs never overlap and
		 * a hung probe does not hold back the next one. */
		out->probe.interval_ms = interval_ms;
		out->probe.timeout_ms = interval_ms;
	}
	map_entries_free(&fields);
}

/* A health timeout longer than the interval would let runs overlap.
 * `interval_set` says whether the interval was written or is the default. */
static void check_health_timeout(struct load_context *context, const yaml_node_t *timeout_node,
				 const struct where *where, const struct probe_config *probe,
				 bool interval_set)
{
	char timeout[32], interval[32];

	if (probe->timeout_ms <= probe->interval_ms)
		return;
	format_duration_ms(probe->timeout_ms, timeout, sizeof(timeout));
	format_duration_ms(probe->interval_ms, interval, sizeof(interval));
	report(context, timeout_node, where, "%s is longer than health.interval (%s%s)", timeout,
	       interval, interval_set ? "" : ", the default");
}

void health_parse(struct load_context *context, const yaml_node_t *node, const struct where *where,
		  enum lifecycle_stage stage, struct health_config *out)
{
	struct map_entries fields;
	const yaml_node_t *field, *interval_node, *timeout_node;
	char buffer[64], timeout_buffer[64];
	struct where field_where, timeout_where;
	struct probe_config *probe = &out->probe;
	bool interval_valid = false, timeout_valid = false;

	if (!stage_keeps_running(stage)) {
		report(
		    context, node, where,
		    stage == STAGE_POSTSTOP
			? "only for main tasks and sidecars; a poststop task runs once, to its exit"
			: "only for main tasks and sidecars; an ephemeral task runs once, to its "
			  "exit");
		return;
	}
	if (!expect_map(context, node, where, "a map with a probe (\"exec\", \"tcp\", ...)"))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, health_keys);

	if (!probe_target_parse(context, node, &fields, where, probe) &&
	    !map_has_key_or_typo(&fields, health_keys, "exec"))
		report(context, node, where,
		       "missing a probe: \"exec\" (a command), \"tcp\", \"http\" or \"unix\"");
	probe->interval_ms = HEALTH_DEFAULT_INTERVAL_MS;
	if ((interval_node = map_lookup(&fields, "interval"))) {
		field_where = where_field(where, "interval", buffer, sizeof(buffer));
		interval_valid = parse_positive_duration(context, interval_node, &field_where,
							 &probe->interval_ms);
	}
	if ((timeout_node = map_lookup(&fields, "timeout"))) {
		timeout_where =
		    where_field(where, "timeout", timeout_buffer, sizeof(timeout_buffer));
		timeout_valid = parse_positive_duration(context, timeout_node, &timeout_where,
							&probe->timeout_ms);
	}
	parse_probe_timing(context, &fields, where, probe);
	out->failures = HEALTH_DEFAULT_FAILURES;
	if ((field = map_lookup(&fields, "failures"))) {
		field_where = where_field(where, "failures", buffer, sizeof(buffer));
		parse_failures(context, field, &field_where, &out->failures);
	}

	if (!timeout_node) {
		/* An unset timeout never exceeds the interval: 5s, or the
		 * interval when that is shorter. */
		probe->timeout_ms = probe->interval_ms < HEALTH_DEFAULT_TIMEOUT_MS
					? probe->interval_ms
					: HEALTH_DEFAULT_TIMEOUT_MS;
	} else if (timeout_valid && (interval_valid || !interval_node)) {
		/* A wrong interval was reported already: comparing with the
		 * default instead would only add noise about the same line. */
		check_health_timeout(context, timeout_node, &timeout_where, probe,
				     interval_node != NULL);
	}
	map_entries_free(&fields);
}
