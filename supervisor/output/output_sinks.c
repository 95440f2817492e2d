#include "supervisor/output/output_sinks.h"

#include <stdlib.h>

void output_sinks_add(struct output_sinks *sinks, const struct output_sink_ops *ops, void *sink)
{
	if (sinks->count == OUTPUT_SINKS_MAX)
		abort(); /* a programming error: the list is fixed at build time */
	sinks->list[sinks->count].ops = ops;
	sinks->list[sinks->count].sink = sink;
	sinks->count++;
}

static void hand_from(const struct output_sinks *sinks, size_t first, struct output_batch *batch)
{
	for (size_t i = first; i < sinks->count && batch->length; i++)
		sinks->list[i].ops->lines(sinks->list[i].sink, batch);
}

void output_sinks_lines(const struct output_sinks *sinks, struct output_batch *batch)
{
	hand_from(sinks, 0, batch);
}

void output_sinks_lines_after_first(const struct output_sinks *sinks, struct output_batch *batch)
{
	hand_from(sinks, 1, batch);
}
