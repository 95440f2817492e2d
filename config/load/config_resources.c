/* Resource limits: the fields of a `resources` map, and the merge of
 * group <- task, field by field. Only the values are checked here; whether
 * a controller exists, and in which cgroup version, is found out when the
 * task starts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const resources_keys[] = {
    "memory", "memory_high", "memory_swap", "cpu",      "cpu_weight",
    "pids",   "cpuset",      "io_weight",   "optional", NULL,
};

/* cpu.max is written as "QUOTA 100000": a quota of 1 ms per 100 ms period
 * is the least the kernel takes, which is 0.01 of a core. */
#define CPU_MIN_MILLICORES 10
#define CPU_MAX_CORES      1024
#define CPU_MAX_MILLICORES (CPU_MAX_CORES * 1000)
/* cpu.weight and io.weight take 1..10000 (100 is the kernel's default). */
#define WEIGHT_MIN 1
#define WEIGHT_MAX 10000
/* pids.max refuses more than PID_MAX_LIMIT (4M on 64-bit kernels); saying
 * so at load beats an EINVAL when the task starts. */
#define PIDS_MAX 4194304

/* A whole number from `min` to `max`, one message for every way it is
 * wrong: the range is what the reader needs to know. */
static bool parse_whole_number(struct load_context *context, const yaml_node_t *node,
			       const struct where *where, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *text = expect_string(context, node, where);
	const char *cursor = text;
	uint64_t value;

	if (!text)
		return false;
	if (!read_capped_number(&cursor, max, &value) || *cursor || value < min || value > max) {
		report(context, node, where, "must be a whole number from %llu to %llu, not %s",
		       (unsigned long long)min, (unsigned long long)max,
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	*out = value;
	return true;
}

/* memory and memory_high: a size, and 0 would mean "no memory at all",
 * which no task survives (leaving the field out means no limit). */
static bool parse_memory_limit(struct load_context *context, const yaml_node_t *node,
			       const struct where *where, uint64_t *out)
{
	if (!expect_size(context, node, where, out))
		return false;
	if (*out == 0) {
		report(context, node, where, "must be more than 0 (leave it out for no limit)");
		return false;
	}
	return true;
}

static void report_not_cores(struct load_context *context, const yaml_node_t *node,
			     const struct where *where, const char *text)
{
	size_t length = node->data.scalar.length;
	/* Kubernetes writes millicores as "500m". */
	bool millicores =
	    length > 1 && text[length - 1] == 'm' && strspn(text, "0123456789") == length - 1;

	report(context, node, where, "must be a number of cores such as 0.5, 2 or 1.25, not %s%s",
	       quote(text, length).text,
	       millicores ? " (cores, not millicores: 0.5 for 500m)" : "");
}

/* "0.5", "2", "1.25": cores, kept as millicores. The whole part and up to
 * three decimals are read as integers, so no float turns 0.29 into 289. */
static bool parse_cpu(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, uint32_t *out_millicores)
{
	const char *text = expect_string(context, node, where);
	const char *cursor = text;
	uint64_t whole, fraction = 0, millicores;
	size_t decimals = 0;

	if (!text)
		return false;
	if (!read_capped_number(&cursor, CPU_MAX_CORES, &whole))
		goto not_cores;
	if (*cursor == '.') {
		const char *first_decimal = ++cursor;

		decimals = strspn(first_decimal, "0123456789");
		if (decimals == 0)
			goto not_cores;
		cursor += decimals;
		for (size_t i = 0; i < decimals && i < 3; i++)
			fraction = fraction * 10 + (uint64_t)(first_decimal[i] - '0');
	}
	if (*cursor)
		goto not_cores;
	/* "1.5000" is as precise as "1.5"; only digits that count are refused. */
	if (decimals > 3 && strspn(cursor - (decimals - 3), "0") != decimals - 3) {
		report(context, node, where,
		       "%s has more than 3 decimals (the finest step is 0.001 of a core)",
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	for (size_t i = decimals; i < 3; i++) /* "0.5" is 500 millicores */
		fraction *= 10;
	millicores = whole * 1000 + fraction;
	if (millicores > CPU_MAX_MILLICORES) {
		report(context, node, where, "must be at most %d cores, not %s", CPU_MAX_CORES,
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	if (millicores < CPU_MIN_MILLICORES) {
		report(context, node, where,
		       "must be at least 0.01, not %s (cpu.max gives no less than 1ms per 100ms; "
		       "leave cpu out for no limit)",
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	*out_millicores = (uint32_t)millicores;
	return true;

not_cores:
	report_not_cores(context, node, where, text);
	return false;
}

/* "0-1,3,5-7": CPU numbers and ranges, comma-separated, the syntax of
 * cpuset.cpus (without the kernel's rare strides, "0-7:2"). Whether the
 * CPUs exist is for the runtime: the config may be checked elsewhere. */
static bool parse_cpuset(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, const char **out)
{
	const char *text = expect_string(context, node, where);
	const char *cursor = text;

	if (!text)
		return false;
	for (;;) {
		const char *range = cursor;
		uint64_t first, last;

		if (!read_capped_number(&cursor, UINT32_MAX, &first))
			goto not_a_list;
		last = first;
		if (*cursor == '-') {
			cursor++;
			if (!read_capped_number(&cursor, UINT32_MAX, &last))
				goto not_a_list;
		}
		if (first > UINT32_MAX || last > UINT32_MAX) {
			report(context, node, where, "CPU number too large in %s",
			       quote(text, node->data.scalar.length).text);
			return false;
		}
		if (last < first) {
			report(context, node, where,
			       "range %s goes backwards (write \"%llu-%llu\")",
			       quote(range, (size_t)(cursor - range)).text,
			       (unsigned long long)last, (unsigned long long)first);
			return false;
		}
		if (!*cursor)
			break;
		if (*cursor != ',')
			goto not_a_list;
		cursor++;
	}
	*out = text;
	return true;

not_a_list:
	report(context, node, where,
	       "must be a CPU list such as \"0-1,3,5-7\" (numbers and ranges, commas, no "
	       "spaces), not %s",
	       quote(text, node->data.scalar.length).text);
	return false;
}

void resources_fields_parse(struct load_context *context, const yaml_node_t *node,
			    const struct where *where, struct resources_fields *out)
{
	struct resources_config *values = &out->values;
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[64];
	struct where field_where;
	uint64_t number;

	if (!expect_map(context, node, where, "a map of resource limits"))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, resources_keys);

	if ((field = map_lookup(&fields, "memory"))) {
		field_where = where_field(where, "memory", buffer, sizeof(buffer));
		out->memory_node = field;
		out->has_memory = parse_memory_limit(context, field, &field_where, &values->memory);
	}
	if ((field = map_lookup(&fields, "memory_high"))) {
		field_where = where_field(where, "memory_high", buffer, sizeof(buffer));
		out->memory_high_node = field;
		out->has_memory_high =
		    parse_memory_limit(context, field, &field_where, &values->memory_high);
	}
	if ((field = map_lookup(&fields, "memory_swap"))) {
		/* 0 is a limit here: no swap at all. */
		field_where = where_field(where, "memory_swap", buffer, sizeof(buffer));
		out->has_memory_swap =
		    expect_size(context, field, &field_where, &values->memory_swap);
		values->has_memory_swap = out->has_memory_swap;
	}
	if ((field = map_lookup(&fields, "cpu"))) {
		field_where = where_field(where, "cpu", buffer, sizeof(buffer));
		out->has_cpu = parse_cpu(context, field, &field_where, &values->cpu_millicores);
	}
	if ((field = map_lookup(&fields, "cpu_weight"))) {
		field_where = where_field(where, "cpu_weight", buffer, sizeof(buffer));
		out->has_cpu_weight = parse_whole_number(context, field, &field_where, WEIGHT_MIN,
							 WEIGHT_MAX, &number);
		if (out->has_cpu_weight)
			values->cpu_weight = (uint32_t)number;
	}
	if ((field = map_lookup(&fields, "pids"))) {
		field_where = where_field(where, "pids", buffer, sizeof(buffer));
		out->has_pids =
		    parse_whole_number(context, field, &field_where, 1, PIDS_MAX, &values->pids);
	}
	if ((field = map_lookup(&fields, "cpuset"))) {
		field_where = where_field(where, "cpuset", buffer, sizeof(buffer));
		out->has_cpuset = parse_cpuset(context, field, &field_where, &out->cpuset);
	}
	if ((field = map_lookup(&fields, "io_weight"))) {
		field_where = where_field(where, "io_weight", buffer, sizeof(buffer));
		out->has_io_weight = parse_whole_number(context, field, &field_where, WEIGHT_MIN,
							WEIGHT_MAX, &number);
		if (out->has_io_weight)
			values->io_weight = (uint32_t)number;
	}
	if ((field = map_lookup(&fields, "optional"))) {
		field_where = where_field(where, "optional", buffer, sizeof(buffer));
		out->has_optional = expect_bool(context, field, &field_where, &values->optional);
	}
	map_entries_free(&fields);
}

/* `high` and `memory` are the nodes of valid sizes, so their text is safe
 * to show as it is; `set_in` says where a value from the group came from. */
static void report_memory_high_above_memory(struct load_context *context, const char *owner,
					    const yaml_node_t *high, const char *high_set_in,
					    const yaml_node_t *memory, const char *memory_set_in)
{
	struct where where = {.owner = owner, .field = "resources.memory_high"};

	report(context, high, &where, "%s%s must not exceed resources.memory (%s%s)",
	       (const char *)high->data.scalar.value, high_set_in,
	       (const char *)memory->data.scalar.value, memory_set_in);
}

void resources_fields_check_group(struct load_context *context,
				  const struct resources_fields *group, const struct where *where)
{
	if (group->has_memory && group->has_memory_high &&
	    group->values.memory_high > group->values.memory)
		report_memory_high_above_memory(context, where->owner, group->memory_high_node, "",
						group->memory_node, "");
}

/* memory_high above memory, where the two may come from the group and the
 * task. A field the task wrote wrongly was reported already, and the
 * group's value it would have replaced proves nothing, so it is skipped. */
static void check_memory_high(struct load_context *context, const struct resources_fields *group,
			      const char *group_owner, const struct resources_fields *task,
			      const struct where *task_where)
{
	const struct resources_fields *memory_from = task->memory_node ? task : group;
	const struct resources_fields *high_from = task->memory_high_node ? task : group;
	char *set_in;

	if (!memory_from->has_memory || !high_from->has_memory_high ||
	    high_from->values.memory_high <= memory_from->values.memory)
		return;
	/* Both from the group: resources_fields_check_group said it once. */
	if (memory_from == group && high_from == group)
		return;

	if (high_from == task) {
		set_in = memory_from == group ? xasprintf(", set in %s", group_owner) : xstrdup("");
		report_memory_high_above_memory(context, task_where->owner, task->memory_high_node,
						"", memory_from->memory_node, set_in);
	} else {
		/* As with restart.max_delay: the group's value is shown where
		 * it was written, named for the task it does not fit. */
		set_in = xasprintf(" (set in %s)", group_owner);
		report_memory_high_above_memory(context, task_where->owner, group->memory_high_node,
						set_in, task->memory_node, "");
	}
	free(set_in);
}

/* The fields set in `fields` replace those of `merged`. The cpuset text is
 * only pointed to: the caller copies the one that wins. */
static void apply_fields(struct resources_config *merged, const char **cpuset,
			 const struct resources_fields *fields)
{
	if (fields->has_memory)
		merged->memory = fields->values.memory;
	if (fields->has_memory_high)
		merged->memory_high = fields->values.memory_high;
	if (fields->has_memory_swap) {
		merged->has_memory_swap = true;
		merged->memory_swap = fields->values.memory_swap;
	}
	if (fields->has_cpu)
		merged->cpu_millicores = fields->values.cpu_millicores;
	if (fields->has_cpu_weight)
		merged->cpu_weight = fields->values.cpu_weight;
	if (fields->has_pids)
		merged->pids = fields->values.pids;
	if (fields->has_cpuset)
		*cpuset = fields->cpuset;
	if (fields->has_io_weight)
		merged->io_weight = fields->values.io_weight;
	if (fields->has_optional)
		merged->optional = fields->values.optional;
}

struct resources_config resources_merge(struct load_context *context,
					const struct resources_fields *group,
					const char *group_owner,
					const struct resources_fields *task,
					const struct where *task_where)
{
	struct resources_config merged = {0};
	const char *cpuset = NULL;

	apply_fields(&merged, &cpuset, group);
	apply_fields(&merged, &cpuset, task);
	if (cpuset)
		merged.cpuset = xstrdup(cpuset);
	check_memory_high(context, group, group_owner, task, task_where);
	return merged;
}
