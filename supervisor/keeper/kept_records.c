#include "supervisor/keeper/kept_records.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/xmalloc.h"

static const char magic[8] = "CRREC1";

void kept_records_init(struct kept_records *records)
{
	*records = (struct kept_records){0};
}

static void release(struct kept_record *record)
{
	for (size_t i = 0; i < record->fd_count; i++)
		if (record->fds[i] >= 0)
			close(record->fds[i]);
	free(record->bytes);
}

void kept_records_free(struct kept_records *records)
{
	for (size_t i = 0; i < records->count; i++)
		release(&records->items[i]);
	free(records->items);
	*records = (struct kept_records){0};
}

static struct kept_record *find(const struct kept_records *records, uint32_t slot)
{
	for (size_t i = 0; i < records->count; i++)
		if (records->items[i].slot == slot)
			return &records->items[i];
	return NULL;
}

const struct kept_record *kept_records_find(const struct kept_records *records, uint32_t slot)
{
	return find(records, slot);
}

void kept_records_mark_unsettled(struct kept_records *records, uint32_t slot)
{
	struct kept_record *record = find(records, slot);
	if (record)
		record->unsettled = true;
}

size_t kept_records_fd_count(const struct kept_records *records)
{
	size_t count = 0;
	for (size_t i = 0; i < records->count; i++)
		for (size_t f = 0; f < records->items[i].fd_count; f++)
			count += records->items[i].fds[f] >= 0;
	return count;
}

/* A number the loop gave the new record: any older record's fd under it
 * was closed by the loop, so that record no longer says what is true. */
static void take_number(struct kept_records *records, uint32_t slot, int number)
{
	for (size_t i = 0; i < records->count; i++) {
		struct kept_record *other = &records->items[i];
		if (other->slot == slot)
			continue;
		for (size_t f = 0; f < other->fd_count; f++)
			if (other->numbers[f] == number && other->fds[f] >= 0) {
				close(other->fds[f]);
				other->fds[f] = -1;
				other->stale = true;
			}
	}
}

void kept_records_put(struct kept_records *records, uint32_t slot, const void *bytes, size_t length,
		      const int *numbers, const int *fds, size_t fd_count)
{
	struct kept_record *record = find(records, slot);
	if (record) {
		release(record);
		*record = records->items[--records->count];
	}
	if (!length && !fd_count)
		return;
	for (size_t f = 0; f < fd_count; f++)
		take_number(records, slot, numbers[f]);
	if (records->count == records->capacity) {
		records->capacity = records->capacity ? records->capacity * 2 : 16;
		records->items =
		    xreallocarray(records->items, records->capacity, sizeof(*records->items));
	}
	record = &records->items[records->count++];
	*record = (struct kept_record){.slot = slot, .length = length, .fd_count = fd_count};
	record->bytes = xmalloc(length ? length : 1);
	/* No fds (or no bytes) may come as NULL: memcpy must not see it. */
	if (length)
		memcpy(record->bytes, bytes, length);
	if (fd_count) {
		memcpy(record->numbers, numbers, fd_count * sizeof(int));
		memcpy(record->fds, fds, fd_count * sizeof(int));
	}
}

/* ---- the memfd ---- */

static bool put(int fd, const void *data, size_t length)
{
	const char *at = data;
	while (length) {
		ssize_t wrote = write(fd, at, length);
		if (wrote < 0 && errno == EINTR)
			continue;
		if (wrote <= 0)
			return false;
		at += wrote;
		length -= (size_t)wrote;
	}
	return true;
}

int kept_records_to_memfd(const struct kept_records *records)
{
	int fd = memfd_create("corral-restore", 0);
	if (fd < 0)
		return -errno;
	uint32_t count = (uint32_t)records->count;
	bool good = put(fd, magic, sizeof(magic)) && put(fd, &count, sizeof(count));
	for (size_t i = 0; good && i < records->count; i++) {
		const struct kept_record *record = &records->items[i];
		uint32_t flags = (record->stale ? 1u : 0u) | (record->unsettled ? 2u : 0u);
		uint32_t head[4] = {record->slot, flags, (uint32_t)record->fd_count,
				    (uint32_t)record->length};
		int numbers[KEPT_RECORD_FDS_MAX];
		/* A lost fd is said as -1: the record names nothing there. */
		for (size_t f = 0; f < record->fd_count; f++)
			numbers[f] = record->fds[f] >= 0 ? record->numbers[f] : -1;
		good = put(fd, head, sizeof(head)) &&
		       put(fd, numbers, record->fd_count * sizeof(int)) &&
		       put(fd, record->bytes, record->length);
	}
	if (!good) {
		int failure = errno ? errno : EIO;
		close(fd);
		return -failure;
	}
	return fd;
}

