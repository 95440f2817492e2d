/* The status line of an http probe's answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/probes/http_status.h"

static int parse(const char *text, int *status)
{
	return http_status_parse(text, strlen(text), status);
}

static void test_status_lines(void **state)
{
	(void)state;
	int status = 0;
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nServer: x\r\n", &status), 1);
	assert_int_equal(status, 200);
	assert_int_equal(parse("HTTP/1.0 404 File not found\r\n", &status), 1);
	assert_int_equal(status, 404);
	assert_int_equal(parse("HTTP/1.1 204\r\n", &status), 1);
	assert_int_equal(status, 204);
	assert_int_equal(parse("HTTP/1.1 301\n", &status), 1);
	assert_int_equal(status, 301);
}

static void test_incomplete_lines_ask_for_more(void **state)
{
	(void)state;
	int status = 0;
	assert_int_equal(parse("", &status), 0);
	assert_int_equal(parse("HTT", &status), 0);
	assert_int_equal(parse("HTTP/1.1 200 O", &status), 0);
}

static void test_what_is_not_http_is_refused(void **state)
{
	(void)state;
	int status = 0;
	const char *bad[] = {
	    "SSH-2.0-OpenSSH\r\n", "HTTP/2 200\r\n",    "HTTP/1.1 20\r\n",  "HTTP/1.1 2000\r\n",
	    "HTTP/1.1 099 x\r\n",  "HTTP/1.1  200\r\n", "HTTP/1.1 2x0\r\n", "-ERR redis\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], &status) != -1)
			fail_msg("accepted %s", bad[i]);
	/* A line that never ends is not waited for forever. */
	char endless[400];
	memset(endless, 'x', sizeof(endless));
	memcpy(endless, "HTTP/1.1 200 ", 13);
	assert_int_equal(http_status_parse(endless, sizeof(endless), &status), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_status_lines),
	    cmocka_unit_test(test_incomplete_lines_ask_for_more),
	    cmocka_unit_test(test_what_is_not_http_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
