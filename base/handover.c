#include "base/handover.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xmalloc.h"

/* Far above any real document (1000 tasks with full rings: ~70 MiB):
 * a corrupt length is refused before it is allocated. */
#define HANDOVER_MAX_BYTES (1024UL * 1024 * 1024)

void handover_writer_init(struct handover_writer *writer)
{
	memset(writer, 0, sizeof(*writer));
	writer->root = json_object();
}

void handover_writer_free(struct handover_writer *writer)
{
	json_decref(writer->root);
	free(writer->blobs);
	free(writer->fds);
	memset(writer, 0, sizeof(*writer));
}

json_t *handover_blob(struct handover_writer *writer, const void *data, size_t length)
{
	if (writer->blob_length + length > writer->blob_capacity) {
		size_t capacity = writer->blob_capacity ? writer->blob_capacity : 64 * 1024;
		while (capacity < writer->blob_length + length)
			capacity *= 2;
		writer->blobs = xreallocarray(writer->blobs, capacity, 1);
		writer->blob_capacity = capacity;
	}
	if (length)
		memcpy(writer->blobs + writer->blob_length, data, length);
	json_t *blob = json_pack("{s:I,s:I}", "at", (json_int_t)writer->blob_length, "length",
				 (json_int_t)length);
	writer->blob_length += length;
	return blob;
}

json_t *handover_fd(struct handover_writer *writer, int fd)
{
	if (fd < 0)
		return json_null();
	writer->fds = xreallocarray(writer->fds, (writer->fd_count + 1) * sizeof(*writer->fds), 1);
	writer->fds[writer->fd_count++] = fd;
	return json_integer(fd);
}

static int write_all(int fd, const void *data, size_t length)
{
	const char *at = data;
	while (length) {
		ssize_t written = write(fd, at, length);
		if (written < 0 && errno == EINTR)
			continue;
		if (written < 0)
			return -errno;
		at += written;
		length -= (size_t)written;
	}
	return 0;
}

char *handover_writer_bytes(struct handover_writer *writer, size_t *length)
{
	json_t *fds = json_array();
	for (size_t i = 0; i < writer->fd_count; i++)
		json_array_append_new(fds, json_integer(writer->fds[i]));
	json_object_set_new(writer->root, "fds", fds);
	char *text = json_dumps(writer->root, JSON_COMPACT);
	if (!text)
		return NULL;
	uint64_t text_length = strlen(text);
	char *bytes = xmalloc(8 + text_length + writer->blob_length + 1);
	for (int i = 0; i < 8; i++)
		bytes[i] = (char)(unsigned char)(text_length >> (8 * i));
	memcpy(bytes + 8, text, text_length);
	if (writer->blob_length)
		memcpy(bytes + 8 + text_length, writer->blobs, writer->blob_length);
	free(text);
	*length = 8 + text_length + writer->blob_length;
	return bytes;
}

int handover_writer_seal(struct handover_writer *writer)
{
	size_t length;
	char *bytes = handover_writer_bytes(writer, &length);
	if (!bytes)
		return -ENOMEM;
	int fd = memfd_create("corral-handover", 0); /* survives the exec */
	int failure = fd < 0 ? -errno : write_all(fd, bytes, length);
	free(bytes);
	if (failure < 0) {
		if (fd >= 0)
			close(fd);
		return failure;
	}
	return fd;
}

void handover_fds_keep_open(const int *fds, size_t count, bool keep)
{
	for (size_t i = 0; i < count; i++) {
		int flags = fcntl(fds[i], F_GETFD);
		if (flags >= 0)
			fcntl(fds[i], F_SETFD, keep ? flags & ~FD_CLOEXEC : flags | FD_CLOEXEC);
	}
}

static int refuse(char *error, size_t error_size, int code, const char *what)
{
	snprintf(error, error_size, "the hand-over document %s", what);
	return code;
}

static int read_whole(int fd, char **out, size_t *out_length, char *error, size_t error_size)
{
	struct stat status;
	if (fstat(fd, &status) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "fd %d: %s", fd, strerror(errno));
		return failure;
	}
	if (status.st_size < 8 || (uint64_t)status.st_size > HANDOVER_MAX_BYTES)
		return refuse(error, error_size, -EINVAL, "has a wrong size");
	size_t length = (size_t)status.st_size;
	char *data = xmalloc(length + 1);
	size_t got = 0;
	while (got < length) {
		ssize_t count = pread(fd, data + got, length - got, (off_t)got);
		if (count < 0 && errno == EINTR)
			continue;
		if (count <= 0) {
			int failure = count < 0 ? -errno : -EIO;
			free(data);
			return refuse(error, error_size, failure, "cannot be read");
		}
		got += (size_t)count;
	}
	data[length] = '\0';
	*out = data;
	*out_length = length;
	return 0;
}

