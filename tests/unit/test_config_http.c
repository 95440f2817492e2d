/* The top level's `http` map: where corral's HTTP endpoint listens, read
 * as written (an IPv4 or bracketed IPv6 address and a port, or a socket
 * path), each mistake one error at its place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/model/config.h"
#include "config_cases.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GROUPS        "groups: {g: {tasks: {t: {command: x}}}}\n"
/* The listen value starts at line 2, column 16. */
#define LISTEN(text) GROUPS "http: {listen: " text "}\n"

static void test_off_without_the_key(void **state)
{
	(void)state;
	struct config *config = parse_ok(GROUPS);
	assert_int_equal(config->http.kind, HTTP_LISTEN_OFF);
	assert_null(config->http.listen);
	config_free(config);
}

static void test_an_ipv4_address_and_port(void **state)
{
	(void)state;
	struct config *config = parse_ok(LISTEN("\"127.0.0.1:9090\""));
	assert_int_equal(config->http.kind, HTTP_LISTEN_INET);
	assert_int_equal(config->http.port, 9090);
	assert_memory_equal(config->http.address, "\x7f\x00\x00\x01", 4);
	assert_string_equal(config->http.listen, "127.0.0.1:9090");
	assert_int_equal(config->http.idle_timeout_ms, CONFIG_DEFAULT_HTTP_IDLE_TIMEOUT_MS);
	config_free(config);
	config = parse_ok(LISTEN("0.0.0.0:1"));
	assert_int_equal(config->http.kind, HTTP_LISTEN_INET);
	assert_int_equal(config->http.port, 1);
	assert_memory_equal(config->http.address, "\0\0\0\0", 4);
	config_free(config);
}

static void test_an_ipv6_address_in_brackets(void **state)
{
	(void)state;
	struct config *config = parse_ok(LISTEN("\"[::1]:9090\""));
	assert_int_equal(config->http.kind, HTTP_LISTEN_INET6);
	assert_int_equal(config->http.port, 9090);
	assert_memory_equal(config->http.address, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16);
	config_free(config);
	config = parse_ok(LISTEN("\"[::]:65535\""));
	assert_int_equal(config->http.kind, HTTP_LISTEN_INET6);
	assert_int_equal(config->http.port, 65535);
	config_free(config);
}

static void test_a_socket_path_and_an_idle_timeout(void **state)
{
	(void)state;
	struct config *config =
	    parse_ok(GROUPS "http: {listen: /run/corral/http.sock, idle_timeout: 2m}\n");
	assert_int_equal(config->http.kind, HTTP_LISTEN_UNIX);
	assert_string_equal(config->http.listen, "/run/corral/http.sock");
	assert_int_equal(config->http.idle_timeout_ms, 120000);
	config_free(config);
}

/* A reload keeps the listening socket when nothing it listens on changed,
 * however the address is spelt. */
static void test_equal_settings(void **state)
{
	(void)state;
	struct config *a = parse_ok(LISTEN("\"[::1]:9090\""));
	struct config *b = parse_ok(LISTEN("\"[0::1]:9090\""));
	struct config *c = parse_ok(LISTEN("\"[::1]:9091\""));
	struct config *d = parse_ok(GROUPS "http: {listen: \"[::1]:9090\", idle_timeout: 5s}\n");
	struct config *e = parse_ok(GROUPS);
	struct config *f = parse_ok(GROUPS);
	assert_true(http_config_equal(&a->http, &b->http));
	assert_false(http_config_equal(&a->http, &c->http));
	assert_false(http_config_equal(&a->http, &d->http));
	assert_false(http_config_equal(&a->http, &e->http));
	assert_true(http_config_equal(&e->http, &f->http));
	config_free(a);
	config_free(b);
	config_free(c);
	config_free(d);
	config_free(e);
	config_free(f);
}

