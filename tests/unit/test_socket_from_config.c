/* config_read_socket: the `socket:` of a config for `corral status -c
 * CONFIG`, read without the rest of the config. */
#include <errno.h>
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

#include "config/load/config_socket.h"

static char directory[] = "/tmp/corral-socket-test-XXXXXX";

static const char *write_file(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", directory, name);
	FILE *file = fopen(path, "w");
	assert_non_null(file);
	fputs(text, file);
	fclose(file);
	return path;
}

static int read_socket(const char *path, char *socket, char *error)
{
	return config_read_socket(path, socket, 108, error, 512);
}

static void test_a_file_with_and_without_socket(void **state)
{
	char socket[108] = "", error[512] = "";
	(void)state;
	const char *path = write_file("with.yaml", "socket: /srv/app/control.sock\n"
						   "groups: {g: {tasks: {a: {comand: [x]}}}}\n");
	/* An error elsewhere in the config does not matter. */
	assert_int_equal(read_socket(path, socket, error), 1);
	assert_string_equal(socket, "/srv/app/control.sock");
	path = write_file("without.yaml", "groups: {}\n");
	assert_int_equal(read_socket(path, socket, error), 0);
}

static void test_a_directory_in_name_order(void **state)
{
	char socket[108] = "", error[512] = "", sub[300];
	(void)state;
	snprintf(sub, sizeof(sub), "%s/conf.d", directory);
	assert_int_equal(mkdir(sub, 0700), 0);
	write_file("conf.d/20-groups.yaml", "groups: {}\n");
	write_file("conf.d/10-socket.yml", "socket: /run/app.sock\n");
	write_file("conf.d/notes.txt", "socket: /not/this\n");
	assert_int_equal(read_socket(sub, socket, error), 1);
	assert_string_equal(socket, "/run/app.sock");
}

static void test_what_cannot_be_used_is_said(void **state)
{
	char socket[108] = "", error[512] = "", missing[300];
	(void)state;
	snprintf(missing, sizeof(missing), "%s/missing.yaml", directory);
	assert_int_equal(read_socket(missing, socket, error), -ENOENT);
	assert_non_null(strstr(error, "No such file or directory"));
	const char *path = write_file("relative.yaml", "groups: {}\nsocket: run/x.sock\n");
	assert_int_equal(read_socket(path, socket, error), -EINVAL);
	assert_non_null(strstr(error, "relative.yaml:2:1: socket: must be an absolute path"));
	path = write_file("broken.yaml", "socket: [/a\n");
	assert_int_equal(read_socket(path, socket, error), -EINVAL);
	assert_non_null(strstr(error, "broken.yaml:"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_file_with_and_without_socket),
	    cmocka_unit_test(test_a_directory_in_name_order),
	    cmocka_unit_test(test_what_cannot_be_used_is_said),
	};
	if (!mkdtemp(directory))
		return 1;
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	char command[128];
	snprintf(command, sizeof(command), "rm -rf %s", directory);
	if (system(command) != 0)
		return 1;
	return failed;
}