/* Whether a record read now would close an fd of the loop: its slot was
 * read already (the old record is released), or one of its numbers
 * (the older record loses it). A memfd the keeper wrote has neither. */
static bool named_already(const struct kept_records *records, uint32_t slot, const int *numbers,
			  size_t count)
{
	if (find(records, slot))
		return true;
	for (size_t i = 0; i < records->count; i++)
		for (size_t f = 0; f < records->items[i].fd_count; f++)
			for (size_t n = 0; n < count; n++)
				if (numbers[n] >= 0 && records->items[i].numbers[f] == numbers[n])
					return true;
	return false;
}

/* Freed without closing: a table read names the loop's fds, not ours. */
static void free_read(struct kept_records *records)
{
	for (size_t i = 0; i < records->count; i++)
		for (size_t f = 0; f < records->items[i].fd_count; f++)
			records->items[i].fds[f] = -1;
	kept_records_free(records);
}

int kept_records_read(int fd, struct kept_records *records, char *error, size_t error_size)
{
	kept_records_init(records);
	off_t size = lseek(fd, 0, SEEK_END);
	if (size < (off_t)(sizeof(magic) + 4)) {
		snprintf(error, error_size, "the kept records are too short");
		return -EINVAL;
	}
	char *data = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (data == MAP_FAILED) {
		snprintf(error, error_size, "cannot map the kept records: %s", strerror(errno));
		return -EINVAL;
	}
	size_t at = sizeof(magic) + 4, end = (size_t)size;
	uint32_t count;
	memcpy(&count, data + sizeof(magic), 4);
	bool good = memcmp(data, magic, sizeof(magic)) == 0, twice = false;
	for (uint32_t i = 0; good && i < count; i++) {
		uint32_t head[4];
		good = end - at >= sizeof(head);
		if (!good)
			break;
		memcpy(head, data + at, sizeof(head));
		at += sizeof(head);
		size_t numbers = (size_t)head[2] * sizeof(int);
		good = head[2] <= KEPT_RECORD_FDS_MAX && end - at >= numbers &&
		       end - at - numbers >= head[3];
		if (!good)
			break;
		int fds[KEPT_RECORD_FDS_MAX];
		memcpy(fds, data + at, numbers);
		twice = named_already(records, head[0], fds, head[2]);
		if (twice) {
			good = false;
			break;
		}
		kept_records_put(records, head[0], data + at + numbers, head[3], fds, fds, head[2]);
		struct kept_record *record = find(records, head[0]);
		if (record) {
			record->stale = (head[1] & 1) != 0;
			record->unsettled = (head[1] & 2) != 0;
		}
		at += numbers + head[3];
	}
	munmap(data, (size_t)size);
	if (!good) {
		free_read(records);
		snprintf(error, error_size,
			 twice ? "the kept records name a slot or an fd twice"
			       : "the kept records are not whole");
		return -EINVAL;
	}
	return 0;
}

/* ---- placing the fds in a new loop's child ---- */

static int above(int fd, int floor)
{
	int moved = fcntl(fd, F_DUPFD, floor);
	if (moved >= 0)
		close(fd);
	return moved;
}

int kept_records_place(struct kept_records *records, int **others, size_t other_count)
{
	int top = 3;
	for (size_t i = 0; i < records->count; i++)
		for (size_t f = 0; f < records->items[i].fd_count; f++) {
			const struct kept_record *record = &records->items[i];
			if (record->numbers[f] >= top)
				top = record->numbers[f] + 1;
			if (record->fds[f] >= top)
				top = record->fds[f] + 1;
		}
	for (size_t o = 0; o < other_count; o++)
		if (*others[o] >= top)
			top = *others[o] + 1;
	/* Everything above every number first, so that no move below lands
	 * on an fd still to be moved. */
	for (size_t o = 0; o < other_count; o++)
		if ((*others[o] = above(*others[o], top)) < 0)
			return -errno;
	for (size_t i = 0; i < records->count; i++)
		for (size_t f = 0; f < records->items[i].fd_count; f++) {
			int *fd = &records->items[i].fds[f];
			if (*fd >= 0 && (*fd = above(*fd, top)) < 0)
				return -errno;
		}
	for (size_t i = 0; i < records->count; i++)
		for (size_t f = 0; f < records->items[i].fd_count; f++) {
			struct kept_record *record = &records->items[i];
			if (record->fds[f] < 0)
				continue;
			if (dup2(record->fds[f], record->numbers[f]) < 0)
				return -errno;
			close(record->fds[f]);
			record->fds[f] = record->numbers[f];
		}
	return 0;
}