static const struct error_case cases[] = {
    {"a host name", LISTEN("\"localhost:9090\""), 2, 16,
     "http.listen: \"localhost:9090\": names a host, not an address: corral does not look "
     "names up; write 127.0.0.1:9090 or [::1]:9090 for this host"},
    {"no address", LISTEN("\":9090\""), 2, 16,
     "http.listen: \":9090\": names no address: 127.0.0.1:9090 for this host only, "
     "0.0.0.0:9090 for every IPv4 address, [::]:9090 for every address"},
    {"IPv6 without brackets", LISTEN("\"::1:9090\""), 2, 16,
     "http.listen: \"::1:9090\": an IPv6 address goes in brackets: [ADDRESS]:PORT, such as "
     "[::1]:9090"},
    {"brackets without a port", LISTEN("\"[::1]9090\""), 2, 16,
     "http.listen: \"[::1]9090\": an IPv6 address and its port are written [ADDRESS]:PORT, "
     "such as [::1]:9090"},
    {"not an IPv6 address", LISTEN("\"[::g]:9090\""), 2, 16,
     "http.listen: \"[::g]:9090\": is not an IPv6 address in brackets (such as [::1]:9090 or "
     "[::]:9090)"},
    {"not an IPv4 address", LISTEN("\"1.2.3:9090\""), 2, 16,
     "http.listen: \"1.2.3:9090\": is not an IPv4 address and port (such as 127.0.0.1:9090)"},
    {"port 0", LISTEN("\"127.0.0.1:0\""), 2, 16,
     "http.listen: \"127.0.0.1:0\": the port must be a whole number from 1 to 65535"},
    {"port too big", LISTEN("\"127.0.0.1:65536\""), 2, 16,
     "http.listen: \"127.0.0.1:65536\": the port must be a whole number from 1 to 65535"},
    {"port not a number", LISTEN("\"127.0.0.1:http\""), 2, 16,
     "http.listen: \"127.0.0.1:http\": the port must be a whole number from 1 to 65535"},
    {"a port alone", LISTEN("9090"), 2, 16,
     "http.listen: \"9090\": must be ADDRESS:PORT (such as 127.0.0.1:9090) or the absolute "
     "path of a socket"},
    {"a relative path", LISTEN("run/http.sock"), 2, 16,
     "http.listen: \"run/http.sock\": must be ADDRESS:PORT (such as 127.0.0.1:9090) or the "
     "absolute path of a socket"},
    {"a directory", LISTEN("/run/corral/"), 2, 16,
     "http.listen: \"/run/corral/\": must be the path of a socket, not of a directory"},
    {"a path too long",
     LISTEN("/run/corral/012345678901234567890123456789012345678901234567890123456789"
	    "012345678901234567890123456789012345678901234.sock"),
     2, 16,
     "http.listen: \"/run/corral/01234567890123456789012345678901234567890123456789012345678901"
     "234567890123456...\": is longer than the 107 bytes a socket path can have"},
    {"listen not a string", LISTEN("[a, b]"), 2, 16, "http.listen: must be a string, not a list"},
    {"no listen", GROUPS "http: {idle_timeout: 5s}\n", 2, 7,
     "http: needs listen: an address and port (\"127.0.0.1:9090\") or a socket path"},
    {"not a map", GROUPS "http: \"127.0.0.1:9090\"\n", 2, 7,
     "http: must be a map such as {listen: \"127.0.0.1:9090\"}, not a string"},
    {"idle timeout below a second", GROUPS "http: {listen: /x.sock, idle_timeout: 500ms}\n", 2, 39,
     "http.idle_timeout: must be at least 1s, not \"500ms\""},
};

static void test_mistakes_are_one_error_at_their_place(void **state)
{
	(void)state;
	assert_error_cases(cases, ARRAY_SIZE(cases));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_off_without_the_key),
	    cmocka_unit_test(test_an_ipv4_address_and_port),
	    cmocka_unit_test(test_an_ipv6_address_in_brackets),
	    cmocka_unit_test(test_a_socket_path_and_an_idle_timeout),
	    cmocka_unit_test(test_equal_settings),
	    cmocka_unit_test(test_mistakes_are_one_error_at_their_place),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
