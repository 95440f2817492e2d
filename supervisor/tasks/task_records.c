#include "supervisor/tasks/task_records.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xmalloc.h"

/* Each chunk's first bytes say what it holds, so that a corral reading
 * another's chunk (a downgrade, a wrong fd) refuses it instead of
 * misreading it. */
#define TASK_RECORDS_MAGIC 0x63727263u /* "crrc" */
#define RECORDS_PER_CHUNK  32

struct task_record_header {
	uint32_t magic;
	uint32_t record_size;
	uint32_t capacity;
	uint32_t reserved;
};

struct task_record_chunk {
	int fd; /* -1: an anonymous mapping (no memfd could be made) */
	struct task_record_header *header;
	struct task_record *records;
	size_t map_size;
};

static size_t chunk_size(uint32_t capacity)
{
	return sizeof(struct task_record_header) + (size_t)capacity * sizeof(struct task_record);
}

void task_records_init(struct task_records *records)
{
	memset(records, 0, sizeof(*records));
}

void task_records_free(struct task_records *records)
{
	for (size_t i = 0; i < records->chunk_count; i++) {
		munmap(records->chunks[i].header, records->chunks[i].map_size);
		if (records->chunks[i].fd >= 0)
			close(records->chunks[i].fd);
	}
	free(records->chunks);
	task_records_init(records);
}

static void add_chunk(struct task_records *records, int fd, void *map, size_t map_size)
{
	records->chunks =
	    xreallocarray(records->chunks, records->chunk_count + 1, sizeof(*records->chunks));
	struct task_record_chunk *chunk = &records->chunks[records->chunk_count++];
	chunk->fd = fd;
	chunk->header = map;
	chunk->records = (struct task_record *)(chunk->header + 1);
	chunk->map_size = map_size;
}

/* A new chunk: a memfd (close-on-exec; the upgrade clears that on the fds
 * it hands over), or anonymous shared memory when none can be made. false
 * when not even that can be mapped. */
static bool new_chunk(struct task_records *records)
{
	size_t size = chunk_size(RECORDS_PER_CHUNK);
	int fd = memfd_create("corral-task-records", MFD_CLOEXEC);
	if (fd >= 0 && ftruncate(fd, (off_t)size) < 0) {
		close(fd);
		fd = -1;
	}
	void *map = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 fd >= 0 ? MAP_SHARED : MAP_SHARED | MAP_ANONYMOUS, fd, 0);
	if (map == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	struct task_record_header *header = map;
	header->magic = TASK_RECORDS_MAGIC;
	header->record_size = sizeof(struct task_record);
	header->capacity = RECORDS_PER_CHUNK;
	add_chunk(records, fd, map, size);
	return true;
}

static struct task_record *free_record(struct task_records *records)
{
	for (size_t i = 0; i < records->chunk_count; i++) {
		struct task_record_chunk *chunk = &records->chunks[i];
		for (uint32_t r = 0; r < chunk->header->capacity; r++)
			if (chunk->records[r].state == TASK_RECORD_FREE)
				return &chunk->records[r];
	}
	return NULL;
}

static bool in_a_chunk(const struct task_records *records, const struct task_record *record)
{
	for (size_t i = 0; i < records->chunk_count; i++) {
		const struct task_record_chunk *chunk = &records->chunks[i];
		if (record >= chunk->records && record < chunk->records + chunk->header->capacity)
			return true;
	}
	return false;
}

struct task_record *task_records_take(struct task_records *records, const char *name)
{
	struct task_record *record = NULL;
	if (records && strlen(name) < TASK_RECORD_NAME_SIZE) {
		record = free_record(records);
		if (!record && new_chunk(records))
			record = free_record(records);
	}
	if (!record)
		record = xmalloc(sizeof(*record));
	memset(record, 0, sizeof(*record));
	snprintf(record->name, sizeof(record->name), "%s", name);
	/* Last: a reader (a restore) takes a record as it finds it. */
	record->state = TASK_RECORD_USED;
	return record;
}

void task_records_give_back(struct task_records *records, struct task_record *record)
{
	if (!record)
		return;
	if (records && in_a_chunk(records, record))
		record->state = TASK_RECORD_FREE;
	else
		free(record);
}

int task_records_chunk_fd(const struct task_records *records, size_t index)
{
	return records->chunks[index].fd;
}

/* The chunk behind `fd`, checked: its size and header agree with the
 * records this corral knows. MAP_FAILED with `error` otherwise. */
static void *map_handed_chunk(int fd, size_t *map_size, char *error, size_t error_size)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		snprintf(error, error_size, "task records (fd %d): %s", fd, strerror(errno));
		return MAP_FAILED;
	}
	if ((size_t)st.st_size < sizeof(struct task_record_header)) {
		snprintf(error, error_size,
			 "task records (fd %d): %lld bytes, too short for a header", fd,
			 (long long)st.st_size);
		return MAP_FAILED;
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(error, error_size, "task records (fd %d): mmap: %s", fd, strerror(errno));
		return MAP_FAILED;
	}
	const struct task_record_header *header = map;
	if (header->magic != TASK_RECORDS_MAGIC ||
	    header->record_size != sizeof(struct task_record) ||
	    chunk_size(header->capacity) > (size_t)st.st_size) {
		snprintf(error, error_size,
			 "task records (fd %d): not records of this corral (magic %#x, record "
			 "size %u, here %zu)",
			 fd, header->magic, header->record_size, sizeof(struct task_record));
		munmap(map, (size_t)st.st_size);
		return MAP_FAILED;
	}
	*map_size = (size_t)st.st_size;
	return map;
}

int task_records_adopt(struct task_records *records, const int *fds, size_t count, char *error,
		       size_t error_size)
{
	void **maps = xcalloc(count + 1, sizeof(*maps));
	size_t *sizes = xcalloc(count + 1, sizeof(*sizes));
	int result = 0;
	size_t mapped = 0;
	for (; mapped < count; mapped++) {
		maps[mapped] = map_handed_chunk(fds[mapped], &sizes[mapped], error, error_size);
		if (maps[mapped] == MAP_FAILED) {
			result = -EINVAL;
			break;
		}
	}
	for (size_t i = 0; i < mapped; i++) {
		if (result < 0) {
			munmap(maps[i], sizes[i]);
			continue;
		}
		add_chunk(records, fds[i], maps[i], sizes[i]);
	}
	free(maps);
	free(sizes);
	return result;
}

void task_records_visit(struct task_records *records,
			void (*visit)(void *context, struct task_record *record), void *context)
{
	for (size_t i = 0; i < records->chunk_count; i++) {
		struct task_record_chunk *chunk = &records->chunks[i];
		for (uint32_t r = 0; r < chunk->header->capacity; r++)
			if (chunk->records[r].state == TASK_RECORD_USED)
				visit(context, &chunk->records[r]);
	}
}
