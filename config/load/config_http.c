/* The top level's `http` map: where corral's read-only HTTP endpoint
 * listens (docs/http.md). An address is read as written, never resolved:
 * the config stays pure, and a host name's address could change under a
 * running corral. A socket's directory that is there already is looked
 * at, as a mount's source is: one others could replace the socket in is
 * an error at its place. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/unix_listener.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const http_keys[] = {"listen", "idle_timeout", NULL};

/* "9090" into *port: 1 to 65535, digits only. */
static bool parse_port(const char *text, uint16_t *port)
{
	if (!*text || strlen(text) > 5 || strspn(text, "0123456789") != strlen(text))
		return false;
	unsigned long value = strtoul(text, NULL, 10);
	if (value < 1 || value > 65535)
		return false;
	*port = (uint16_t)value;
	return true;
}

/* An address and port into `http`, or NULL; else why not. */
static const char *parse_address(const char *text, struct http_config *http)
{
	char host[64];
	const char *port;
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close || close[1] != ':')
			return "an IPv6 address and its port are written [ADDRESS]:PORT, such as "
			       "[::1]:9090";
		size_t length = (size_t)(close - text - 1);
		if (length >= sizeof(host))
			return "is not an IPv6 address in brackets";
		memcpy(host, text + 1, length);
		host[length] = '\0';
		if (inet_pton(AF_INET6, host, http->address) != 1)
			return "is not an IPv6 address in brackets (such as [::1]:9090 or "
			       "[::]:9090)";
		http->kind = HTTP_LISTEN_INET6;
		port = close + 2;
	} else {
		const char *colon = strrchr(text, ':');
		if (!colon)
			return "must be ADDRESS:PORT (such as 127.0.0.1:9090) or the absolute path "
			       "of "
			       "a socket";
		size_t length = (size_t)(colon - text);
		if (length == 0)
			return "names no address: 127.0.0.1:9090 for this host only, 0.0.0.0:9090 "
			       "for every IPv4 address, [::]:9090 for every address";
		if (memchr(text, ':', length))
			return "an IPv6 address goes in brackets: [ADDRESS]:PORT, such as "
			       "[::1]:9090";
		if (length >= sizeof(host))
			return "is not an IPv4 address and port";
		memcpy(host, text, length);
		host[length] = '\0';
		if (inet_pton(AF_INET, host, http->address) != 1)
			return strspn(host, "0123456789.") == length
				   ? "is not an IPv4 address and port (such as 127.0.0.1:9090)"
				   : "names a host, not an address: corral does not look names up; "
				     "write 127.0.0.1:9090 or [::1]:9090 for this host";
		http->kind = HTTP_LISTEN_INET;
		port = colon + 1;
	}
	if (!parse_port(port, &http->port))
		return "the port must be a whole number from 1 to 65535";
	return NULL;
}

static void parse_listen(struct load_context *context, const yaml_node_t *node,
			 struct http_config *http)
{
	struct where where = {.owner = "", .field = "http.listen"};
	const char *text = expect_string(context, node, &where);
	if (!text)
		return;
	const char *why = NULL;
	struct http_config parsed = {.kind = HTTP_LISTEN_UNIX};
	if (text[0] == '/') {
		/* sun_path holds 108 bytes with its NUL. */
		if (strlen(text) > 107)
			why = "is longer than the 107 bytes a socket path can have";
		else if (text[strlen(text) - 1] == '/')
			why = "must be the path of a socket, not of a directory";
	} else {
		why = parse_address(text, &parsed);
	}
	/* A directory there already that others could replace the socket
	 * in: said at its place now (corral refuses it at the start too,
	 * and checks again then: a missing one is made, or changed since). */
	char untrusted[PATH_MAX + 256];
	if (!why && text[0] == '/' &&
	    unix_listener_check_directory(text, untrusted, sizeof(untrusted)) == -EPERM) {
		report(context, node, &where, "%s", untrusted);
		return;
	}
	if (why) {
		report(context, node, &where, "%s: %s", quote(text, node->data.scalar.length).text,
		       why);
		return;
	}
	http->kind = parsed.kind;
	memcpy(http->address, parsed.address, sizeof(http->address));
	http->port = parsed.port;
	http->listen = xstrdup(text);
}

void http_settings_parse(struct load_context *context, const yaml_node_t *node,
			 struct config *config)
{
	struct where where = {.owner = "", .field = "http"};
	struct map_entries fields;
	const yaml_node_t *field;

	if (!expect_map(context, node, &where, "a map such as {listen: \"127.0.0.1:9090\"}"))
		return;
	map_collect(context, node, &where, "key", &fields);
	map_check_keys(context, &fields, &where, http_keys);
	if ((field = map_lookup(&fields, "listen")))
		parse_listen(context, field, &config->http);
	else if (!map_has_key_or_typo(&fields, http_keys, "listen"))
		report(context, node, &where,
		       "needs listen: an address and port (\"127.0.0.1:9090\") or a socket path");
	if ((field = map_lookup(&fields, "idle_timeout"))) {
		struct where timeout_where = {.owner = "", .field = "http.idle_timeout"};
		uint64_t milliseconds = 0;
		bool valid = expect_duration(context, field, &timeout_where, &milliseconds);
		/* Below a second, a client on a loaded machine could be cut
		 * between two requests it means to send on one connection. */
		if (valid && milliseconds < 1000)
			report(
			    context, field, &timeout_where, "must be at least 1s, not %s",
			    quote((const char *)field->data.scalar.value, field->data.scalar.length)
				.text);
		else if (valid)
			config->http.idle_timeout_ms = milliseconds;
	}
	map_entries_free(&fields);
}

bool http_listen_equal(const struct http_config *a, const struct http_config *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case HTTP_LISTEN_OFF:
		return true;
	case HTTP_LISTEN_UNIX:
		return strcmp(a->listen, b->listen) == 0;
	case HTTP_LISTEN_INET:
	case HTTP_LISTEN_INET6:
		break;
	}
	return a->port == b->port && memcmp(a->address, b->address, sizeof(a->address)) == 0;
}

bool http_config_equal(const struct http_config *a, const struct http_config *b)
{
	return http_listen_equal(a, b) && a->idle_timeout_ms == b->idle_timeout_ms;
}
