#include "supervisor/lifecycle/shutdown_budget.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "base/xmalloc.h"
#include "supervisor/lifecycle/dependency_rules.h"

/* The graph: a node per task, and helper nodes that stand for "every
 * running task of this tier placed up to here" (prefix) and "every running
 * task of this stage written from here on" (suffix), so that a task needs
 * one edge to each instead of one to every such task (a group of 10,000
 * tasks would otherwise make 10^8 edges). A node ends at
 *   max(its prekill hooks, the latest end of what it waits for) + its kill timeout;
 * helper nodes and tasks that are not running add nothing. */
struct node {
	size_t task;    /* its task's number, or SIZE_MAX for a helper */
	uint64_t first; /* the prekill hooks, from the start of the shutdown */
	uint64_t then;  /* the kill timeout, after its turn */
	uint64_t end;
	size_t latest; /* the node it waited for longest; SIZE_MAX: its own hooks */
	size_t edge_begin, edge_count;
	unsigned char visit; /* 0 new, 1 on the walk's stack, 2 done */
};

struct graph {
	struct node *nodes;
	size_t node_count;
	size_t *edges; /* from node (by edge_begin) to what it waits for */
	size_t edge_count;
	/* While building: (from, to) pairs, sorted into `edges` after. */
	size_t (*pairs)[2];
	size_t pair_count, pair_capacity;
};

/* One task of the config, numbered group after group, as
 * task_dependencies.c numbers them for the stop order. */
struct task_facts {
	const struct task_config *config;
	size_t group;
	size_t index; /* in its group */
	unsigned tier;
	size_t position; /* in the stop order */
	bool running;    /* at a shutdown, at worst */
	uint64_t prekill, prestart, after;
};

static uint64_t hooks_of(const struct task_config *task, enum hook_stage stage)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < task->hook_count; i++)
		if (task->hooks[i].stage == stage)
			sum += task->hooks[i].timeout_ms;
	return sum;
}

static size_t add_node(struct graph *graph, size_t task, uint64_t first, uint64_t then)
{
	graph->nodes = xreallocarray(graph->nodes, graph->node_count + 1, sizeof(*graph->nodes));
	graph->nodes[graph->node_count] =
	    (struct node){.task = task, .first = first, .then = then, .latest = SIZE_MAX};
	return graph->node_count++;
}

static void add_edge(struct graph *graph, size_t from, size_t to)
{
	if (graph->pair_count == graph->pair_capacity) {
		graph->pair_capacity = graph->pair_capacity ? 2 * graph->pair_capacity : 64;
		graph->pairs =
		    xreallocarray(graph->pairs, graph->pair_capacity, sizeof(*graph->pairs));
	}
	graph->pairs[graph->pair_count][0] = from;
	graph->pairs[graph->pair_count++][1] = to;
}

/* The edges, grouped by the node they leave. */
static void seal_edges(struct graph *graph)
{
	graph->edges = xcalloc(graph->pair_count + 1, sizeof(*graph->edges));
	for (size_t i = 0; i < graph->pair_count; i++)
		graph->nodes[graph->pairs[i][0]].edge_count++;
	size_t begin = 0;
	for (size_t n = 0; n < graph->node_count; n++) {
		graph->nodes[n].edge_begin = begin;
		begin += graph->nodes[n].edge_count;
		graph->nodes[n].edge_count = 0;
	}
	for (size_t i = 0; i < graph->pair_count; i++) {
		struct node *from = &graph->nodes[graph->pairs[i][0]];
		graph->edges[from->edge_begin + from->edge_count++] = graph->pairs[i][1];
	}
	graph->edge_count = graph->pair_count;
	free(graph->pairs);
	graph->pairs = NULL;
}

/* Numbers the tasks and places them in the stop order, as
 * task_dependencies.c's compute_stop_order does (all at 0 without any
 * `after:`: the tiers alone decide). */
