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
#include "config/load/config_parse.h"
#include "config/text/instance_template.h"
#include "config/yaml/diagnostics.h"

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

bool host_is_address(const char *host)
{
	unsigned char buffer[sizeof(struct in6_addr)];
	return inet_pton(AF_INET, host, buffer) == 1 || inet_pton(AF_INET6, host, buffer) == 1;
}

/* The checks of each target, over its text: false with `why`. One place
 * for a value read from the file and for one an instance's number made. */

static bool check_host(const char *host, char *error, size_t error_size)
{
	/* Addresses only: probes are made from the task's network, whose
	 * names corral's resolver does not know. */
	if (host_is_address(host))
		return true;
	snprintf(error, error_size,
		 "%s is not an IP address; probes take addresses (127.0.0.1, ::1), since a "
		 "name lookup could stall corral",
		 quote(host, strlen(host)).text);
	return false;
}

/* `tcp: 6379`, `tcp: "10.0.0.2:6379"`, `tcp: "[::1]:6379"`. */
static bool check_tcp(const char *text, char host[64], uint16_t *port, char *error,
		      size_t error_size)
{
	const char *colon = strrchr(text, ':');
	const char *port_text = text;
	snprintf(host, 64, "%s", PROBE_DEFAULT_HOST);
	if (colon) {
		size_t length = (size_t)(colon - text);
		const char *start = text;
		if (length >= 2 && text[0] == '[' && text[length - 1] == ']') {
			start++;
			length -= 2;
		}
		if (length == 0 || length >= 64) {
			snprintf(error, error_size, "must be PORT or ADDRESS:PORT, not %s",
				 quote(text, strlen(text)).text);
			return false;
		}
		memcpy(host, start, length);
		host[length] = '\0';
		port_text = colon + 1;
	}
	if (!parse_port_text(port_text, port)) {
		snprintf(error, error_size,
			 "must be PORT or ADDRESS:PORT with a port from 1 to 65535, not %s",
			 quote(text, strlen(text)).text);
		return false;
	}
	return check_host(host, error, error_size);
}

static bool check_http_port(const char *text, uint16_t *port, char *error, size_t error_size)
{
	if (parse_port_text(text, port))
		return true;
	snprintf(error, error_size, "must be a port number from 1 to 65535, not %s",
		 quote(text, strlen(text)).text);
	return false;
}

static bool check_http_path(const char *path, char *error, size_t error_size)
{
	/* A fragment is the client's own: it never goes on the wire. */
	if (path[0] == '/' && !strpbrk(path, " \t\r\n#"))
		return true;
	snprintf(error, error_size, "must start with / and hold no space, line break or #, not %s",
		 quote(path, strlen(path)).text);
	return false;
}

static bool check_unix_path(const char *path, char *error, size_t error_size)
{
	if (path[0] != '/') {
		snprintf(error, error_size, "must be an absolute path, not %s",
			 quote(path, strlen(path)).text);
		return false;
	}
	/* Room left for "/proc/4194304/root" in front. */
	if (strlen(path) + sizeof("/proc/4194304/root") >
	    sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(error, error_size, "is too long for a Unix socket address");
		return false;
	}
	return true;
}

/* ---- targets that name the instance ---- */

#define TARGET_MAX 256

/* Where in a one-line scalar the `$` at `offset` is, as interpolation
 * errors say it. */
static struct source_location offset_location(const yaml_node_t *node, size_t offset)
{
	struct source_location at = node_location(node);
	bool one_line = !memchr(node->data.scalar.value, '\n', node->data.scalar.length);
	bool quoted = node->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
		      node->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	if (one_line && node->end_mark.index - node->start_mark.index ==
			    node->data.scalar.length + (quoted ? 2 : 0))
		at.column += (unsigned)offset + (quoted ? 1 : 0);
	return at;
}

/* `text` as written for `field`: when it names the instance, kept in
 * `template` and expanded for instance 0 into `expanded` (what the checks
 * then read, as for any value). NULL after reporting a malformed one. */
static const char *expand_for_first(struct load_context *context, const yaml_node_t *node,
				    const struct where *where, const char *text,
				    struct probe_template *template, char *expanded)
{
	if (!instance_template_used(text))
		return text;
	struct instance_template_error error;
	if (instance_template_expand(text, 0, expanded, TARGET_MAX, &error) < 0) {
		diagnostics_add(context->diagnostics, offset_location(node, error.offset),
				"%s%s%s%s%s", where->owner, where->owner[0] ? ": " : "",
				where->field, where->field[0] ? ": " : "", error.message);
		return NULL;
	}
	free(template->text);
	free(template->where);
	template->text = xstrdup(text);
	template->where =
	    xasprintf("%s%s%s", where->owner, where->owner[0] ? ": " : "", where->field);
	template->location = node_location(node);
	return expanded;
}

/* A check's refusal of a value an instance's number made says so. */
static void report_refused(struct load_context *context, const yaml_node_t *node,
			   const struct where *where, const struct probe_template *template,
			   const char *why)
{
	if (template->text)
		report(context, node, where, "%s (instance 0 of %s)", why,
		       quote(template->text, strlen(template->text)).text);
	else
		report(context, node, where, "%s", why);
}

