#include "cli/import/systemd_syscall_groups.h"

#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

static const struct systemd_syscall_group *group_named(const char *name)
{
	for (size_t i = 0; systemd_syscall_groups[i].name; i++)
		if (strcmp(systemd_syscall_groups[i].name, name) == 0)
			return &systemd_syscall_groups[i];
	return NULL;
}

bool syscall_set_has(const struct syscall_set *set, const char *name)
{
	for (size_t i = 0; i < set->count; i++)
		if (strcmp(set->names[i], name) == 0)
			return true;
	return false;
}

static void set_one(struct syscall_set *set, const char *name, bool remove)
{
	for (size_t i = 0; i < set->count; i++) {
		if (strcmp(set->names[i], name) != 0)
			continue;
		if (remove) {
			free(set->names[i]);
			memmove(&set->names[i], &set->names[i + 1],
				(set->count - i - 1) * sizeof(*set->names));
			set->count--;
		}
		return;
	}
	if (remove)
		return;
	set->names = xreallocarray(set->names, set->count + 1, sizeof(*set->names));
	set->names[set->count++] = xstrdup(name);
}

/* Groups nest (@system-service holds @basic-io...) but never in a cycle;
 * the depth bound keeps generated data that would from looping. */
static bool apply(struct syscall_set *set, const char *name, bool remove, unsigned depth)
{
	if (name[0] != '@') {
		set_one(set, name, remove);
		return true;
	}
	const struct systemd_syscall_group *group = group_named(name);
	if (!group || depth > 8)
		return false;
	char *calls = xstrdup(group->calls), *save = NULL;
	for (char *word = strtok_r(calls, " ", &save); word; word = strtok_r(NULL, " ", &save))
		apply(set, word, remove, depth + 1);
	free(calls);
	return true;
}

bool syscall_set_apply(struct syscall_set *set, const char *name, bool remove)
{
	return apply(set, name, remove, 0);
}

void syscall_set_free(struct syscall_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		free(set->names[i]);
	free(set->names);
	set->names = NULL;
	set->count = 0;
}