static int by_number(const void *a, const void *b)
{
	int left = *(const int *)a, right = *(const int *)b;
	return (left > right) - (left < right);
}

static int parse_document(struct handover_reader *reader, char *error, size_t error_size);

int handover_reader_open(struct handover_reader *reader, int fd, char *error, size_t error_size)
{
	memset(reader, 0, sizeof(*reader));
	int failure = read_whole(fd, &reader->data, &reader->length, error, error_size);
	if (failure < 0)
		return failure;
	return parse_document(reader, error, error_size);
}

int handover_reader_open_bytes(struct handover_reader *reader, const void *data, size_t length,
			       char *error, size_t error_size)
{
	memset(reader, 0, sizeof(*reader));
	reader->data = xmalloc(length + 1);
	memcpy(reader->data, data, length);
	reader->length = length;
	return parse_document(reader, error, error_size);
}

static int parse_document(struct handover_reader *reader, char *error, size_t error_size)
{
	if (reader->length < 8)
		return refuse(error, error_size, -EINVAL, "is cut short");
	uint64_t json_length = 0;
	for (int i = 7; i >= 0; i--)
		json_length = json_length << 8 | (unsigned char)reader->data[i];
	if (json_length > reader->length - 8)
		return refuse(error, error_size, -EINVAL, "is cut short");
	json_error_t parse_error;
	reader->root = json_loadb(reader->data + 8, json_length, 0, &parse_error);
	if (!json_is_object(reader->root)) {
		snprintf(error, error_size, "the hand-over document is not JSON: %s",
			 parse_error.text);
		return -EINVAL;
	}
	reader->blobs = reader->data + 8 + json_length;
	reader->blob_length = reader->length - 8 - json_length;
	json_t *fds = json_object_get(reader->root, "fds");
	size_t index;
	json_t *value;
	reader->fds = xcalloc(json_array_size(fds) + 1, sizeof(*reader->fds));
	json_array_foreach(fds, index, value)
	{
		if (json_is_integer(value) && json_integer_value(value) >= 0)
			reader->fds[reader->fd_count++] = (int)json_integer_value(value);
	}
	/* Sorted, for handover_fd_get's search: 1000 tasks hand over some
	 * 2000 fds, looked up one by one. */
	qsort(reader->fds, reader->fd_count, sizeof(*reader->fds), by_number);
	return 0;
}

void handover_reader_take_writer(struct handover_reader *reader, struct handover_writer *writer)
{
	memset(reader, 0, sizeof(*reader));
	reader->root = writer->root;
	/* The blob area is the whole of `data`: no length and text before
	 * it, as there would be in a memfd. */
	reader->data = writer->blobs ? writer->blobs : xcalloc(1, 1);
	reader->length = writer->blob_length;
	reader->blobs = reader->data;
	reader->blob_length = writer->blob_length;
	reader->fds = writer->fds ? writer->fds : xcalloc(1, sizeof(*reader->fds));
	reader->fd_count = writer->fd_count;
	qsort(reader->fds, reader->fd_count, sizeof(*reader->fds), by_number);
	memset(writer, 0, sizeof(*writer));
}

void handover_reader_free(struct handover_reader *reader)
{
	json_decref(reader->root);
	free(reader->data);
	free(reader->fds);
	memset(reader, 0, sizeof(*reader));
}

bool handover_blob_get(const struct handover_reader *reader, const json_t *blob, const char **data,
		       size_t *length)
{
	int64_t at = handover_int(blob, "at", -1), size = handover_int(blob, "length", -1);
	if (at < 0 || size < 0 || (uint64_t)at > reader->blob_length ||
	    (uint64_t)size > reader->blob_length - (uint64_t)at)
		return false;
	*data = reader->blobs + at;
	*length = (size_t)size;
	return true;
}

int64_t handover_int(const json_t *object, const char *key, int64_t fallback)
{
	json_t *value = json_object_get(object, key);
	return json_is_integer(value) ? (int64_t)json_integer_value(value) : fallback;
}

bool handover_bool(const json_t *object, const char *key)
{
	return json_is_true(json_object_get(object, key));
}

const char *handover_string(const json_t *object, const char *key)
{
	return json_string_value(json_object_get(object, key));
}

int handover_fd_get(const struct handover_reader *reader, const json_t *object, const char *key)
{
	int64_t fd = handover_int(object, key, -1);
	if (fd < 0 || fd > INT32_MAX)
		return -1;
	int number = (int)fd;
	return bsearch(&number, reader->fds, reader->fd_count, sizeof(*reader->fds), by_number)
		   ? number
		   : -1;
}
