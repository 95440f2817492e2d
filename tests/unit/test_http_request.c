/* The HTTP endpoint's request parser: where a head ends, what a head
 * says, what is refused with which status, and the query. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/http/http_request.h"

static size_t head_end(const char *text)
{
	size_t scanned = 0;
	return http_head_end(text, strlen(text), &scanned);
}

static void test_where_a_head_ends(void **state)
{
	(void)state;
	assert_int_equal(head_end("GET / HTTP/1.0\r\n\r\n"), 18);
	assert_int_equal(head_end("GET / HTTP/1.0\n\n"), 16);
	assert_int_equal(head_end("GET / HTTP/1.1\r\nHost: a\r\n\r\nGET"), 27);
	assert_int_equal(head_end("GET / HTTP/1.1\r\nHost: a\r\n"), 0);
	assert_int_equal(head_end("GET / HTTP/1.1\r\nHost: a\r\n\r"), 0);
	/* Empty lines before the request line belong to it. */
	assert_int_equal(head_end("\r\n\r\nGET / HTTP/1.0\r\n\r\n"), 22);
	assert_int_equal(head_end("\r\n"), 0);
}

/* Byte by byte, as a slow client sends: the same end, found once. */
static void test_a_head_that_comes_byte_by_byte(void **state)
{
	(void)state;
	const char text[] = "GET /readyz HTTP/1.1\r\nHost: a\r\nX: y\r\n\r\nrest";
	size_t scanned = 0, end = 0, length;
	for (length = 1; length <= sizeof(text) - 1 && !end; length++)
		end = http_head_end(text, length, &scanned);
	assert_int_equal(end, sizeof(text) - 1 - 4);
	assert_int_equal(length - 1, end);
}

static void test_too_large_is_414_or_431(void **state)
{
	(void)state;
	char buffer[HTTP_REQUEST_HEAD_MAX];
	memset(buffer, 'a', sizeof(buffer));
	memcpy(buffer, "GET /", 5);
	assert_int_equal(http_head_too_large_status(buffer, sizeof(buffer)), 414);
	memcpy(buffer, "GET / HTTP/1.1\r\nX: ", 19);
	assert_int_equal(http_head_too_large_status(buffer, sizeof(buffer)), 431);
}

static int parse(const char *text, struct http_request *request, char *error)
{
	return http_request_parse(text, strlen(text), request, error, 128);
}

static void test_a_request_and_what_it_says(void **state)
{
	(void)state;
	struct http_request request;
	char error[128];
	assert_int_equal(parse("GET /readyz?group=web&task=app HTTP/1.1\r\nHost: x\r\n"
			       "User-Agent: kube-probe/1.30\r\nAccept: */*\r\n\r\n",
			       &request, error),
			 0);
	assert_int_equal(request.method, HTTP_METHOD_GET);
	assert_int_equal(request.version_minor, 1);
	assert_true(request.keep_alive);
	assert_int_equal(request.path_length, 7);
	assert_memory_equal(request.path, "/readyz", 7);
	assert_int_equal(request.query_length, 18);
	assert_memory_equal(request.query, "group=web&task=app", 18);

	assert_int_equal(parse("HEAD /livez HTTP/1.0\n\n", &request, error), 0);
	assert_int_equal(request.method, HTTP_METHOD_HEAD);
	assert_int_equal(request.version_minor, 0);
	assert_false(request.keep_alive);
	assert_int_equal(request.query_length, 0);

	assert_int_equal(parse("DELETE /livez HTTP/1.1\r\nHost: x\r\n\r\n", &request, error), 0);
	assert_int_equal(request.method, HTTP_METHOD_OTHER);
	/* Methods are case-sensitive: "get" is another one. */
	assert_int_equal(parse("get /livez HTTP/1.1\r\nHost: x\r\n\r\n", &request, error), 0);
	assert_int_equal(request.method, HTTP_METHOD_OTHER);
}

