/* regular_file_read: what a user-given path may be (a regular file within
 * its cap) and how each refusal is said. The FIFO and /dev/zero cases
 * would hang or grow without bound if the helper blocked or had no cap. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/regular_file.h"

static char directory[] = "/tmp/corral-test-regular-file-XXXXXX";
static char path[128];

static int make_directory(void **state)
{
	(void)state;
	return mkdtemp(directory) ? 0 : -1;
}

static int remove_directory(void **state)
{
	(void)state;
	return rmdir(directory);
}

static const char *write_file(const char *name, const char *text, size_t length)
{
	snprintf(path, sizeof(path), "%s/%s", directory, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, length), (ssize_t)length);
	close(fd);
	return path;
}

static void test_a_regular_file_within_its_cap_is_read_whole(void **state)
{
	(void)state;
	const char *file = write_file("exact", "0123456789abcdef", 16);
	char *data = NULL, reason[REGULAR_FILE_REASON_SIZE] = "";
	size_t size = 0;
	assert_int_equal(regular_file_read(file, 16, &data, &size, reason), 0);
	assert_int_equal(size, 16);
	assert_string_equal(data, "0123456789abcdef"); /* NUL-terminated */
	free(data);
	unlink(file);
}

static void test_one_byte_over_the_cap_is_refused(void **state)
{
	(void)state;
	const char *file = write_file("over", "0123456789abcdefg", 17);
	char *data = NULL, reason[REGULAR_FILE_REASON_SIZE] = "";
	size_t size = 0;
	assert_int_equal(regular_file_read(file, 16, &data, &size, reason), -EFBIG);
	assert_string_equal(reason, "is larger than 16 bytes");
	assert_null(data);
	unlink(file);
}

static void test_a_fifo_is_refused_without_waiting_for_a_writer(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "%s/fifo", directory);
	assert_int_equal(mkfifo(path, 0600), 0);
	char *data = NULL, reason[REGULAR_FILE_REASON_SIZE] = "";
	size_t size = 0;
	assert_int_equal(regular_file_read(path, 1u << 20, &data, &size, reason), -EINVAL);
	assert_string_equal(reason, "is a FIFO, not a regular file");
	assert_null(data);
	unlink(path);
}

static void test_dev_zero_is_refused_before_any_read(void **state)
{
	(void)state;
	char *data = NULL, reason[REGULAR_FILE_REASON_SIZE] = "";
	size_t size = 0;
	assert_int_equal(regular_file_read("/dev/zero", 1u << 20, &data, &size, reason), -EINVAL);
	assert_string_equal(reason, "is a character device, not a regular file");
}

static void test_a_directory_is_told_apart(void **state)
{
	(void)state;
	char *data = NULL, reason[REGULAR_FILE_REASON_SIZE] = "";
	size_t size = 0;
	assert_int_equal(regular_file_read(directory, 1u << 20, &data, &size, reason), -EISDIR);
	assert_string_equal(reason, "is a directory, not a regular file");
}

static void test_a_missing_file_says_what_open_said(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "%s/missing", directory);
	char *data = NULL, reason[REGULAR_FILE_REASON_SIZE] = "";
	size_t size = 0;
	assert_int_equal(regular_file_read(path, 16, &data, &size, reason), -ENOENT);
	assert_string_equal(reason, "No such file or directory");
}

static void test_caps_are_said_in_their_unit(void **state)
{
	(void)state;
	char text[32];
	regular_file_format_size(16u << 20, text, sizeof(text));
	assert_string_equal(text, "16 MiB");
	regular_file_format_size(1u << 20, text, sizeof(text));
	assert_string_equal(text, "1 MiB");
	regular_file_format_size(4096, text, sizeof(text));
	assert_string_equal(text, "4 KiB");
	regular_file_format_size(1000, text, sizeof(text));
	assert_string_equal(text, "1000 bytes");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_regular_file_within_its_cap_is_read_whole),
	    cmocka_unit_test(test_one_byte_over_the_cap_is_refused),
	    cmocka_unit_test(test_a_fifo_is_refused_without_waiting_for_a_writer),
	    cmocka_unit_test(test_dev_zero_is_refused_before_any_read),
	    cmocka_unit_test(test_a_directory_is_told_apart),
	    cmocka_unit_test(test_a_missing_file_says_what_open_said),
	    cmocka_unit_test(test_caps_are_said_in_their_unit),
	};
	return cmocka_run_group_tests(tests, make_directory, remove_directory);
}
