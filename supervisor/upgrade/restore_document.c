#include "supervisor/upgrade/restore_document.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "base/handover.h"
#include "supervisor/upgrade/kept_slots.h"

/* Every blob reference ({"at", "length"}) of `value`, read from `from`,
 * made again in `into`. */
static void copy_blobs(json_t *value, const struct handover_reader *from,
		       struct handover_writer *into)
{
	if (json_is_array(value)) {
		size_t index;
		json_t *item;
		json_array_foreach(value, index, item) copy_blobs(item, from, into);
		return;
	}
	if (!json_is_object(value))
		return;
	const char *data;
	size_t length;
	if (json_object_size(value) == 2 && json_is_integer(json_object_get(value, "at")) &&
	    json_is_integer(json_object_get(value, "length")) &&
	    handover_blob_get(from, value, &data, &length)) {
		json_t *blob = handover_blob(into, data, length);
		json_object_update(value, blob);
		json_decref(blob);
		return;
	}
	const char *key;
	json_t *member;
	json_object_foreach(value, key, member) copy_blobs(member, from, into);
}

/* `record` read as a document: its root (a new reference) with its
 * blobs copied into `into` and its fds noted there; NULL when it is not
 * one. */
static json_t *take(const struct kept_record *record, struct handover_writer *into)
{
	struct handover_reader reader;
	char error[256];
	if (handover_reader_open_bytes(&reader, record->bytes, record->length, error,
				       sizeof(error)) < 0) {
		handover_reader_free(&reader);
		return NULL;
	}
	/* corral's own, too big for a message: in a memfd it names
	 * (kept_state.c), read here and closed. */
	int memfd = handover_fd_get(&reader, reader.root, "memfd_document");
	if (memfd >= 0) {
		struct handover_reader whole;
		int failure = handover_reader_open(&whole, memfd, error, sizeof(error));
		close(memfd);
		handover_reader_free(&reader);
		if (failure < 0) {
			handover_reader_free(&whole);
			return NULL;
		}
		reader = whole;
	}
	json_t *root = json_incref(reader.root);
	copy_blobs(root, &reader, into);
	json_object_del(root, "fds");
	/* The fds the keeper still holds for it (a lost one is -1). */
	for (size_t f = 0; f < record->fd_count; f++)
		if (record->fds[f] >= 0)
			json_decref(handover_fd(into, record->fds[f]));
	handover_reader_free(&reader);
	return root;
}

/* The task records' chunks, from their records in slot order. */
static json_t *chunks_taken(const struct kept_records *records, struct handover_writer *into)
{
	json_t *chunks = json_array();
	for (uint32_t slot = KEPT_CHUNKS_SLOT;; slot++) {
		const struct kept_record *record = kept_records_find(records, slot);
		json_t *part = record ? take(record, into) : NULL;
		if (!part)
			return chunks;
		json_array_extend(chunks, json_object_get(part, "task_records"));
		json_decref(part);
	}
}

int restore_document_build(const struct kept_records *records, struct handover_reader *document,
			   char *error, size_t error_size)
{
	const struct kept_record *own = kept_records_find(records, KEPT_CORRAL_SLOT);
	if (!own) {
		snprintf(error, error_size, "the keeper holds no state of corral's own");
		return -EINVAL;
	}
	struct handover_writer writer;
	handover_writer_init(&writer);
	json_t *root = take(own, &writer);
	if (!root) {
		handover_writer_free(&writer);
		snprintf(error, error_size, "corral's own state with the keeper is not whole");
		return -EINVAL;
	}
	json_decref(writer.root);
	writer.root = root;
	const struct kept_record *groups_record = kept_records_find(records, KEPT_GROUPS_SLOT);
	json_t *groups = groups_record ? take(groups_record, &writer) : NULL;
	json_object_set(root, "groups", groups ? json_object_get(groups, "groups") : json_array());
	if (groups)
		json_object_set(root, "supervisor", json_object_get(groups, "supervisor"));
	json_decref(groups);
	json_t *tasks = json_array();
	for (size_t i = 0; i < records->count; i++) {
		const struct kept_record *record = &records->items[i];
		if (record->slot == KEPT_CORRAL_SLOT || record->slot == KEPT_GROUPS_SLOT ||
		    record->slot >= KEPT_CHUNKS_SLOT)
			continue;
		json_t *task = take(record, &writer);
		if (!json_is_object(task)) {
			json_decref(task);
			continue;
		}
		json_object_set_new(task, "keeper_slot", json_integer(record->slot));
		if (record->unsettled)
			json_object_set_new(task, "restore_unsettled",
					    json_string("it was starting or being stopped"));
		else if (record->stale)
			json_object_set_new(task, "restore_unsettled",
					    json_string("the keeper lost one of its fds"));
		json_array_append_new(tasks, task);
	}
	json_object_set_new(root, "tasks", tasks);
	json_object_set_new(root, "task_records", chunks_taken(records, &writer));
	json_object_set_new(root, "restored", json_true());
	handover_reader_take_writer(document, &writer);
	return 0;
}