static void test_keep_alive_by_version_and_connection(void **state)
{
	(void)state;
	struct http_request request;
	char error[128];
	assert_int_equal(
	    parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &request, error), 0);
	assert_false(request.keep_alive);
	assert_int_equal(
	    parse("GET / HTTP/1.1\r\nHost: x\r\nconnection: TE, Close\r\n\r\n", &request, error),
	    0);
	assert_false(request.keep_alive);
	assert_int_equal(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &request, error),
			 0);
	assert_true(request.keep_alive);
	assert_int_equal(
	    parse("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", &request, error), 0);
	assert_false(request.keep_alive);
}

/* Accept, which /metrics' format follows: its value without the blanks
 * around it, the first of several; none without the field. */
static void test_the_accept_field(void **state)
{
	(void)state;
	struct http_request request;
	char error[128];
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n"
			       "accept:  application/openmetrics-text;version=1.0.0,*/*;q=0.1 \r\n"
			       "Accept: text/plain\r\n\r\n",
			       &request, error),
			 0);
	assert_int_equal(request.accept_length,
			 strlen("application/openmetrics-text;version=1.0.0,*/*;q=0.1"));
	assert_memory_equal(request.accept, "application/openmetrics-text;version=1.0.0,*/*;q=0.1",
			    request.accept_length);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &request, error), 0);
	assert_null(request.accept);
	assert_int_equal(request.accept_length, 0);
}

/* An absolute-form target (what a proxy is sent) is read for its path. */
static void test_an_absolute_target(void **state)
{
	(void)state;
	struct http_request request;
	char error[128];
	assert_int_equal(parse("GET http://10.0.0.1:9090/metrics?x HTTP/1.1\r\nHost: x\r\n\r\n",
			       &request, error),
			 0);
	assert_int_equal(request.path_length, 8);
	assert_memory_equal(request.path, "/metrics", 8);
	assert_int_equal(request.query_length, 1);
}

struct refusal_case {
	const char *what;
	const char *head;
	int status;
	const char *error;
};

