/* `wait_for:` (docs/config.md, "Outside dependencies"): targets outside
 * the config that a task waits for before it starts, each a map with one
 * of `tcp: HOST:PORT`, `http: URL` and `path: PATH`, and `timeout`,
 * `interval`. Host names are allowed here, unlike in probes: they are
 * resolved without blocking at run time (supervisor/probes/name_resolver.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const wait_target_keys[] = {"tcp", "http", "path", "timeout", "interval", NULL};
static const char *const wait_target_kinds[] = {"tcp", "http", "path", NULL};

/* Asked once a second by default, as compose's `up --wait` and
 * wait-for-it do; each check is cut at the interval. */
#define WAIT_TARGET_DEFAULT_INTERVAL_MS 1000
/* RFC 1035: a whole name. */
#define HOST_NAME_MAX_LENGTH 253

/* Letters, digits, '-', '_' and dots, as DNS and /etc/hosts names are;
 * no empty label. */
static bool is_host_name(const char *host)
{
	size_t length = strlen(host);
	if (!length || length > HOST_NAME_MAX_LENGTH || host[0] == '.' || host[0] == '-' ||
	    strstr(host, ".."))
		return false;
	for (const char *c = host; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
			return false;
	return true;
}

static bool parse_port_text(const char *text, size_t length, uint16_t *out)
{
	if (!length || length > 5)
		return false;
	unsigned value = 0;
	for (size_t i = 0; i < length; i++) {
		if (!isdigit((unsigned char)text[i]))
			return false;
		value = value * 10 + (unsigned)(text[i] - '0');
	}
	if (value < 1 || value > 65535)
		return false;
	*out = (uint16_t)value;
	return true;
}

/* "HOST:PORT" or "[V6]:PORT" (`default_port` 0: the port is required)
 * into the probe; false when it is not one. */
static bool split_host_port(const char *text, size_t length, uint16_t default_port,
			    struct probe_config *probe)
{
	const char *host = text, *port = NULL;
	size_t host_length = length;
	if (length && text[0] == '[') {
		const char *close = memchr(text, ']', length);
		if (!close)
			return false;
		host = text + 1;
		host_length = (size_t)(close - host);
		size_t rest = length - (size_t)(close + 1 - text);
		if (rest) {
			if (close[1] != ':')
				return false;
			port = close + 2;
		}
	} else {
		const char *colon = memchr(text, ':', length);
		if (colon) {
			if (memchr(colon + 1, ':', length - (size_t)(colon + 1 - text)))
				return false; /* an IPv6 address wants brackets */
			host_length = (size_t)(colon - text);
			port = colon + 1;
		}
	}
	if (port) {
		if (!parse_port_text(port, length - (size_t)(port - text), &probe->port))
			return false;
	} else if (default_port) {
		probe->port = default_port;
	} else {
		return false;
	}
	char *name = xstrndup(host, host_length);
	if (host_is_address(name)) {
		probe->host_is_name = false;
	} else if (is_host_name(name) && text[0] != '[') {
		probe->host_is_name = true;
	} else {
		free(name);
		return false;
	}
	probe->host = name;
	return true;
}

static bool parse_tcp(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct probe_config *probe)
{
	const char *text = expect_string(context, node, where);
	if (!text)
		return false;
	if (!split_host_port(text, strlen(text), 0, probe)) {
		report(context, node, where,
		       "must be HOST:PORT (db:5432, 10.0.0.5:5432, [fd00::5]:5432), not %s",
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	probe->kind = PROBE_TCP;
	return true;
}

/* http://HOST[:PORT][/PATH]: plain HTTP, as corral's http probes speak it. */
static bool parse_http(struct load_context *context, const yaml_node_t *node,
		       const struct where *where, struct probe_config *probe)
{
	static const char scheme[] = "http://";
	const char *text = expect_string(context, node, where);
	if (!text)
		return false;
	if (strncmp(text, "https://", 8) == 0) {
		report(context, node, where,
		       "https is not spoken here (corral has no TLS): wait for the port with "
		       "`tcp: HOST:443`, or for a plain http:// URL");
		return false;
	}
	const char *authority = text + sizeof(scheme) - 1;
	size_t authority_length =
	    strncmp(text, scheme, sizeof(scheme) - 1) == 0 ? strcspn(authority, "/?#") : 0;
	const char *path = authority + authority_length;
	if (authority_length && strchr(path, '#')) {
		/* A fragment is the client's own business: it never goes on the wire,
		 * and a request line that carries one is not HTTP. */
		report(context, node, where,
		       "a fragment (#...) is never sent to a server: leave it out of %s",
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	if (!authority_length || strpbrk(path, " \t\r\n") ||
	    !split_host_port(authority, authority_length, 80, probe)) {
		report(context, node, where,
		       "must be a URL http://HOST[:PORT][/PATH] (http://auth:8080/healthz), not %s",
		       quote(text, node->data.scalar.length).text);
		return false;
	}
	probe->path = *path == '/' ? xstrdup(path) : xasprintf("/%s", path);
	probe->kind = PROBE_HTTP;
	return true;
}

static bool parse_path(struct load_context *context, const yaml_node_t *node,
		       const struct where *where, struct probe_config *probe)
{
	const char *path = expect_absolute(context, node, where);
	if (!path)
		return false;
	probe->path = xstrdup(path);
	probe->kind = PROBE_PATH;
	return true;
}

/* One entry: its kind, its target, its timing. False when the entry is
 * not kept (each mistake reported). */
static bool parse_target(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, struct wait_target *target)
{
	if (!expect_map(context, node, where,
			"a map with one of \"tcp\" (HOST:PORT), \"http\" (a URL) or \"path\""))
		return false;
	struct map_entries fields;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, wait_target_keys);
	const yaml_node_t *kind_node = NULL;
	const char *kind = NULL;
	bool ok = true;
	for (const char *const *key = wait_target_kinds; *key; key++) {
		const yaml_node_t *found = map_lookup(&fields, *key);
		if (!found)
			continue;
		if (kind_node) {
			report(context, found, where,
			       "\"%s\" and \"%s\" exclude each other; one "
			       "target an entry",
			       kind, *key);
			ok = false;
			continue;
		}
		kind_node = found;
		kind = *key;
	}
	char buffer[96];
	struct where field_where;
	if (!kind_node) {
		if (!map_has_key_or_typo(&fields, wait_target_keys, "tcp"))
			report(context, node, where,
			       "missing the target: \"tcp\" (HOST:PORT), \"http\" (a URL) or "
			       "\"path\"");
		ok = false;
	} else if (ok) {
		field_where = where_field(where, kind, buffer, sizeof(buffer));
		ok = strcmp(kind, "tcp") == 0
			 ? parse_tcp(context, kind_node, &field_where, &target->probe)
		     : strcmp(kind, "http") == 0
			 ? parse_http(context, kind_node, &field_where, &target->probe)
			 : parse_path(context, kind_node, &field_where, &target->probe);
	}
	target->probe.interval_ms = WAIT_TARGET_DEFAULT_INTERVAL_MS;
	const yaml_node_t *field;
	if ((field = map_lookup(&fields, "interval"))) {
		field_where = where_field(where, "interval", buffer, sizeof(buffer));
		uint64_t interval_ms;
		if (expect_duration(context, field, &field_where, &interval_ms)) {
			if (interval_ms)
				target->probe.interval_ms = interval_ms;
			else
				report(context, field, &field_where, "must be longer than 0");
		}
	}
	target->probe.timeout_ms = target->probe.interval_ms;
	if ((field = map_lookup(&fields, "timeout"))) {
		field_where = where_field(where, "timeout", buffer, sizeof(buffer));
		expect_duration(context, field, &field_where, &target->timeout_ms);
	}
	map_entries_free(&fields);
	if (ok) {
		const struct probe_config *probe = &target->probe;
		if (probe->kind == PROBE_TCP)
			target->text =
			    xasprintf(strchr(probe->host, ':') ? "tcp [%s]:%u" : "tcp %s:%u",
				      probe->host, probe->port);
		else if (probe->kind == PROBE_HTTP)
			target->text =
			    xasprintf("http %s", kind_node->data.scalar.value
						     ? (const char *)kind_node->data.scalar.value
						     : "");
		else
			target->text = xasprintf("path %s", probe->path);
	}
	return ok;
}

void wait_for_parse(struct load_context *context, const yaml_node_t *node,
		    const struct where *where, struct task_config *task)
{
	if (!expect_list(context, node, where,
			 "a list of targets ({tcp: HOST:PORT}, {http: URL}, {path: PATH})"))
		return;
	size_t count = list_length(node);
	task->wait_for = xcalloc(count ? count : 1, sizeof(*task->wait_for));
	yaml_list_each(walk, context, node, where)
	{
		struct wait_target *target = &task->wait_for[task->wait_for_count];
		if (parse_target(context, walk.item, &walk.where, target)) {
			target->index = walk.index;
			task->wait_for_count++;
		} else {
			probe_config_free(&target->probe);
			memset(target, 0, sizeof(*target));
		}
	}
	if (!task->wait_for_count) {
		free(task->wait_for);
		task->wait_for = NULL;
	}
}
