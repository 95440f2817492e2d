#include "supervisor/line_ring.h"

#include <stdlib.h>
#include <string.h>

#include "config/xmalloc.h"

#define HEADER_SIZE (sizeof(uint64_t) + sizeof(uint32_t))
/* The length field's top two bits hold the tag: a line is at most a
 * quarter of 64 MiB, far below 2^30. */
#define TAG_SHIFT 30
#define LENGTH_MASK ((UINT32_C(1) << TAG_SHIFT) - 1)

void line_ring_init(struct line_ring *ring, size_t capacity)
{
	memset(ring, 0, sizeof(*ring));
	ring->capacity = capacity;
}

void line_ring_free(struct line_ring *ring)
{
	free(ring->bytes);
	ring->bytes = NULL;
	ring->head = ring->used = ring->count = 0;
}

/* An offset into the buffer. Every offset used is below twice the
 * capacity (head < capacity, and a record ends within `used` <= capacity
 * after it): a subtraction, not a division, which costs more than the
 * rest of a short line's append. */
static size_t wrap(const struct line_ring *ring, size_t offset)
{
	return offset >= ring->capacity ? offset - ring->capacity : offset;
}

/* Byte-wise copies that wrap around the end of the buffer. */
static void ring_write(struct line_ring *ring, size_t offset, const void *data, size_t size)
{
	size_t start = wrap(ring, offset);
	size_t first = size < ring->capacity - start ? size : ring->capacity - start;
	memcpy(ring->bytes + start, data, first);
	memcpy(ring->bytes, (const char *)data + first, size - first);
}

static void ring_read(const struct line_ring *ring, size_t offset, void *data, size_t size)
{
	size_t start = wrap(ring, offset);
	size_t first = size < ring->capacity - start ? size : ring->capacity - start;
	memcpy(data, ring->bytes + start, first);
	memcpy((char *)data + first, ring->bytes, size - first);
}

static size_t record_size_at(const struct line_ring *ring, size_t offset)
{
	size_t start = wrap(ring, offset + sizeof(uint64_t));
	uint32_t length;
	/* Fixed-size copies are single loads and stores: the common case, and
	 * a flood of short lines spends its time here. */
	if (start + sizeof(length) <= ring->capacity)
		memcpy(&length, ring->bytes + start, sizeof(length));
	else
		ring_read(ring, start, &length, sizeof(length));
	return HEADER_SIZE + (length & LENGTH_MASK);
}

static void write_header(struct line_ring *ring, size_t offset, uint64_t time_ms,
			 uint32_t length)
{
	size_t start = wrap(ring, offset);
	if (start + HEADER_SIZE <= ring->capacity) {
		memcpy(ring->bytes + start, &time_ms, sizeof(time_ms));
		memcpy(ring->bytes + start + sizeof(time_ms), &length, sizeof(length));
		return;
	}
	ring_write(ring, start, &time_ms, sizeof(time_ms));
	ring_write(ring, start + sizeof(time_ms), &length, sizeof(length));
}

static void drop_oldest(struct line_ring *ring)
{
	size_t size = record_size_at(ring, ring->head);
	ring->head = wrap(ring, ring->head + size);
	ring->used -= size;
	ring->count--;
}

void line_ring_append(struct line_ring *ring, uint64_t time_ms, unsigned tag, const char *text,
		      size_t length)
{
	if (ring->capacity < 4 * HEADER_SIZE)
		return;
	if (length > ring->capacity / 4)
		length = ring->capacity / 4;
	if (!ring->bytes)
		ring->bytes = xmalloc(ring->capacity);
	size_t size = HEADER_SIZE + length;
	/* Full: free an eighth at once, so that a flood of short lines reads
	 * the old headers in one sweep instead of one per line. */
	if (ring->capacity - ring->used < size)
		while (ring->used && ring->capacity - ring->used < size + ring->capacity / 8)
			drop_oldest(ring);
	size_t offset = ring->head + ring->used;
	write_header(ring, offset, time_ms,
		     (uint32_t)length | (uint32_t)(tag & LINE_RING_TAG_MAX) << TAG_SHIFT);
	ring_write(ring, offset + HEADER_SIZE, text, length);
	ring->used += size;
	ring->count++;
}

void line_ring_visit(const struct line_ring *ring, size_t tail, line_ring_visit_fn *visit,
		     void *context)
{
	if (!ring->bytes)
		return;
	size_t skip = tail && tail < ring->count ? ring->count - tail : 0;
	size_t offset = ring->head;
	char *text = xmalloc(ring->capacity / 4 + 1);
	for (size_t i = 0; i < ring->count; i++) {
		uint64_t time_ms;
		uint32_t field;
		ring_read(ring, offset, &time_ms, sizeof(time_ms));
		ring_read(ring, offset + sizeof(time_ms), &field, sizeof(field));
		uint32_t length = field & LENGTH_MASK;
		if (i >= skip) {
			ring_read(ring, offset + HEADER_SIZE, text, length);
			text[length] = '\0';
			visit(context, time_ms, field >> TAG_SHIFT, text, length);
		}
		offset += HEADER_SIZE + length;
	}
	free(text);
}

struct resize_copy {
	struct line_ring *into;
};

static void copy_line(void *context, uint64_t time_ms, unsigned tag, const char *text,
		      size_t length)
{
	struct resize_copy *copy = context;
	line_ring_append(copy->into, time_ms, tag, text, length);
}

void line_ring_resize(struct line_ring *ring, size_t capacity)
{
	if (capacity == ring->capacity)
		return;
	struct line_ring resized;
	line_ring_init(&resized, capacity);
	struct resize_copy copy = {&resized};
	line_ring_visit(ring, 0, copy_line, &copy);
	line_ring_free(ring);
	*ring = resized;
}