static const struct refusal_case refusals[] = {
    {"not HTTP", "hello\r\n\r\n", 400, "not an HTTP request line"},
    {"no version", "GET /\r\n\r\n", 400, "not an HTTP request line"},
    {"two spaces", "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400, "not an HTTP request line"},
    {"a method that is not a token", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400,
     "not an HTTP method"},
    {"HTTP/2", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505, "only HTTP/1.0 and HTTP/1.1 are served"},
    {"HTTP/1.2", "GET / HTTP/1.2\r\nHost: x\r\n\r\n", 505, "only HTTP/1.0 and HTTP/1.1 are served"},
    {"a version that is not one", "GET / HTTP/x.1\r\nHost: x\r\n\r\n", 400,
     "not an HTTP request line"},
    {"a target that is not a path", "GET livez HTTP/1.1\r\nHost: x\r\n\r\n", 400,
     "the request target must be a path such as /readyz"},
    {"an asterisk", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 400,
     "the request target must be a path such as /readyz"},
    {"a byte above ASCII in the target", "GET /\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n", 400,
     "the request target must be a path such as /readyz"},
    {"HTTP/1.1 without Host", "GET / HTTP/1.1\r\n\r\n", 400,
     "an HTTP/1.1 request needs a Host header field"},
    {"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 400,
     "more than one Host header field"},
    {"a space before the colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400,
     "not a header field name (no space before its colon)"},
    {"a folded field", "GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n", 400,
     "a header field folded over lines (obsolete, RFC 9112 5.2)"},
    {"a line without a colon", "GET / HTTP/1.1\r\nHost: a\r\nnonsense\r\n\r\n", 400,
     "not a header field"},
    {"a control character", "GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n", 400,
     "a control character in a header field"},
    {"a bare CR", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400,
     "a control character in a header field"},
    {"a body", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", 413,
     "requests here take no body"},
    {"a chunked body", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 413,
     "requests here take no body"},
    {"a length that is not one", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400,
     "Content-Length is not a length"},
};

static void test_refusals_and_their_status(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		struct http_request request;
		char error[128] = "";
		printf("%s\n", refusals[i].what);
		assert_int_equal(parse(refusals[i].head, &request, error), -1);
		assert_int_equal(request.refusal, refusals[i].status);
		assert_string_equal(error, refusals[i].error);
	}
	/* Content-Length: 0 is no body. */
	struct http_request request;
	char error[128];
	assert_int_equal(
	    parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", &request, error), 0);
}

static void test_query_parameters(void **state)
{
	(void)state;
	const char query[] = "group=web&&task=a%2Fb&flag&x=&";
	const char *cursor = query, *end = query + sizeof(query) - 1;
	struct http_parameter parameter;
	char value[16];
	assert_true(http_query_next(&cursor, end, &parameter));
	assert_int_equal(parameter.name_length, 5);
	assert_memory_equal(parameter.value, "web", 3);
	/* The stray '&' of "&&" is a parameter without a name. */
	assert_true(http_query_next(&cursor, end, &parameter));
	assert_int_equal(parameter.name_length, 0);
	assert_int_equal(parameter.value_length, 0);
	assert_true(http_query_next(&cursor, end, &parameter));
	assert_memory_equal(parameter.name, "task", 4);
	assert_int_equal(
	    http_percent_decode(parameter.value, parameter.value_length, value, sizeof(value)), 3);
	assert_string_equal(value, "a/b");
	assert_true(http_query_next(&cursor, end, &parameter));
	assert_int_equal(parameter.name_length, 4);
	assert_int_equal(parameter.value_length, 0);
	assert_true(http_query_next(&cursor, end, &parameter));
	assert_int_equal(parameter.name_length, 1);
	assert_int_equal(parameter.value_length, 0);
	/* And the one after the last '&'. */
	assert_true(http_query_next(&cursor, end, &parameter));
	assert_int_equal(parameter.name_length, 0);
	assert_false(http_query_next(&cursor, end, &parameter));

	/* "&" alone: two empty ones; no query (NULL): none. */
	const char stray[] = "&";
	cursor = stray;
	assert_true(http_query_next(&cursor, stray + 1, &parameter));
	assert_int_equal(parameter.name_length, 0);
	assert_true(http_query_next(&cursor, stray + 1, &parameter));
	assert_int_equal(parameter.name_length, 0);
	assert_false(http_query_next(&cursor, stray + 1, &parameter));
	cursor = NULL;
	assert_false(http_query_next(&cursor, stray, &parameter));
}

static void test_percent_decoding(void **state)
{
	(void)state;
	char out[8];
	assert_int_equal(http_percent_decode("a+b%41", 6, out, sizeof(out)), 4);
	assert_string_equal(out, "a bA");
	assert_int_equal(http_percent_decode("%4", 2, out, sizeof(out)), -1);
	assert_int_equal(http_percent_decode("%zz", 3, out, sizeof(out)), -1);
	assert_int_equal(http_percent_decode("%00", 3, out, sizeof(out)), -1);
	assert_int_equal(http_percent_decode("12345678", 8, out, sizeof(out)), -1);
	assert_int_equal(http_percent_decode("1234567", 7, out, sizeof(out)), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_where_a_head_ends),
	    cmocka_unit_test(test_a_head_that_comes_byte_by_byte),
	    cmocka_unit_test(test_too_large_is_414_or_431),
	    cmocka_unit_test(test_a_request_and_what_it_says),
	    cmocka_unit_test(test_keep_alive_by_version_and_connection),
	    cmocka_unit_test(test_the_accept_field),
	    cmocka_unit_test(test_an_absolute_target),
	    cmocka_unit_test(test_refusals_and_their_status),
	    cmocka_unit_test(test_query_parameters),
	    cmocka_unit_test(test_percent_decoding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
