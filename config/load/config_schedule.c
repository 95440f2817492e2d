/* A task's `schedule:`: a one-shot run at the times of a cron expression
 * and/or every interval, with Kubernetes CronJob's concurrency policy, a
 * time zone and a rule for runs missed while the machine slept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const schedule_keys[] = {"cron",      "every",  "concurrency",
					    "time_zone", "missed", NULL};
static const char *const concurrency_names[] = {"skip", "replace", "allow"};
static const char *const missed_names[] = {"run_once", "skip"};

/* An IANA zone name with its file under /usr/share/zoneinfo (what
 * glibc reads for TZ). */
static void parse_time_zone(struct load_context *context, const yaml_node_t *node,
			    const struct where *where, struct schedule_config *out)
{
	const char *zone = expect_string(context, node, where);
	if (!zone)
		return;
	char path[512];
	struct stat status;
	snprintf(path, sizeof(path), "/usr/share/zoneinfo/%s", zone);
	if (!*zone || zone[0] == '/' || strstr(zone, "..") || stat(path, &status) < 0 ||
	    !S_ISREG(status.st_mode)) {
		report(context, node, where,
		       "unknown time zone %s (a name of /usr/share/zoneinfo, such as Europe/Paris "
		       "or UTC)",
		       quote(zone, node->data.scalar.length).text);
		return;
	}
	out->time_zone = xstrdup(zone);
}

void schedule_parse(struct load_context *context, const yaml_node_t *node,
		    const struct where *where, struct schedule_config *out)
{
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[64];
	struct where field_where;

	if (!expect_map(context, node, where, "a map with \"cron\" and/or \"every\""))
		return;
	out->set = true;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, schedule_keys);
	if ((field = map_lookup(&fields, "cron"))) {
		field_where = where_field(where, "cron", buffer, sizeof(buffer));
		const char *text = expect_string(context, field, &field_where);
		char error[256];
		if (text && cron_parse(text, &out->cron, error, sizeof(error)) < 0)
			report(context, field, &field_where, "%s", error);
		else if (text) {
			out->has_cron = true;
			out->cron_text = xstrdup(text);
		}
	}
	if ((field = map_lookup(&fields, "every"))) {
		field_where = where_field(where, "every", buffer, sizeof(buffer));
		uint64_t every;
		if (expect_duration(context, field, &field_where, &every)) {
			if (every >= 1000)
				out->every_ms = every;
			else
				report(context, field, &field_where, "must be 1s or more");
		}
	}
	if (!map_lookup(&fields, "cron") && !map_lookup(&fields, "every") &&
	    !map_has_key_or_typo(&fields, schedule_keys, "cron"))
		report(context, node, where,
		       "missing \"cron\" (\"0 3 * * *\", \"@hourly\") or \"every\" (10m)");
	if ((field = map_lookup(&fields, "concurrency"))) {
		field_where = where_field(where, "concurrency", buffer, sizeof(buffer));
		int index = expect_keyword(context, field, &field_where, "concurrency policy",
					   concurrency_names, 3);
		if (index == 2)
			report(context, field, &field_where,
			       "allow is not possible: a task is one process at a time in corral; "
			       "take skip (the default) or replace, or give the task instances");
		else if (index >= 0)
			out->concurrency = (enum schedule_concurrency)index;
	}
	if ((field = map_lookup(&fields, "missed"))) {
		field_where = where_field(where, "missed", buffer, sizeof(buffer));
		int index = expect_keyword(context, field, &field_where, "missed-run rule",
					   missed_names, 2);
		if (index >= 0)
			out->missed = (enum schedule_missed)index;
	}
	if ((field = map_lookup(&fields, "time_zone"))) {
		field_where = where_field(where, "time_zone", buffer, sizeof(buffer));
		parse_time_zone(context, field, &field_where, out);
	}
	map_entries_free(&fields);
}

void schedule_config_free(struct schedule_config *schedule)
{
	free(schedule->cron_text);
	free(schedule->time_zone);
	memset(schedule, 0, sizeof(*schedule));
}
