/* A config made from another without reading a file: `corral scale`
 * changes how many instances a task has while corral runs, and the
 * supervisor applies the result as it applies a reload (docs/cli.md,
 * "corral scale"). Every string and list is copied, so that each config
 * is freed on its own, whichever goes first.
 *
 * Pure: plain data in, plain data out. */
#pragma once

#include <stddef.h>

#include "config/model/config.h"

/* `into` (not initialised) becomes a copy of `from` that owns all it
 * points to. */
void task_config_copy(struct task_config *into, const struct task_config *from);

/* Frees what a copy owns (not `task` itself). */
void task_config_copy_free(struct task_config *task);

/* Whether instance `number` of a set made from `model` gets probe
 * targets it can use (those that name the instance, config.h's
 * probe_template): 0, or -1 with `error`. */
int instance_targets_check(const struct task_config *model, unsigned number, char *error,
			   size_t error_size);

/* One instance set and the number of instances it gets. */
struct instance_count {
	const char *group; /* the group's name */
	const char *task;  /* the name written with `instances:` ("web") */
	unsigned count;    /* 0 leaves every instance out */
	/* What a new instance is made from: the definition the set's
	 * instances run with (a reload may have changed some fields in
	 * place since `config` was loaded). */
	const struct task_config *model;
};

/* A copy of `config` in which each set of `changes` has `count`
 * instances: the last ones are left out, or new ones are made from the
 * set's model, named TASK@N with their number, after the others. Every
 * `after:` is resolved again; a wait for an instance left out is dropped
 * (whoever waited for every instance now waits for those that remain).
 * A set with no instance in `config` (scaled to 0) gets its instances at
 * the end of its group. The caller has checked that each group exists. */
struct config *config_with_instances(const struct config *config,
				     const struct instance_count *changes, size_t change_count);