static struct task_facts *number_tasks(const struct config *config, size_t *count_out)
{
	size_t count = 0, edge_count = 0;
	for (size_t g = 0; g < config->group_count; g++)
		count += config->groups[g].task_count;
	struct task_facts *tasks = xcalloc(count + 1, sizeof(*tasks));
	size_t *first_of_group = xcalloc(config->group_count + 1, sizeof(*first_of_group));
	size_t n = 0;
	for (size_t g = 0; g < config->group_count; g++) {
		first_of_group[g] = n;
		for (size_t t = 0; t < config->groups[g].task_count; t++) {
			const struct task_config *task = &config->groups[g].tasks[t];
			enum lifecycle_stage stage = task->stage;
			tasks[n++] = (struct task_facts){
			    .config = task,
			    .group = g,
			    .index = t,
			    .tier = dependency_stop_tier(stage),
			    .running = stage == STAGE_MAIN || lifecycle_stage_is_sidecar(stage),
			    .prekill = hooks_of(task, HOOK_STAGE_PREKILL),
			    .prestart = hooks_of(task, HOOK_STAGE_PRESTART),
			    .after =
				hooks_of(task, HOOK_STAGE_EXITED) + hooks_of(task, HOOK_STAGE_STOP),
			};
			edge_count += task->after_count;
		}
	}
	if (edge_count) {
		unsigned *tiers = xcalloc(count, sizeof(*tiers));
		struct dependency_edge *edges = xcalloc(edge_count, sizeof(*edges));
		size_t *scratch = xcalloc(3 * count + 1 + edge_count, sizeof(*scratch));
		size_t *positions = xcalloc(count, sizeof(*positions));
		size_t e = 0;
		for (size_t i = 0; i < count; i++) {
			tiers[i] = tasks[i].tier;
			for (size_t d = 0; d < tasks[i].config->after_count; d++) {
				const struct task_dependency *after = &tasks[i].config->after[d];
				edges[e++] = (struct dependency_edge){
				    .from = i,
				    .to = first_of_group[after->group_index] + after->task_index};
			}
		}
		dependency_stop_order(count, tiers, edges, edge_count, scratch, positions);
		for (size_t i = 0; i < count; i++)
			tasks[i].position = positions[i];
		free(positions);
		free(scratch);
		free(edges);
		free(tiers);
	}
	free(first_of_group);
	*count_out = count;
	return tasks;
}

