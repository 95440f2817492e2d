#include "supervisor/parent/parent_summary.h"

#include <stdio.h>
#include <string.h>

#include "base/text_append.h"

static const char *const kind_names[PARENT_TASK_KIND_COUNT] = {
    [PARENT_TASK_READY] = "ready",
    [PARENT_TASK_STARTING] = "starting",
    [PARENT_TASK_NOT_READY] = "not ready",
    [PARENT_TASK_RESTARTING] = "restarting",
    [PARENT_TASK_STOPPING] = "stopping",
    [PARENT_TASK_FAILED] = "failed",
    [PARENT_TASK_STOPPED] = "stopped",
    [PARENT_TASK_AT_REST] = "at rest",
    [PARENT_TASK_ROLLING] = "being replaced",
};

int parent_task_kind(const struct ready_rule_facts *facts)
{
	switch (ready_rule_verdict(facts)) {
	case READY_VERDICT_NOT_ASKED:
		return -1;
	case READY_VERDICT_AT_REST:
		return PARENT_TASK_AT_REST;
	case READY_VERDICT_READY:
		return PARENT_TASK_READY;
	case READY_VERDICT_ROLLING:
		return PARENT_TASK_ROLLING;
	case READY_VERDICT_NOT_READY:
		break;
	}
	if (facts->restart_pending)
		return PARENT_TASK_RESTARTING;
	switch (facts->state) {
	case READY_RULE_RUNNING:
		return facts->ready_lost ? PARENT_TASK_NOT_READY : PARENT_TASK_STARTING;
	case READY_RULE_STOPPING:
		return PARENT_TASK_STOPPING;
	case READY_RULE_DEAD:
	case READY_RULE_WAITING:
		return facts->failed || facts->last_exit_failed ? PARENT_TASK_FAILED
								: PARENT_TASK_STOPPED;
	case READY_RULE_PENDING:
	case READY_RULE_STARTING:
	case READY_RULE_UNKNOWN:
		break;
	}
	return PARENT_TASK_STARTING;
}

void parent_summary_add(struct parent_summary *summary, const struct ready_rule_facts *facts,
			const char *name, bool awaited)
{
	int kind = parent_task_kind(facts);
	if (kind < 0)
		return;
	summary->total++;
	if (summary->count[kind] < PARENT_SUMMARY_NAMES)
		summary->names[kind][summary->count[kind]] = name;
	summary->count[kind]++;
	if (awaited && kind != PARENT_TASK_READY && kind != PARENT_TASK_AT_REST &&
	    kind != PARENT_TASK_ROLLING)
		summary->holding_ready++;
}

bool parent_summary_ready(const struct parent_summary *summary)
{
	return summary->holding_ready == 0;
}

/* Ready tasks and tasks at rest are counted; the others are named, since
 * they are what someone looking at the line wants to find. */
static void append_names(const struct parent_summary *summary, enum parent_task_kind kind,
			 char *buffer, size_t size, size_t *used)
{
	unsigned count = summary->count[kind];
	if (kind == PARENT_TASK_READY || kind == PARENT_TASK_AT_REST)
		return;
	unsigned named = count < PARENT_SUMMARY_NAMES ? count : PARENT_SUMMARY_NAMES;
	text_append(buffer, size, used, " (");
	for (unsigned i = 0; i < named; i++)
		text_append(buffer, size, used, "%s%s", i ? ", " : "", summary->names[kind][i]);
	if (count > named)
		text_append(buffer, size, used, " and %u more", count - named);
	text_append(buffer, size, used, ")");
}

void parent_summary_format(const struct parent_summary *summary, const char *prefix, char *buffer,
			   size_t size)
{
	size_t used = 0;
	if (!size)
		return;
	buffer[0] = '\0';
	text_append(buffer, size, &used, "%s%u task%s", prefix ? prefix : "", summary->total,
		    summary->total == 1 ? "" : "s");
	bool first = true;
	for (int kind = 0; kind < PARENT_TASK_KIND_COUNT; kind++) {
		if (!summary->count[kind])
			continue;
		text_append(buffer, size, &used, "%s%u %s", first ? ": " : ", ",
			    summary->count[kind], kind_names[kind]);
		append_names(summary, (enum parent_task_kind)kind, buffer, size, &used);
		first = false;
	}
}
