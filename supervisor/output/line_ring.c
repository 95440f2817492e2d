#include "supervisor/output/line_ring.h"

#include <stdlib.h>
#include <string.h>

#include "base/line_scan.h"
#include "base/xmalloc.h"

#define HEADER_SIZE (sizeof(uint64_t) + sizeof(uint32_t))
/* The length field's top two bits hold the tag, the next one marks a
 * record of several lines: a record is at most a quarter of 64 MiB, far
 * below 2^29. */
#define TAG_SHIFT     30
#define SEVERAL_LINES (UINT32_C(1) << 29)
#define LENGTH_MASK   (SEVERAL_LINES - 1)
/* A record of several lines (lines read together, with one time) begins
 * with their count; its text is the lines joined by '\n'. One header for a
 * batch instead of one per line: a flood of short lines would otherwise
 * spend most of the ring on headers and most of its time writing them. */
#define LINE_COUNT_SIZE sizeof(uint32_t)

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

static uint32_t read_u32(const struct line_ring *ring, size_t offset)
{
	size_t start = wrap(ring, offset);
	uint32_t value;
	/* Fixed-size copies are single loads and stores: the common case. */
	if (start + sizeof(value) <= ring->capacity)
		memcpy(&value, ring->bytes + start, sizeof(value));
	else
		ring_read(ring, start, &value, sizeof(value));
	return value;
}

/* The lines a record holds, from its length field. */
static uint32_t record_lines(const struct line_ring *ring, size_t offset, uint32_t field)
{
	return field & SEVERAL_LINES ? read_u32(ring, offset + HEADER_SIZE) : 1;
}

static void write_header(struct line_ring *ring, size_t offset, uint64_t time_ms, uint32_t length)
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
	uint32_t field = read_u32(ring, ring->head + sizeof(uint64_t));
	size_t size = HEADER_SIZE + (field & LENGTH_MASK);
	ring->count -= record_lines(ring, ring->head, field);
	ring->head = wrap(ring, ring->head + size);
	ring->used -= size;
}

/* Room for a record of `size` bytes, at the end of what is used. */
static size_t reserve(struct line_ring *ring, size_t size)
{
	if (!ring->bytes)
		ring->bytes = xmalloc(ring->capacity);
	/* Full: free an eighth at once, so that a flood of short lines reads
	 * the old headers in one sweep instead of one per line. */
	if (ring->capacity - ring->used < size)
		while (ring->used && ring->capacity - ring->used < size + ring->capacity / 8)
			drop_oldest(ring);
	return ring->head + ring->used;
}

void line_ring_append(struct line_ring *ring, uint64_t time_ms, unsigned tag, const char *text,
		      size_t length)
{
	if (ring->capacity < 4 * HEADER_SIZE)
		return;
	if (length > ring->capacity / 4)
		length = ring->capacity / 4;
	size_t size = HEADER_SIZE + length;
	size_t offset = reserve(ring, size);
	write_header(ring, offset, time_ms,
		     (uint32_t)length | (uint32_t)(tag & LINE_RING_TAG_MAX) << TAG_SHIFT);
	ring_write(ring, offset + HEADER_SIZE, text, length);
	ring->used += size;
	ring->count++;
}

/* `lines` (> 1) lines, `text` without the last newline, in one record. */
static void append_record(struct line_ring *ring, uint64_t time_ms, unsigned tag, const char *text,
			  size_t length, uint32_t lines)
{
	size_t body = LINE_COUNT_SIZE + length;
	size_t offset = reserve(ring, HEADER_SIZE + body);
	write_header(ring, offset, time_ms,
		     (uint32_t)body | SEVERAL_LINES |
			 (uint32_t)(tag & LINE_RING_TAG_MAX) << TAG_SHIFT);
	ring_write(ring, offset + HEADER_SIZE, &lines, sizeof(lines));
	ring_write(ring, offset + HEADER_SIZE + LINE_COUNT_SIZE, text, length);
	ring->used += HEADER_SIZE + body;
	ring->count += lines;
}

void line_ring_append_lines(struct line_ring *ring, uint64_t time_ms, unsigned tag,
			    const char *text, size_t length, size_t lines)
{
	if (ring->capacity < 4 * HEADER_SIZE)
		return;
	if (length > ring->capacity) {
		/* The older lines would be dropped by the newer ones at once. */
		const char *end = text + length;
		const char *from =
		    (const char *)memchr(end - ring->capacity, '\n', ring->capacity) + 1;
		if (from == end) { /* the last line alone is longer: it is kept, cut */
			const char *before = memrchr(text, '\n', length - 1);
			from = before ? before + 1 : text;
		}
		text = from;
		length = (size_t)(end - text);
		lines = line_scan_count(text, length);
	}
	size_t quarter = ring->capacity / 4;
	while (lines > 1) {
		if (LINE_COUNT_SIZE + length - 1 <= quarter) {
			append_record(ring, time_ms, tag, text, length - 1, (uint32_t)lines);
			return;
		}
		/* More than a record may hold: the most whole lines that fit,
		 * or a line that does not fit alone (and is cut). */
		const char *cut = memrchr(text, '\n', quarter - LINE_COUNT_SIZE + 1);
		size_t piece = cut ? (size_t)(cut - text) + 1 : 0;
		size_t piece_lines = piece ? line_scan_count(text, piece) : 0;
		if (piece_lines > 1) {
			append_record(ring, time_ms, tag, text, piece - 1, (uint32_t)piece_lines);
		} else {
			piece = (size_t)((const char *)memchr(text, '\n', length) - text) + 1;
			piece_lines = 1;
			line_ring_append(ring, time_ms, tag, text, piece - 1);
		}
		text += piece;
		length -= piece;
		lines -= piece_lines;
	}
	if (lines == 1)
		line_ring_append(ring, time_ms, tag, text, length - 1);
}

static void take_lines(void *ring, struct output_batch *batch)
{
	line_ring_append_lines(ring, batch->time_ms, batch->stream, batch->text, batch->length,
			       batch->lines);
}

const struct output_sink_ops line_ring_sink_ops = {.lines = take_lines};

void line_ring_visit(const struct line_ring *ring, size_t tail, line_ring_visit_fn *visit,
		     void *context)
{
	if (!ring->bytes)
		return;
	size_t skip = tail && tail < ring->count ? ring->count - tail : 0;
	size_t offset = ring->head;
	char *text = xmalloc(ring->capacity / 4 + 1);
	for (size_t line = 0; line < ring->count;) {
		uint64_t time_ms;
		ring_read(ring, offset, &time_ms, sizeof(time_ms));
		uint32_t field = read_u32(ring, offset + sizeof(time_ms));
		uint32_t length = field & LENGTH_MASK;
		uint32_t lines = record_lines(ring, offset, field);
		unsigned tag = field >> TAG_SHIFT;
		if (line + lines > skip) {
			size_t text_offset = field & SEVERAL_LINES ? LINE_COUNT_SIZE : 0;
			size_t text_length = length - text_offset;
			ring_read(ring, offset + HEADER_SIZE + text_offset, text, text_length);
			text[text_length] = '\0';
			char *start = text;
			for (uint32_t i = 0; i < lines; i++) {
				/* A line alone is all of its record, whatever it holds. */
				char *end = text + text_length;
				char *newline = field & SEVERAL_LINES
						    ? memchr(start, '\n', (size_t)(end - start))
						    : NULL;
				if (newline)
					end = newline;
				*end = '\0';
				if (line + i >= skip)
					visit(context, time_ms, tag, start, (size_t)(end - start));
				start = end + 1;
			}
		}
		line += lines;
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
