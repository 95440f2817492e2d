/* What a probe asks (docs/config.md, "Probes"): `exec` (a command), or a
 * connection corral makes itself, `tcp`, `http` or `unix`. One of them per
 * probe. Only the values are read here; the runtime is
 * supervisor/probes/net_probe.c. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "base/names.h"
#include "base/xmalloc.h"
#include "config/config_parse.h"
#include "config/diagnostics.h"

static const char *const http_keys[] = {"port", "path", "host", "headers", NULL};

/* A task's probes connect to its own loopback unless told otherwise. */
#define PROBE_DEFAULT_HOST "127.0.0.1"

static bool parse_port_text(const char *text, uint16_t *out)
{
	char *end;
	long value = strtol(text, &end, 10);
	if (end == text || *end || value < 1 || value > 65535 || text[0] == '+' || text[0] == '-')
		return false;
	*out = (uint16_t)value;
	return true;
}

static bool parse_port(struct load_context *context, const yaml_node_t *node,
		       const struct where *where, uint16_t *out)
{
	const char *text = expect_string(context, node, where);
	if (!text)
		return false;
	if (!parse_port_text(text, out)) {
		report(context, node, where, "must be a port number from 1 to 65535, not %s",
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	return true;
}

bool host_is_address(const char *host)
{
	unsigned char buffer[sizeof(struct in6_addr)];
	return inet_pton(AF_INET, host, buffer) == 1 || inet_pton(AF_INET6, host, buffer) == 1;
}

static bool check_host(struct load_context *context, const yaml_node_t *node,
		       const struct where *where, const char *host)
{
	/* Addresses only: probes are made from the task's network, whose
	 * names corral's resolver does not know. */
	if (host_is_address(host))
		return true;
	report(context, node, where,
	       "%s is not an IP address; probes take addresses (127.0.0.1, ::1), since a "
	       "name lookup could stall corral",
	       quote(host, strlen(host)).text);
	return false;
}

/* `tcp: 6379`, `tcp: "10.0.0.2:6379"`, `tcp: "[::1]:6379"`. */
static void parse_tcp(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct probe_config *probe)
{
	const char *text = expect_string(context, node, where);
	if (!text)
		return;
	const char *colon = strrchr(text, ':');
	char host[64] = PROBE_DEFAULT_HOST;
	const char *port = text;
	if (colon) {
		size_t length = (size_t)(colon - text);
		const char *start = text;
		if (length >= 2 && text[0] == '[' && text[length - 1] == ']') {
			start++;
			length -= 2;
		}
		if (length == 0 || length >= sizeof(host)) {
			report(context, node, where, "must be PORT or ADDRESS:PORT, not %s",
			       quote(text, node->data.scalar.length).text);
			return;
		}
		memcpy(host, start, length);
		host[length] = '\0';
		port = colon + 1;
	}
	if (!parse_port_text(port, &probe->port)) {
		report(context, node, where,
		       "must be PORT or ADDRESS:PORT with a port from 1 to 65535, not %s",
		       quote(text, node->data.scalar.length).text);
		return;
	}
	if (!check_host(context, node, where, host))
		return;
	probe->host = xstrdup(host);
	probe->kind = PROBE_TCP;
}

static void parse_headers(struct load_context *context, const yaml_node_t *node,
			  const struct where *where, struct probe_config *probe)
{
	if (!expect_map(context, node, where, "a map of header name to value"))
		return;
	struct map_entries entries;
	map_collect(context, node, where, "header", &entries);
	probe->headers = xcalloc(entries.count + 1, sizeof(*probe->headers));
	size_t count = 0;
	for (size_t i = 0; i < entries.count; i++) {
		const struct map_entry *entry = &entries.items[i];
		char buffer[96];
		struct where field_where = where_field(where, entry->key, buffer, sizeof(buffer));
		const char *value = expect_string(context, entry->value, &field_where);
		if (!value)
			continue;
		/* A CR or LF would end the header and start another. */
		bool bad_name =
		    entry->key_length == 0 || strcspn(entry->key, ": \t\r\n") != entry->key_length;
		if (bad_name || strpbrk(value, "\r\n")) {
			report(context, bad_name ? entry->key_node : entry->value, &field_where,
			       bad_name ? "is not a header name" : "must not hold a line break");
			continue;
		}
		probe->headers[count++] = xasprintf("%s: %s", entry->key, value);
	}
	map_entries_free(&entries);
}

/* `http: {port: 8080, path: /healthz, host: 127.0.0.1, headers: {...}}`. */
static void parse_http(struct load_context *context, const yaml_node_t *node,
		       const struct where *where, struct probe_config *probe)
{
	if (!expect_map(context, node, where, "a map with \"port\" (and \"path\", \"host\")"))
		return;
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[64];
	struct where field_where;
	bool ok = true;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, http_keys);
	if ((field = map_lookup(&fields, "port"))) {
		field_where = where_field(where, "port", buffer, sizeof(buffer));
		ok &= parse_port(context, field, &field_where, &probe->port);
	} else if (!map_has_key_or_typo(&fields, http_keys, "port")) {
		report(context, node, where, "missing \"port\"");
		ok = false;
	}
	const char *path = "/";
	if ((field = map_lookup(&fields, "path"))) {
		field_where = where_field(where, "path", buffer, sizeof(buffer));
		path = expect_string(context, field, &field_where);
		/* A fragment is the client's own: it never goes on the wire. */
		if (path && (path[0] != '/' || strpbrk(path, " \t\r\n#"))) {
			report(context, field, &field_where,
			       "must start with / and hold no space, line break or #, not %s",
			       quote(path, field->data.scalar.length).text);
			path = NULL;
		}
		ok &= path != NULL;
	}
	const char *host = PROBE_DEFAULT_HOST;
	if ((field = map_lookup(&fields, "host"))) {
		field_where = where_field(where, "host", buffer, sizeof(buffer));
		host = expect_string(context, field, &field_where);
		ok &= host && check_host(context, field, &field_where, host);
	}
	if ((field = map_lookup(&fields, "headers"))) {
		field_where = where_field(where, "headers", buffer, sizeof(buffer));
		parse_headers(context, field, &field_where, probe);
	}
	if (ok) {
		probe->path = xstrdup(path);
		probe->host = xstrdup(host);
		probe->kind = PROBE_HTTP;
	}
	map_entries_free(&fields);
}

/* `unix: /run/app.sock`: in the task's root, which corral reaches through
 * /proc/PID/root when the task has a mount namespace of its own. */
static void parse_unix(struct load_context *context, const yaml_node_t *node,
		       const struct where *where, struct probe_config *probe)
{
	const char *path = expect_absolute(context, node, where);
	if (!path)
		return;
	/* Room left for "/proc/4194304/root" in front. */
	if (strlen(path) + sizeof("/proc/4194304/root") >
	    sizeof(((struct sockaddr_un *)0)->sun_path)) {
		report(context, node, where, "is too long for a Unix socket address");
		return;
	}
	probe->path = xstrdup(path);
	probe->kind = PROBE_UNIX;
}

bool probe_target_parse(struct load_context *context, const yaml_node_t *node,
			const struct map_entries *fields, const struct where *where,
			struct probe_config *probe)
{
	const yaml_node_t *found = NULL;
	const char *found_key = NULL;
	for (size_t i = 0; probe_target_keys[i]; i++) {
		const yaml_node_t *value = map_lookup(fields, probe_target_keys[i]);
		if (!value)
			continue;
		if (found) {
			/* At the later one: the first was a complete choice. */
			bool later = value->start_mark.index > found->start_mark.index;
			report(context, later ? value : found, where,
			       "\"%s\" and \"%s\" exclude each other; a probe asks one way",
			       found_key, probe_target_keys[i]);
			return false;
		}
		found = value;
		found_key = probe_target_keys[i];
	}
	if (!found)
		return false;
	char buffer[64];
	struct where field_where = where_field(where, found_key, buffer, sizeof(buffer));
	if (strcmp(found_key, "exec") == 0) {
		probe_command_parse(context, found, &field_where, probe);
		probe->kind = PROBE_EXEC;
	} else if (strcmp(found_key, "tcp") == 0) {
		parse_tcp(context, found, &field_where, probe);
	} else if (strcmp(found_key, "http") == 0) {
		parse_http(context, found, &field_where, probe);
	} else {
		parse_unix(context, found, &field_where, probe);
	}
	(void)node;
	return true;
}