static void parse_tcp(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct probe_config *probe)
{
	char expanded[TARGET_MAX], host[64], why[320];
	const char *text = expect_string(context, node, where);
	if (text)
		text =
		    expand_for_first(context, node, where, text, &probe->port_template, expanded);
	if (!text)
		return;
	if (!check_tcp(text, host, &probe->port, why, sizeof(why))) {
		report_refused(context, node, where, &probe->port_template, why);
		return;
	}
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
	char buffer[64], why[320], expanded_port[TARGET_MAX], expanded_path[TARGET_MAX];
	struct where field_where;
	bool ok = true;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, http_keys);
	if ((field = map_lookup(&fields, "port"))) {
		field_where = where_field(where, "port", buffer, sizeof(buffer));
		const char *text = expect_string(context, field, &field_where);
		if (text)
			text = expand_for_first(context, field, &field_where, text,
						&probe->port_template, expanded_port);
		if (text && !check_http_port(text, &probe->port, why, sizeof(why))) {
			report_refused(context, field, &field_where, &probe->port_template, why);
			text = NULL;
		}
		ok &= text != NULL;
	} else if (!map_has_key_or_typo(&fields, http_keys, "port")) {
		report(context, node, where, "missing \"port\"");
		ok = false;
	}
	const char *path = "/";
	if ((field = map_lookup(&fields, "path"))) {
		field_where = where_field(where, "path", buffer, sizeof(buffer));
		path = expect_string(context, field, &field_where);
		if (path)
			path = expand_for_first(context, field, &field_where, path,
						&probe->path_template, expanded_path);
		if (path && !check_http_path(path, why, sizeof(why))) {
			report_refused(context, field, &field_where, &probe->path_template, why);
			path = NULL;
		}
		ok &= path != NULL;
	}
	const char *host = PROBE_DEFAULT_HOST;
	if ((field = map_lookup(&fields, "host"))) {
		field_where = where_field(where, "host", buffer, sizeof(buffer));
		host = expect_string(context, field, &field_where);
		if (host && !check_host(host, why, sizeof(why))) {
			report(context, field, &field_where, "%s", why);
			host = NULL;
		}
		ok &= host != NULL;
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
	char expanded[TARGET_MAX], why[320];
	const char *path = expect_absolute(context, node, where);
	if (path)
		path =
		    expand_for_first(context, node, where, path, &probe->path_template, expanded);
	if (!path)
		return;
	if (!check_unix_path(path, why, sizeof(why))) {
		report_refused(context, node, where, &probe->path_template, why);
		return;
	}
	probe->path = xstrdup(path);
	probe->kind = PROBE_UNIX;
}

/* One template for `instance`, checked: its text into `value`. */
static bool expand_for(const struct probe_template *template, unsigned instance, char *value,
		       char *error, size_t error_size, struct source_location *location)
{
	struct instance_template_error failure;
	if (instance_template_expand(template->text, instance, value, TARGET_MAX, &failure) == 0)
		return true;
	snprintf(error, error_size, "%s: %s (instance %u)", template->where, failure.message,
		 instance);
	*location = template->location;
	return false;
}

/* A check refused what `template` made for `instance`. */
static int refused(const struct probe_template *template, unsigned instance, const char *why,
		   char *error, size_t error_size, struct source_location *location)
{
	snprintf(error, error_size, "%s: %s (instance %u of %s)", template->where, why, instance,
		 quote(template->text, strlen(template->text)).text);
	*location = template->location;
	return -1;
}

int probe_config_for_instance(struct probe_config *probe, unsigned instance, char *error,
			      size_t error_size, struct source_location *location)
{
	char value[TARGET_MAX], host[64], why[320];
	const struct probe_template *port = &probe->port_template, *path = &probe->path_template;
	if (port->text) {
		if (!expand_for(port, instance, value, error, error_size, location))
			return -1;
		bool ok = probe->kind == PROBE_TCP
			      ? check_tcp(value, host, &probe->port, why, sizeof(why))
			      : check_http_port(value, &probe->port, why, sizeof(why));
		if (!ok)
			return refused(port, instance, why, error, error_size, location);
		if (probe->kind == PROBE_TCP) {
			free(probe->host);
			probe->host = xstrdup(host);
		}
	}
	if (path->text) {
		if (!expand_for(path, instance, value, error, error_size, location))
			return -1;
		bool ok = probe->kind == PROBE_HTTP ? check_http_path(value, why, sizeof(why))
						    : check_unix_path(value, why, sizeof(why));
		if (!ok)
			return refused(path, instance, why, error, error_size, location);
		free(probe->path);
		probe->path = xstrdup(value);
	}
	return 0;
}

int task_config_probes_for_instance(struct task_config *task, unsigned instance, char *error,
				    size_t error_size, struct source_location *location)
{
	if (task->readiness && probe_config_for_instance(&task->readiness->probe, instance, error,
							 error_size, location) < 0)
		return -1;
	if (task->health && probe_config_for_instance(&task->health->probe, instance, error,
						      error_size, location) < 0)
		return -1;
	return 0;
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
