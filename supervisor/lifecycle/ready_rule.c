#include "supervisor/lifecycle/ready_rule.h"

#include <string.h>

static const char *const state_names[] = {
    [READY_RULE_PENDING] = "pending", [READY_RULE_STARTING] = "starting",
    [READY_RULE_RUNNING] = "running", [READY_RULE_STOPPING] = "stopping",
    [READY_RULE_DEAD] = "dead",       [READY_RULE_WAITING] = "waiting",
};

enum ready_rule_state ready_rule_state_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(state_names) / sizeof(state_names[0]); i++)
		if (strcmp(name, state_names[i]) == 0)
			return (enum ready_rule_state)i;
	return READY_RULE_UNKNOWN;
}

/* A readiness probe on corral must not fail for ever because a config has
 * a cron task or a migration that ran. A task stopped on request (`corral
 * stop`) is not at rest: what should be up is down, and a healthcheck
 * says so; a scheduled task stopped between its runs waits for its next
 * one. A crash waiting out its restart delay is on its way back up. */
static bool is_at_rest(const struct ready_rule_facts *facts)
{
	if (facts->state != READY_RULE_DEAD && facts->state != READY_RULE_WAITING)
		return false;
	if (facts->failed || facts->last_exit_failed)
		return false;
	if (facts->state == READY_RULE_DEAD && facts->last_exit_requested)
		return false;
	return !facts->restart_pending;
}

enum ready_verdict ready_rule_verdict(const struct ready_rule_facts *facts)
{
	if (!facts->stays_up)
		return READY_VERDICT_NOT_ASKED;
	if (is_at_rest(facts))
		return READY_VERDICT_AT_REST;
	if (facts->state == READY_RULE_RUNNING && facts->ready)
		return READY_VERDICT_READY;
	return facts->roll_covered ? READY_VERDICT_ROLLING : READY_VERDICT_NOT_READY;
}
