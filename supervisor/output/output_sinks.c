#include "supervisor/output/output_sinks.h"

#include <stdlib.h>

void output_sinks_hand_each(const struct output_sink_ops *const *ops, void *const *sinks,
			    size_t count, size_t first, struct output_batch *batch)
{
	for (size_t i = first; i < count && batch->length; i++)
		ops[i]->lines(sinks[i], batch);
}

static void hand_from_list(const struct output_sinks *sinks, size_t first,
			   struct output_batch *batch)
{
	const struct output_sink_list *list = (const struct output_sink_list *)sinks;
	output_sinks_hand_each(list->ops, list->sink, list->count, first, batch);
}

void output_sink_list_init(struct output_sink_list *list)
{
	*list = (struct output_sink_list){.sinks = {.hand = hand_from_list}};
}

void output_sink_list_clear(struct output_sink_list *list)
{
	list->count = 0;
}

void output_sink_list_add(struct output_sink_list *list, const struct output_sink_ops *ops,
			  void *sink)
{
	if (list->count == OUTPUT_SINK_LIST_MAX)
		abort(); /* a programming error: the list is fixed at build time */
	list->ops[list->count] = ops;
	list->sink[list->count] = sink;
	list->count++;
}
