/* The hand-over document of `corral upgrade` (base/handover.h):
 * written and read back, bytes of any kind in the blob area, fds only from
 * the document's own list, and a damaged document refused. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/handover.h"

static void test_values_blobs_and_fds_come_back(void **state)
{
	(void)state;
	int pipe_fds[2];
	assert_int_equal(pipe2(pipe_fds, O_CLOEXEC), 0);
	struct handover_writer writer;
	handover_writer_init(&writer);
	static const char bytes[] = "half a li\0ne \xff\n";
	json_object_set_new(writer.root, "line", handover_blob(&writer, bytes, sizeof(bytes)));
	json_object_set_new(writer.root, "empty", handover_blob(&writer, "", 0));
	json_object_set_new(writer.root, "fd", handover_fd(&writer, pipe_fds[0]));
	json_object_set_new(writer.root, "none", handover_fd(&writer, -1));
	json_object_set_new(writer.root, "count", json_integer(42));
	int memfd = handover_writer_seal(&writer);
	assert_true(memfd >= 0);
	/* Kept across an exec, as the document must be. */
	assert_int_equal(fcntl(memfd, F_GETFD) & FD_CLOEXEC, 0);
	handover_writer_free(&writer);

	struct handover_reader reader;
	char error[256];
	assert_int_equal(handover_reader_open(&reader, memfd, error, sizeof(error)), 0);
	const char *data;
	size_t length;
	assert_true(
	    handover_blob_get(&reader, json_object_get(reader.root, "line"), &data, &length));
	assert_int_equal(length, sizeof(bytes));
	assert_memory_equal(data, bytes, sizeof(bytes));
	assert_true(
	    handover_blob_get(&reader, json_object_get(reader.root, "empty"), &data, &length));
	assert_int_equal(length, 0);
	assert_int_equal(handover_fd_get(&reader, reader.root, "fd"), pipe_fds[0]);
	assert_int_equal(handover_fd_get(&reader, reader.root, "none"), -1);
	/* A number that is not in the document's list is no fd of its. */
	assert_int_equal(handover_fd_get(&reader, reader.root, "count"), -1);
	assert_int_equal(handover_int(reader.root, "count", -1), 42);
	handover_reader_free(&reader);
	close(memfd);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
}

/* A restore's document is built and read by one process: taken from the
 * writer as it is, it reads as the same document written out would. */
static void test_a_writer_taken_as_it_is_reads_as_if_written(void **state)
{
	(void)state;
	struct handover_writer writer;
	handover_writer_init(&writer);
	static const char bytes[] = "a line \0cut\n";
	json_object_set_new(writer.root, "empty", handover_blob(&writer, "", 0));
	json_object_set_new(writer.root, "line", handover_blob(&writer, bytes, sizeof(bytes)));
	/* Noted out of order: looked up by a search of the sorted list. */
	json_object_set_new(writer.root, "late", handover_fd(&writer, 9));
	json_object_set_new(writer.root, "early", handover_fd(&writer, 4));
	json_object_set_new(writer.root, "count", json_integer(7));

	struct handover_reader reader;
	handover_reader_take_writer(&reader, &writer);
	assert_null(writer.root);
	assert_null(writer.blobs);
	const char *data;
	size_t length;
	assert_true(
	    handover_blob_get(&reader, json_object_get(reader.root, "line"), &data, &length));
	assert_int_equal(length, sizeof(bytes));
	assert_memory_equal(data, bytes, sizeof(bytes));
	assert_true(
	    handover_blob_get(&reader, json_object_get(reader.root, "empty"), &data, &length));
	assert_int_equal(length, 0);
	assert_int_equal(handover_fd_get(&reader, reader.root, "late"), 9);
	assert_int_equal(handover_fd_get(&reader, reader.root, "early"), 4);
	assert_int_equal(handover_fd_get(&reader, reader.root, "count"), -1);
	handover_reader_free(&reader);
	handover_writer_free(&writer);

	/* Nothing noted at all: an empty document still reads. */
	handover_writer_init(&writer);
	handover_reader_take_writer(&reader, &writer);
	assert_int_equal(handover_fd_get(&reader, reader.root, "none"), -1);
	assert_false(
	    handover_blob_get(&reader, json_object_get(reader.root, "none"), &data, &length));
	handover_reader_free(&reader);
}

static void test_the_fds_are_kept_open_and_closed_again(void **state)
{
	(void)state;
	int pipe_fds[2];
	assert_int_equal(pipe2(pipe_fds, O_CLOEXEC), 0);
	handover_fds_keep_open(pipe_fds, 2, true);
	assert_int_equal(fcntl(pipe_fds[0], F_GETFD) & FD_CLOEXEC, 0);
	assert_int_equal(fcntl(pipe_fds[1], F_GETFD) & FD_CLOEXEC, 0);
	handover_fds_keep_open(pipe_fds, 2, false);
	assert_int_equal(fcntl(pipe_fds[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
}

static int document(const char *bytes, size_t length)
{
	int fd = memfd_create("test", MFD_CLOEXEC);
	assert_int_equal(write(fd, bytes, length), (ssize_t)length);
	return fd;
}

static void test_a_damaged_document_is_refused(void **state)
{
	(void)state;
	struct handover_reader reader;
	char error[256];
	/* Shorter than its length word. */
	int fd = document("\x05", 1);
	assert_int_equal(handover_reader_open(&reader, fd, error, sizeof(error)), -EINVAL);
	handover_reader_free(&reader);
	close(fd);
	/* A JSON length past the end. */
	fd = document("\xff\0\0\0\0\0\0\0{}", 10);
	assert_int_equal(handover_reader_open(&reader, fd, error, sizeof(error)), -EINVAL);
	assert_string_equal(error, "the hand-over document is cut short");
	handover_reader_free(&reader);
	close(fd);
	/* Not JSON. */
	fd = document("\x02\0\0\0\0\0\0\0{x", 10);
	assert_int_equal(handover_reader_open(&reader, fd, error, sizeof(error)), -EINVAL);
	handover_reader_free(&reader);
	close(fd);
	/* A blob outside the area. */
	static const char json[] = "{\"b\":{\"at\":1,\"length\":100}}";
	char text[8 + sizeof(json) + 2] = {(char)(sizeof(json) - 1)};
	memcpy(text + 8, json, sizeof(json) - 1);
	memcpy(text + 8 + sizeof(json) - 1, "xx", 2);
	fd = document(text, 8 + sizeof(json) - 1 + 2);
	assert_int_equal(handover_reader_open(&reader, fd, error, sizeof(error)), 0);
	const char *data;
	size_t length;
	assert_false(handover_blob_get(&reader, json_object_get(reader.root, "b"), &data, &length));
	handover_reader_free(&reader);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_values_blobs_and_fds_come_back),
	    cmocka_unit_test(test_a_writer_taken_as_it_is_reads_as_if_written),
	    cmocka_unit_test(test_the_fds_are_kept_open_and_closed_again),
	    cmocka_unit_test(test_a_damaged_document_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
