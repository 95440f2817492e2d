#include "supervisor/lifecycle/dependency_rules.h"

#include <stdint.h>

enum dependency_verdict dependency_verdict(enum dependency_condition condition,
					   const struct dependency_target *target)
{
	bool dead = target->state == TASK_DEAD;
	if (dead && target->failed)
		return condition == DEPENDS_EXITED ? DEPENDENCY_HOLDS : DEPENDENCY_BROKEN;

	bool running = target->state == TASK_RUNNING && !target->stopping;
	bool holds = false;
	switch (condition) {
	case DEPENDS_STARTED:
		holds = running || (dead && target->succeeded);
		break;
	case DEPENDS_READY:
		holds = (running && target->ready) || (dead && target->succeeded);
		break;
	case DEPENDS_HEALTHY:
		holds = running && target->healthy;
		break;
	case DEPENDS_COMPLETED:
		holds = dead && target->succeeded;
		break;
	case DEPENDS_EXITED:
		holds = dead;
		break;
	}
	if (holds)
		return DEPENDENCY_HOLDS;
	return dead && !target->may_run_again ? DEPENDENCY_BROKEN : DEPENDENCY_WAITS;
}

enum dependency_verdict dependency_wait_verdict(const struct dependency_wait *wait,
						const struct dependency_target *target)
{
	enum dependency_verdict verdict = dependency_verdict(wait->condition, target);
	if (verdict == DEPENDENCY_HOLDS)
		return DEPENDENCY_HOLDS;
	if (wait->optional) {
		bool gone = verdict == DEPENDENCY_BROKEN || target->state == TASK_DEAD;
		return gone || wait->timed_out ? DEPENDENCY_WAIVED : DEPENDENCY_WAITS;
	}
	if (verdict == DEPENDENCY_WAITS && wait->timed_out)
		return DEPENDENCY_TIMED_OUT;
	return verdict;
}

bool dependency_verdict_allows_start(enum dependency_verdict verdict)
{
	return verdict == DEPENDENCY_HOLDS || verdict == DEPENDENCY_WAIVED;
}

uint64_t dependency_wait_deadline(uint64_t began_ms, uint64_t timeout_ms, uint64_t now_ms)
{
	if (timeout_ms == 0 || timeout_ms > UINT64_MAX - began_ms)
		return 0;
	uint64_t deadline = began_ms + timeout_ms;
	return deadline > now_ms ? deadline : 0;
}

unsigned dependency_stop_tier(enum lifecycle_stage stage)
{
	switch (stage) {
	case STAGE_PRESTART_EPHEMERAL:
	case STAGE_MAIN:
	case STAGE_POSTSTART_EPHEMERAL:
		return 0;
	case STAGE_POSTSTART_SIDECAR:
		return 1;
	case STAGE_PRESTART_SIDECAR:
		return 2;
	case STAGE_POSTSTOP:
		break;
	}
	return STOP_TIER_NONE;
}

/* Kahn's algorithm on the reversed graph: a task may be placed once every
 * task that waits for it is. Among those that may, one FIFO queue per tier
 * picks the lowest tier, then the lowest number (tasks enter the queues in
 * number order, and later only as their last dependent is placed). */
void dependency_stop_order(size_t count, const unsigned *tier, const struct dependency_edge *edges,
			   size_t edge_count, size_t *scratch, size_t *position)
{
	enum { QUEUES = STOP_TIER_NONE + 1 };
	size_t *waiting_dependents = scratch;          /* count */
	size_t *first_edge = scratch + count;          /* count + 1: edges by `from` */
	size_t *edge_targets = first_edge + count + 1; /* edge_count */
	size_t *queue = edge_targets + edge_count;     /* count */
	size_t head[QUEUES], tail[QUEUES];

	for (size_t i = 0; i < count; i++)
		waiting_dependents[i] = first_edge[i] = 0;
	first_edge[count] = 0;
	for (size_t e = 0; e < edge_count; e++) {
		waiting_dependents[edges[e].to]++;
		first_edge[edges[e].from + 1]++;
	}
	for (size_t i = 0; i < count; i++)
		first_edge[i + 1] += first_edge[i];
	/* Counting sort of the edges by their `from`, reusing queue as cursors. */
	for (size_t i = 0; i < count; i++)
		queue[i] = first_edge[i];
	for (size_t e = 0; e < edge_count; e++)
		edge_targets[queue[edges[e].from]++] = edges[e].to;

	/* Every task enters the queue of its tier exactly once, so one array
	 * of `count` slots, cut by the tiers' sizes, holds all the queues. */
	size_t tier_size[QUEUES] = {0};
	for (size_t i = 0; i < count; i++)
		tier_size[tier[i] < QUEUES ? tier[i] : STOP_TIER_NONE]++;
	size_t start = 0;
	for (unsigned q = 0; q < QUEUES; q++) {
		head[q] = tail[q] = start;
		start += tier_size[q];
	}
	for (size_t i = 0; i < count; i++)
		if (waiting_dependents[i] == 0) {
			unsigned q = tier[i] < QUEUES ? tier[i] : STOP_TIER_NONE;
			queue[tail[q]++] = i;
		}

	size_t placed = 0;
	for (;;) {
		unsigned q = 0;
		while (q < QUEUES && head[q] == tail[q])
			q++;
		if (q == QUEUES)
			break;
		size_t task = queue[head[q]++];
		position[task] = placed++;
		for (size_t e = first_edge[task]; e < first_edge[task + 1]; e++) {
			size_t target = edge_targets[e];
			if (--waiting_dependents[target] == 0) {
				unsigned t = tier[target] < QUEUES ? tier[target] : STOP_TIER_NONE;
				queue[tail[t]++] = target;
			}
		}
	}
	/* Only with a cycle, which the loader refuses: keep numbers valid. */
	for (size_t i = 0; placed < count && i < count; i++)
		if (waiting_dependents[i] != 0)
			position[i] = placed++;
}
