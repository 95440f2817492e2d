/* A table of pids: see pid_index.h. */
#include "supervisor/tasks/pid_index.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/xmalloc.h"

#define REMOVED ((pid_t)-1)

static size_t slot_of(pid_t pid, size_t capacity)
{
	/* Fibonacci hashing: consecutive pids spread over the table. */
	return (size_t)(((uint32_t)pid * 2654435769u) & (capacity - 1));
}

static struct pid_index_entry *find(const struct pid_index *index, pid_t pid)
{
	if (!index->capacity)
		return NULL;
	for (size_t slot = slot_of(pid, index->capacity);;
	     slot = (slot + 1) & (index->capacity - 1)) {
		struct pid_index_entry *entry = &index->entries[slot];
		if (entry->pid == pid)
			return entry;
		if (entry->pid == 0)
			return NULL;
	}
}

static void insert(struct pid_index *index, pid_t pid, void *owner)
{
	size_t slot = slot_of(pid, index->capacity);
	while (index->entries[slot].pid > 0)
		slot = (slot + 1) & (index->capacity - 1);
	if (index->entries[slot].pid == 0)
		index->used++;
	index->entries[slot] = (struct pid_index_entry){.pid = pid, .owner = owner};
}

static void rebuild(struct pid_index *index)
{
	struct pid_index old = *index;
	if (!old.capacity)
		index->capacity = 64;
	else if (4 * (old.live + 1) > old.capacity)
		index->capacity = old.capacity * 2;
	index->entries = xcalloc(index->capacity, sizeof(*index->entries));
	index->used = 0;
	for (size_t i = 0; i < old.capacity; i++)
		if (old.entries[i].pid > 0)
			insert(index, old.entries[i].pid, old.entries[i].owner);
	free(old.entries);
}

void pid_index_put(struct pid_index *index, pid_t pid, void *owner)
{
	struct pid_index_entry *entry = find(index, pid);
	if (entry) {
		entry->owner = owner;
		return;
	}
	if (2 * (index->used + 1) > index->capacity)
		rebuild(index);
	insert(index, pid, owner);
	index->live++;
}

void *pid_index_get(const struct pid_index *index, pid_t pid)
{
	const struct pid_index_entry *entry = pid > 0 ? find(index, pid) : NULL;
	return entry ? entry->owner : NULL;
}

void pid_index_remove(struct pid_index *index, pid_t pid)
{
	struct pid_index_entry *entry = pid > 0 ? find(index, pid) : NULL;
	if (entry) {
		*entry = (struct pid_index_entry){.pid = REMOVED};
		index->live--;
	}
}

void pid_index_free(struct pid_index *index)
{
	free(index->entries);
	*index = (struct pid_index){0};
}
