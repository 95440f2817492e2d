#include "supervisor/line_ring.h"

#include <stdlib.h>
#include <string.h>

#include "config/xmalloc.h"

#define HEADER_SIZE (sizeof(uint64_t) + sizeof(uint32_t))

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

/* Byte-wise copies that wrap around the end of the buffer. */
static void ring_write(struct line_ring *ring, size_t offset, const void *data, size_t size)
{
	size_t start = offset % ring->capacity;
	size_t first = size < ring->capacity - start ? size : ring->capacity - start;
	memcpy(ring->bytes + start, data, first);
	memcpy(ring->bytes, (const char *)data + first, size - first);
}

static void ring_read(const struct line_ring *ring, size_t offset, void *data, size_t size)
{
	size_t start = offset % ring->capacity;
	size_t first = size < ring->capacity - start ? size : ring->capacity - start;
	memcpy(data, ring->bytes + start, first);
	memcpy((char *)data + first, ring->bytes, size - first);
}

static size_t record_size_at(const struct line_ring *ring, size_t offset)
{
	uint32_t length;
	ring_read(ring, offset + sizeof(uint64_t), &length, sizeof(length));
	return HEADER_SIZE + length;
}

static void drop_oldest(struct line_ring *ring)
{
	size_t size = record_size_at(ring, ring->head);
	ring->head = (ring->head + size) % ring->capacity;
	ring->used -= size;
	ring->count--;
}

void line_ring_append(struct line_ring *ring, uint64_t time_ms, const char *text, size_t length)
{
	if (ring->capacity < 4 * HEADER_SIZE)
		return;
	if (length > ring->capacity / 4)
		length = ring->capacity / 4;
	if (!ring->bytes)
		ring->bytes = xmalloc(ring->capacity);
	size_t size = HEADER_SIZE + length;
	while (ring->capacity - ring->used < size)
		drop_oldest(ring);
	size_t offset = ring->head + ring->used;
	uint32_t length32 = (uint32_t)length;
	ring_write(ring, offset, &time_ms, sizeof(time_ms));
	ring_write(ring, offset + sizeof(time_ms), &length32, sizeof(length32));
	ring_write(ring, offset + HEADER_SIZE, text, length);
	ring->used += size;
	ring->count++;
}

void line_ring_visit(const struct line_ring *ring, size_t tail,
		     void (*visit)(void *context, uint64_t time_ms, const char *text, size_t length),
		     void *context)
{
	if (!ring->bytes)
		return;
	size_t skip = tail && tail < ring->count ? ring->count - tail : 0;
	size_t offset = ring->head;
	char *text = xmalloc(ring->capacity / 4 + 1);
	for (size_t i = 0; i < ring->count; i++) {
		uint64_t time_ms;
		uint32_t length;
		ring_read(ring, offset, &time_ms, sizeof(time_ms));
		ring_read(ring, offset + sizeof(time_ms), &length, sizeof(length));
		if (i >= skip) {
			ring_read(ring, offset + HEADER_SIZE, text, length);
			text[length] = '\0';
			visit(context, time_ms, text, length);
		}
		offset += HEADER_SIZE + length;
	}
	free(text);
}