static int by_position(const void *a, const void *b, void *context)
{
	const struct task_facts *tasks = context;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	if (tasks[x].position != tasks[y].position)
		return tasks[x].position < tasks[y].position ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The running tasks of group `g` that `keep` takes, by number. */
static size_t select_tasks(const struct task_facts *tasks, size_t count, size_t g, unsigned key,
			   bool by_tier, size_t *out)
{
	size_t found = 0;
	for (size_t i = 0; i < count; i++) {
		if (tasks[i].group != g || !tasks[i].running)
			continue;
		unsigned of = by_tier ? tasks[i].tier
				      : (unsigned)lifecycle_stage_step(tasks[i].config->stage);
		if (of == key)
			out[found++] = i;
	}
	return found;
}

/* A task waits for the running tasks of lower tiers in its group placed
 * before it in the stop order (task_dependencies_stop_blocked): one edge
 * to the prefix of each lower tier that ends at its position. */
static void link_tiers(struct graph *graph, const struct task_facts *tasks, size_t count,
		       size_t group, size_t *scratch)
{
	size_t prefix_begin[STOP_TIER_COUNT], length[STOP_TIER_COUNT];
	size_t *members[STOP_TIER_COUNT];
	for (unsigned tier = 0; tier < STOP_TIER_COUNT; tier++) {
		members[tier] = scratch + tier * count;
		length[tier] = select_tasks(tasks, count, group, tier, true, members[tier]);
		qsort_r(members[tier], length[tier], sizeof(size_t), by_position, (void *)tasks);
		prefix_begin[tier] = graph->node_count;
		for (size_t k = 0; k < length[tier]; k++) {
			size_t node = add_node(graph, SIZE_MAX, 0, 0);
			add_edge(graph, node, members[tier][k]);
			if (k)
				add_edge(graph, node, node - 1);
		}
	}
	for (unsigned tier = 1; tier < STOP_TIER_COUNT; tier++)
		for (size_t k = 0; k < length[tier]; k++) {
			size_t task = members[tier][k];
			for (unsigned lower = 0; lower < tier; lower++) {
				/* How many are placed at or before it. */
				size_t low = 0, high = length[lower];
				while (low < high) {
					size_t middle = low + (high - low) / 2;
					if (tasks[members[lower][middle]].position <=
					    tasks[task].position)
						low = middle + 1;
					else
						high = middle;
				}
				if (low)
					add_edge(graph, task, prefix_begin[lower] + low - 1);
			}
		}
}

/* `order: sequential`: a task waits for the running tasks of its stage
 * written after it (later_in_sequence_alive): one edge to the suffix that
 * begins after it. */
static void link_sequence(struct graph *graph, const struct task_facts *tasks, size_t count,
			  size_t group, size_t *scratch)
{
	for (unsigned step = 0; step < 3; step++) {
		size_t length = select_tasks(tasks, count, group, step, false, scratch);
		size_t suffix_begin = graph->node_count;
		for (size_t k = 0; k < length; k++)
			add_node(graph, SIZE_MAX, 0, 0);
		for (size_t k = 0; k < length; k++) {
			add_edge(graph, suffix_begin + k, scratch[k]);
			if (k + 1 < length) {
				add_edge(graph, suffix_begin + k, suffix_begin + k + 1);
				add_edge(graph, scratch[k], suffix_begin + k + 1);
			}
		}
	}
}

/* A task waits for the tasks that wait for it (`after:`), in any group;
 * through one that is not running to the tasks that wait for that one
 * (dependent_being_stopped). */
static void link_dependents(struct graph *graph, const struct task_facts *tasks, size_t count,
			    const struct config *config)
{
	size_t *first_of_group = xcalloc(config->group_count + 1, sizeof(*first_of_group));
	for (size_t i = 0; i < count; i++)
		if (tasks[i].index == 0)
			first_of_group[tasks[i].group] = i;
	for (size_t i = 0; i < count; i++)
		for (size_t d = 0; d < tasks[i].config->after_count; d++) {
			const struct task_dependency *after = &tasks[i].config->after[d];
			add_edge(graph, first_of_group[after->group_index] + after->task_index, i);
		}
	free(first_of_group);
}

/* The tasks of a cycle on the walk's stack, from `node` on. */
static void note_cycle(struct shutdown_budget *budget, const struct graph *graph,
		       const struct task_facts *tasks, const size_t *stack, size_t depth,
		       size_t node)
{
	if (budget->cycle)
		return;
	size_t from = depth;
	while (from > 0 && stack[from - 1] != node)
		from--;
	if (from == 0)
		return;
	budget->cycle = xcalloc(depth - from + 2, sizeof(*budget->cycle));
	for (size_t k = from - 1; k < depth; k++)
		if (graph->nodes[stack[k]].task != SIZE_MAX)
			budget->cycle[budget->cycle_length++] =
			    tasks[graph->nodes[stack[k]].task].config;
	if (budget->cycle_length)
		budget->cycle[budget->cycle_length++] = budget->cycle[0];
}

/* Every node's end, by a walk that holds its own stack (a chain of 10,000
 * dependencies would overflow the C stack). */
static void compute_ends(struct graph *graph, const struct task_facts *tasks,
			 struct shutdown_budget *budget)
{
	size_t *stack = xcalloc(graph->node_count + 1, sizeof(*stack));
	size_t *next_edge = xcalloc(graph->node_count + 1, sizeof(*next_edge));
	for (size_t root = 0; root < graph->node_count; root++) {
		if (graph->nodes[root].visit)
			continue;
		size_t depth = 0;
		stack[depth++] = root;
		graph->nodes[root].visit = 1;
		while (depth) {
			size_t n = stack[depth - 1];
			struct node *node = &graph->nodes[n];
			if (next_edge[n] < node->edge_count) {
				size_t to = graph->edges[node->edge_begin + next_edge[n]++];
				if (graph->nodes[to].visit == 1)
					note_cycle(budget, graph, tasks, stack, depth, to);
				else if (graph->nodes[to].visit == 0) {
					graph->nodes[to].visit = 1;
					stack[depth++] = to;
				}
				continue;
			}
			uint64_t start = node->first;
			for (size_t e = 0; e < node->edge_count; e++) {
				size_t to = graph->edges[node->edge_begin + e];
				if (graph->nodes[to].visit == 2 && graph->nodes[to].end > start) {
					start = graph->nodes[to].end;
					node->latest = to;
				}
			}
			node->end = start + node->then;
			node->visit = 2;
			depth--;
		}
	}
	free(next_edge);
	free(stack);
}

static void add_link(struct shutdown_budget *budget, struct shutdown_link link)
{
	budget->chain =
	    xreallocarray(budget->chain, budget->chain_length + 1, sizeof(*budget->chain));
	budget->chain[budget->chain_length++] = link;
}

/* The chain that ends at task node `last`, first task first. */
static void trace_chain(struct shutdown_budget *budget, const struct graph *graph,
			const struct task_facts *tasks, size_t last)
{
	size_t first_link = budget->chain_length;
	for (size_t n = last; n != SIZE_MAX; n = graph->nodes[n].latest) {
		const struct node *node = &graph->nodes[n];
		if (node->task == SIZE_MAX || !tasks[node->task].running)
			continue;
		add_link(budget, (struct shutdown_link){
				     .task = tasks[node->task].config,
				     .prekill_ms = node->latest == SIZE_MAX ? node->first : 0,
				     .kill_timeout_ms = node->then,
				 });
	}
	/* Found last first: put in time order. */
	for (size_t a = first_link, b = budget->chain_length; a + 1 < b; a++, b--) {
		struct shutdown_link swap = budget->chain[a];
		budget->chain[a] = budget->chain[b - 1];
		budget->chain[b - 1] = swap;
	}
}

void shutdown_budget_compute(const struct config *config, struct shutdown_budget *budget)
{
	*budget = (struct shutdown_budget){0};
	size_t count;
	struct task_facts *tasks = number_tasks(config, &count);
	struct graph graph = {0};
	for (size_t i = 0; i < count; i++)
		add_node(&graph, i, tasks[i].running ? tasks[i].prekill : 0,
			 tasks[i].running ? tasks[i].config->kill_timeout_ms : 0);
	size_t *scratch = xcalloc(STOP_TIER_COUNT * count + 1, sizeof(*scratch));
	for (size_t g = 0; g < config->group_count; g++) {
		link_tiers(&graph, tasks, count, g, scratch);
		if (config->groups[g].sequential)
			link_sequence(&graph, tasks, count, g, scratch);
	}
	free(scratch);
	link_dependents(&graph, tasks, count, config);
	seal_edges(&graph);
	compute_ends(&graph, tasks, budget);

	/* Each group's last running task to die: its poststop tasks start
	 * then. */
	size_t *latest = xcalloc(config->group_count + 1, sizeof(*latest));
	for (size_t g = 0; g < config->group_count; g++)
		latest[g] = SIZE_MAX;
	for (size_t i = 0; i < count; i++) {
		size_t *group_latest = &latest[tasks[i].group];
		if (tasks[i].running && (*group_latest == SIZE_MAX ||
					 graph.nodes[i].end > graph.nodes[*group_latest].end))
			*group_latest = i;
	}
	/* What ends last: a running task and its hooks after, or a poststop
	 * task once every other task of its group is dead. */
	size_t last = SIZE_MAX, poststop = SIZE_MAX;
	uint64_t total = 0;
	for (size_t i = 0; i < count; i++) {
		if (tasks[i].running && graph.nodes[i].end + tasks[i].after > total) {
			total = graph.nodes[i].end + tasks[i].after;
			last = i;
			poststop = SIZE_MAX;
		}
		if (tasks[i].config->stage != STAGE_POSTSTOP)
			continue;
		size_t before = latest[tasks[i].group];
		uint64_t start = before == SIZE_MAX ? 0 : graph.nodes[before].end;
		if (start + tasks[i].prestart + tasks[i].after > total) {
			total = start + tasks[i].prestart + tasks[i].after;
			last = before;
			poststop = i;
		}
	}
	free(latest);
	budget->total_ms = total;
	if (last != SIZE_MAX)
		trace_chain(budget, &graph, tasks, last);
	if (last != SIZE_MAX && poststop == SIZE_MAX && budget->chain_length)
		budget->chain[budget->chain_length - 1].hooks_after_ms = tasks[last].after;
	if (poststop != SIZE_MAX)
		add_link(budget, (struct shutdown_link){.task = tasks[poststop].config,
							.prestart_ms = tasks[poststop].prestart,
							.hooks_after_ms = tasks[poststop].after,
							.poststop = true});
	free(graph.nodes);
	free(graph.edges);
	free(tasks);
}

void shutdown_budget_free(struct shutdown_budget *budget)
{
	free(budget->chain);
	free(budget->cycle);
	*budget = (struct shutdown_budget){0};
}

struct text {
	char *buffer;
	size_t size;
	size_t used;
};

static void add_text(struct text *text, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void add_text(struct text *text, const char *format, ...)
{
	if (text->used + 1 >= text->size)
		return;
	va_list arguments;
	va_start(arguments, format);
	int written =
	    vsnprintf(text->buffer + text->used, text->size - text->used, format, arguments);
	va_end(arguments);
	if (written > 0)
		text->used = strnlen(text->buffer, text->size - 1);
}

/* "10s" into a buffer of the caller's, for one argument list. */
static const char *duration(uint64_t ms, char buffer[32])
{
	format_duration_ms(ms, buffer, 32);
	return buffer;
}

/* "prekill hooks 10s + kill.timeout 30s", "then poststop g/t: ...". */
static void describe_link(struct text *text, const struct shutdown_link *link, bool named)
{
	char a[32], b[32];
	if (link->poststop) {
		add_text(text, "then poststop %s: ", link->task->full_name);
		if (link->prestart_ms)
			add_text(text, "prestart hooks %s + ", duration(link->prestart_ms, a));
		if (link->hooks_after_ms)
			add_text(text, "exited and stop hooks %s + ",
				 duration(link->hooks_after_ms, b));
		add_text(text, "its own run, not counted");
		return;
	}
	if (named)
		add_text(text, "%s: ", link->task->full_name);
	if (link->prekill_ms)
		add_text(text, "prekill hooks %s + ", duration(link->prekill_ms, a));
	add_text(text, "kill.timeout %s", duration(link->kill_timeout_ms, b));
	if (link->hooks_after_ms)
		add_text(text, ", then exited and stop hooks %s",
			 duration(link->hooks_after_ms, a));
}

int shutdown_budget_check(const struct config *config, uint64_t timeout_ms, const char *source,
			  char *warning, size_t warning_size)
{
	struct shutdown_budget budget;
	shutdown_budget_compute(config, &budget);
	struct text text = {warning, warning_size, 0};
	char limit[32], total[32];
	char from[64] = "";
	if (source)
		snprintf(from, sizeof(from), " (from %s)", source);
	warning[0] = '\0';
	int result = 0;
	if (budget.cycle_length) {
		add_text(&text, "shutdown: ");
		for (size_t i = 0; i < budget.cycle_length; i++)
			add_text(&text, "%s%s", i ? " <- " : "", budget.cycle[i]->full_name);
		add_text(&text,
			 ": these tasks wait for each other to stop (order: sequential against "
			 "after: or the stage order): if they run when a shutdown comes, none gets "
			 "its kill signal until shutdown_timeout %s%s kills them all",
			 duration(timeout_ms, limit), from);
		result = -1;
	} else if (budget.total_ms > timeout_ms) {
		add_text(&text, "shutdown: ");
		for (size_t i = budget.chain_length; i > 0; i--)
			add_text(&text, "%s%s", i < budget.chain_length ? " <- " : "",
				 budget.chain[i - 1].task->full_name);
		add_text(&text, " can take %s (", duration(budget.total_ms, total));
		for (size_t i = 0; i < budget.chain_length; i++) {
			if (i)
				add_text(&text, "; ");
			describe_link(&text, &budget.chain[i], budget.chain_length > 1);
		}
		add_text(&text, ") > shutdown_timeout %s%s", duration(timeout_ms, limit), from);
		result = -1;
	}
	shutdown_budget_free(&budget);
	return result;
}
