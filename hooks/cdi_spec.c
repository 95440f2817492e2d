#include "hooks/cdi_spec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <yaml.h>

#include "base/xmalloc.h"
#include "config/text/cdi_name.h"
#include "config/yaml/diagnostics.h"
#include "config/yaml/yaml_limits.h"
#include "config/yaml/yaml_walk.h"

static const char *const supported_versions[] = {"0.3.0", "0.4.0", "0.5.0",
						 "0.6.0", "0.7.0", "0.8.0"};
static const char *const spec_keys[] = {"cdiVersion", "kind",           "annotations",
					"devices",    "containerEdits", NULL};
static const char *const device_keys[] = {"name", "annotations", "containerEdits", NULL};
/* additionalGids is the reference implementation's JSON tag; the spec's
 * own example writes additionalGIDs. */
static const char *const edits_keys[] = {
    "env", "deviceNodes", "mounts", "hooks", "additionalGids", "additionalGIDs", "intelRdt", NULL};
static const char *const node_keys[] = {"path",     "hostPath",    "type", "major", "minor",
					"fileMode", "permissions", "uid",  "gid",   NULL};
static const char *const mount_keys[] = {"hostPath", "containerPath", "type", "options", NULL};

/* A scalar written as a whole number (decimal, 0x.., 0o.. or a leading 0
 * for octal: fileMode is often written 0666). */
static bool expect_integer(struct load_context *context, const yaml_node_t *node,
			   const struct where *where, int64_t minimum, int64_t maximum,
			   int64_t *out)
{
	const char *text;
	char *end;
	long long value;
	int base = 0;

	if (node->type != YAML_SCALAR_NODE || node_is_null(node) ||
	    node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
		report(context, node, where, "must be a number, not %s", node_kind(node));
		return false;
	}
	text = (const char *)node->data.scalar.value;
	if (strncmp(text, "0o", 2) == 0) {
		text += 2;
		base = 8;
	}
	errno = 0;
	value = strtoll(text, &end, base);
	if (errno || end == text || *end) {
		report(context, node, where, "must be a whole number, not %s",
		       quote((const char *)node->data.scalar.value, node->data.scalar.length).text);
		return false;
	}
	if (value < minimum || value > maximum) {
		report(context, node, where, "%lld is out of range (%lld to %lld)", value,
		       (long long)minimum, (long long)maximum);
		return false;
	}
	*out = value;
	return true;
}

/* Each list item that is a string, checked by the caller. */
static void parse_env(struct load_context *context, const yaml_node_t *node,
		      const struct where *where, struct cdi_edits *edits)
{
	size_t count, stored = 0;

	if (!expect_list(context, node, where, "a list of \"NAME=VALUE\" strings"))
		return;
	count = list_length(node);
	edits->env = xcalloc(count + 1, sizeof(*edits->env));
	for (size_t i = 0; i < count; i++) {
		char buffer[160];
		struct where item_where;
		const yaml_node_t *item =
		    list_item(context, node, i, where, buffer, sizeof(buffer), &item_where);
		const char *entry = item ? expect_string(context, item, &item_where) : NULL;

		if (!entry)
			continue;
		if (!strchr(entry, '=') || entry[0] == '=') {
			report(context, item, &item_where, "must be \"NAME=VALUE\", not %s",
			       quote(entry, item->data.scalar.length).text);
			continue;
		}
		edits->env[stored++] = xstrdup(entry);
	}
}

static bool parse_permissions(struct load_context *context, const yaml_node_t *node,
			      const struct where *where, unsigned *out)
{
	const char *text = expect_string(context, node, where);

	if (!text)
		return false;
	*out = 0;
	for (const char *c = text; *c; c++) {
		if (*c == 'r')
			*out |= DEVICE_READ;
		else if (*c == 'w')
			*out |= DEVICE_WRITE;
		else if (*c == 'm')
			*out |= DEVICE_MKNOD;
		else {
			report(context, node, where, "invalid permissions %s: use r, w and m",
			       quote(text, node->data.scalar.length).text);
			return false;
		}
	}
	/* CDI's default, as for a field not written. */
	if (!*out)
		*out = DEVICE_READ | DEVICE_WRITE | DEVICE_MKNOD;
	return true;
}

/* `item_out` is a struct cdi_device_node (see parse_list). */
static void parse_device_node(struct load_context *context, const yaml_node_t *node,
			      const struct where *where, void *item_out)
{
	struct cdi_device_node *out = item_out;
	static const char *const types[] = {"c", "b", "u", "p"};
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[224];
	struct where field_where;
	int64_t number;

	out->permissions = DEVICE_READ | DEVICE_WRITE | DEVICE_MKNOD;
	out->location = node_location(node);
	if (!expect_map(context, node, where, "a map with \"path\""))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, node_keys);
	if ((field = map_lookup(&fields, "path"))) {
		field_where = where_field(where, "path", buffer, sizeof(buffer));
		const char *path = expect_absolute(context, field, &field_where);

		if (path)
			out->path = xstrdup(path);
	} else if (!map_has_key_or_typo(&fields, node_keys, "path")) {
		report(context, node, where, "missing \"path\" (the device's path in the task)");
	}
	if ((field = map_lookup(&fields, "hostPath"))) {
		field_where = where_field(where, "hostPath", buffer, sizeof(buffer));
		const char *path = expect_absolute(context, field, &field_where);

		if (path)
			out->host_path = xstrdup(path);
	}
	if ((field = map_lookup(&fields, "type"))) {
		field_where = where_field(where, "type", buffer, sizeof(buffer));
		int type = expect_keyword(context, field, &field_where, "device type", types, 4);

		if (type >= 0)
			out->type = types[type][0];
	}
	if ((field = map_lookup(&fields, "major"))) {
		field_where = where_field(where, "major", buffer, sizeof(buffer));
		out->has_major =
		    expect_integer(context, field, &field_where, 0, UINT32_MAX, &out->major);
	}
	if ((field = map_lookup(&fields, "minor"))) {
		field_where = where_field(where, "minor", buffer, sizeof(buffer));
		out->has_minor =
		    expect_integer(context, field, &field_where, 0, UINT32_MAX, &out->minor);
	}
	if ((field = map_lookup(&fields, "fileMode"))) {
		field_where = where_field(where, "fileMode", buffer, sizeof(buffer));
		expect_integer(context, field, &field_where, 0, 07777 | 0170000, &number);
	}
	if ((field = map_lookup(&fields, "permissions"))) {
		field_where = where_field(where, "permissions", buffer, sizeof(buffer));
		parse_permissions(context, field, &field_where, &out->permissions);
	}
	if ((field = map_lookup(&fields, "uid"))) {
		field_where = where_field(where, "uid", buffer, sizeof(buffer));
		expect_integer(context, field, &field_where, 0, UINT32_MAX, &number);
	}
	if ((field = map_lookup(&fields, "gid"))) {
		field_where = where_field(where, "gid", buffer, sizeof(buffer));
		expect_integer(context, field, &field_where, 0, UINT32_MAX, &number);
	}
	map_entries_free(&fields);
}

struct option_flag {
	const char *name;
	unsigned long propagation;
};

static const struct option_flag propagation_options[] = {
    {"private", MS_PRIVATE},       {"rprivate", MS_PRIVATE | MS_REC},
    {"slave", MS_SLAVE},           {"rslave", MS_SLAVE | MS_REC},
    {"shared", MS_SHARED},         {"rshared", MS_SHARED | MS_REC},
    {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC},
};

/* OCI mount options into corral's mount: ro/rw, bind/rbind and the
 * propagation words become fields; every other word (nosuid, nodev, size=..)
 * is kept in `options` for the mount step. Returns whether it is a bind. */
static bool parse_mount_options(struct load_context *context, const yaml_node_t *node,
				const struct where *where, struct mount_config *mount)
{
	size_t count, stored = 0;
	bool bind = false;

	if (!expect_list(context, node, where, "a list of strings"))
		return false;
	count = list_length(node);
	mount->options = xcalloc(count + 1, sizeof(*mount->options));
	for (size_t i = 0; i < count; i++) {
		char buffer[224];
		struct where item_where;
		const yaml_node_t *item =
		    list_item(context, node, i, where, buffer, sizeof(buffer), &item_where);
		const char *option = item ? expect_string(context, item, &item_where) : NULL;
		bool known = false;

		if (!option)
			continue;
		if (strcmp(option, "ro") == 0 || strcmp(option, "rw") == 0) {
			mount->readonly = option[1] == 'o';
			continue;
		}
		if (strcmp(option, "bind") == 0 || strcmp(option, "rbind") == 0) {
			bind = true;
			continue;
		}
		for (size_t j = 0; j < sizeof(propagation_options) / sizeof(*propagation_options);
		     j++) {
			if (strcmp(option, propagation_options[j].name) == 0) {
				mount->propagation = propagation_options[j].propagation;
				known = true;
			}
		}
		if (!known)
			mount->options[stored++] = xstrdup(option);
	}
	if (!stored) {
		free(mount->options);
		mount->options = NULL;
	}
	return bind;
}

/* `item_out` is a struct cdi_mount (see parse_list). */
static void parse_mount(struct load_context *context, const yaml_node_t *node,
			const struct where *where, void *item_out)
{
	struct cdi_mount *out = item_out;
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[224];
	struct where field_where;
	const char *type = NULL;
	bool bind = false;

	out->location = node_location(node);
	if (!expect_map(context, node, where, "a map with \"hostPath\" and \"containerPath\""))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, mount_keys);
	if ((field = map_lookup(&fields, "hostPath"))) {
		field_where = where_field(where, "hostPath", buffer, sizeof(buffer));
		const char *path = expect_string(context, field, &field_where);

		if (path)
			out->mount.source = xstrdup(path);
	} else if (!map_has_key_or_typo(&fields, mount_keys, "hostPath")) {
		report(context, node, where, "missing \"hostPath\"");
	}
	if ((field = map_lookup(&fields, "containerPath"))) {
		field_where = where_field(where, "containerPath", buffer, sizeof(buffer));
		const char *path = expect_absolute(context, field, &field_where);

		if (path)
			out->mount.target = xstrdup(path);
	} else if (!map_has_key_or_typo(&fields, mount_keys, "containerPath")) {
		report(context, node, where, "missing \"containerPath\"");
	}
	if ((field = map_lookup(&fields, "type"))) {
		field_where = where_field(where, "type", buffer, sizeof(buffer));
		type = expect_string(context, field, &field_where);
		if (type && !*type) {
			report(context, field, &field_where, "must not be empty");
			type = NULL;
		}
	}
	if ((field = map_lookup(&fields, "options"))) {
		field_where = where_field(where, "options", buffer, sizeof(buffer));
		bind = parse_mount_options(context, field, &field_where, &out->mount);
	}
	/* OCI's convention: "bind" in the options makes a bind mount whatever
	 * the (dummy) type says; with neither, hostPath is still a path to
	 * bind, which is what every spec in the wild means. */
	if (!bind && type && strcmp(type, "bind") != 0 && strcmp(type, "none") != 0)
		out->mount.type = xstrdup(type);
	else if (out->mount.source && out->mount.source[0] != '/') {
		field_where = where_field(where, "hostPath", buffer, sizeof(buffer));
		report(context, map_lookup(&fields, "hostPath"), &field_where,
		       "must be an absolute path for a bind mount, not %s",
		       quote(out->mount.source, strlen(out->mount.source)).text);
	}
	map_entries_free(&fields);
}

/* `hooks`, `additionalGids` and `intelRdt` are checked for their shape
 * only: corral has no OCI runtime hooks and no place to apply the others. */
static size_t count_list(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, const char *expected)
{
	return expect_list(context, node, where, expected) ? list_length(node) : 0;
}

static size_t count_nonzero_gids(struct load_context *context, const yaml_node_t *node,
				 const struct where *where)
{
	size_t count = 0;

	if (!expect_list(context, node, where, "a list of group ids"))
		return 0;
	for (size_t i = 0; i < list_length(node); i++) {
		char buffer[224];
		struct where item_where;
		const yaml_node_t *item =
		    list_item(context, node, i, where, buffer, sizeof(buffer), &item_where);
		int64_t gid;

		if (item && expect_integer(context, item, &item_where, 0, UINT32_MAX, &gid) && gid)
			count++;
	}
	return count;
}

/* A new array of `size`-byte elements, one for each item of the list
 * `node` that is there, each filled in by `parse` (which reports its own
 * mistakes); *count says how many. NULL, after a report, when `node` is
 * not a list. */
static void *parse_list(struct load_context *context, const yaml_node_t *node,
			const struct where *where, const char *expected, size_t size,
			void (*parse)(struct load_context *, const yaml_node_t *,
				      const struct where *, void *),
			size_t *count)
{
	size_t length;
	char *items;

	if (!expect_list(context, node, where, expected))
		return NULL;
	length = list_length(node);
	items = xcalloc(length, size);
	for (size_t i = 0; i < length; i++) {
		char buffer[224];
		struct where item_where;
		const yaml_node_t *item =
		    list_item(context, node, i, where, buffer, sizeof(buffer), &item_where);

		if (item)
			parse(context, item, &item_where, items + (*count)++ * size);
	}
	return items;
}

static void parse_edits(struct load_context *context, const yaml_node_t *node,
			const struct where *where, struct cdi_edits *out)
{
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[192];
	struct where field_where;

	if (!expect_map(context, node, where, "a map of edits (env, deviceNodes, mounts...)"))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, edits_keys);
	if ((field = map_lookup(&fields, "env"))) {
		field_where = where_field(where, "env", buffer, sizeof(buffer));
		parse_env(context, field, &field_where, out);
	}
	if ((field = map_lookup(&fields, "deviceNodes"))) {
		field_where = where_field(where, "deviceNodes", buffer, sizeof(buffer));
		out->device_nodes = parse_list(context, field, &field_where,
					       "a list of device nodes", sizeof(*out->device_nodes),
					       parse_device_node, &out->device_node_count);
	}
	if ((field = map_lookup(&fields, "mounts"))) {
		field_where = where_field(where, "mounts", buffer, sizeof(buffer));
		out->mounts = parse_list(context, field, &field_where, "a list of mounts",
					 sizeof(*out->mounts), parse_mount, &out->mount_count);
	}
	if ((field = map_lookup(&fields, "hooks"))) {
		field_where = where_field(where, "hooks", buffer, sizeof(buffer));
		out->hook_count = count_list(context, field, &field_where, "a list of hooks");
	}
	if ((field = map_lookup(&fields, "additionalGids")) ||
	    (field = map_lookup(&fields, "additionalGIDs"))) {
		field_where = where_field(where, "additionalGids", buffer, sizeof(buffer));
		out->additional_gid_count = count_nonzero_gids(context, field, &field_where);
	}
	if ((field = map_lookup(&fields, "intelRdt"))) {
		field_where = where_field(where, "intelRdt", buffer, sizeof(buffer));
		out->has_intel_rdt = expect_map(context, field, &field_where, "a map");
	}
	map_entries_free(&fields);
}

static void parse_device(struct load_context *context, const yaml_node_t *node,
			 const struct where *where, struct cdi_device *out)
{
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[192];
	struct where field_where;

	out->location = node_location(node);
	if (!expect_map(context, node, where, "a map with \"name\""))
		return;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, device_keys);
	if ((field = map_lookup(&fields, "name"))) {
		char problem_buffer[192];
		const char *name, *problem;

		field_where = where_field(where, "name", buffer, sizeof(buffer));
		name = expect_string(context, field, &field_where);
		problem =
		    name ? cdi_device_name_problem(name, problem_buffer, sizeof(problem_buffer))
			 : NULL;
		if (problem)
			report(context, field, &field_where, "invalid device name: %s", problem);
		else if (name)
			out->name = xstrdup(name);
	} else if (!map_has_key_or_typo(&fields, device_keys, "name")) {
		report(context, node, where, "missing \"name\"");
	}
	if ((field = map_lookup(&fields, "annotations"))) {
		field_where = where_field(where, "annotations", buffer, sizeof(buffer));
		expect_map(context, field, &field_where, "a map of strings");
	}
	if ((field = map_lookup(&fields, "containerEdits"))) {
		field_where = where_field(where, "containerEdits", buffer, sizeof(buffer));
		parse_edits(context, field, &field_where, &out->edits);
	}
	map_entries_free(&fields);
}

static void parse_devices(struct load_context *context, const yaml_node_t *node,
			  struct cdi_spec *spec)
{
	struct where where = {.owner = "", .field = "devices"};
	size_t count;

	if (!expect_list(context, node, &where, "a list of devices"))
		return;
	count = list_length(node);
	if (count == 0) {
		report(context, node, &where, "must define at least one device");
		return;
	}
	spec->devices = xcalloc(count, sizeof(*spec->devices));
	for (size_t i = 0; i < count; i++) {
		char buffer[64];
		struct where item_where;
		const yaml_node_t *item =
		    list_item(context, node, i, &where, buffer, sizeof(buffer), &item_where);
		struct cdi_device *device = &spec->devices[spec->device_count];

		if (!item)
			continue;
		parse_device(context, item, &item_where, device);
		spec->device_count++;
		for (size_t j = 0; device->name && j + 1 < spec->device_count; j++) {
			if (spec->devices[j].name &&
			    strcmp(spec->devices[j].name, device->name) == 0) {
				report(context, item, &item_where,
				       "duplicate device \"%s\" (first defined at line %u)",
				       device->name, spec->devices[j].location.line);
				break;
			}
		}
	}
}

static void parse_version(struct load_context *context, const yaml_node_t *node,
			  struct cdi_spec *spec)
{
	struct where where = {.owner = "", .field = "cdiVersion"};
	const char *version = expect_string(context, node, &where);

	if (!version)
		return;
	for (size_t i = 0; i < sizeof(supported_versions) / sizeof(*supported_versions); i++) {
		if (strcmp(version, supported_versions[i]) == 0) {
			spec->version = xstrdup(version);
			return;
		}
	}
	report(context, node, &where,
	       "unsupported CDI version %s (corral reads " CDI_VERSION_OLDEST
	       " to " CDI_VERSION_NEWEST ")",
	       quote(version, node->data.scalar.length).text);
}

static void parse_kind(struct load_context *context, const yaml_node_t *node, struct cdi_spec *spec)
{
	struct where where = {.owner = "", .field = "kind"};
	const char *kind = expect_string(context, node, &where);
	char buffer[192];
	const char *problem = kind ? cdi_kind_problem(kind, buffer, sizeof(buffer)) : NULL;

	if (problem)
		report(context, node, &where, "invalid kind %s: %s",
		       quote(kind, node->data.scalar.length).text, problem);
	else if (kind)
		spec->kind = xstrdup(kind);
}

static void parse_spec(struct load_context *context, const yaml_node_t *root, struct cdi_spec *spec)
{
	struct where top = {.owner = "", .field = ""};
	struct map_entries fields;
	const yaml_node_t *field;

	if (!expect_map(context, root, &top, "a map with \"cdiVersion\", \"kind\" and \"devices\""))
		return;
	map_collect(context, root, &top, "key", &fields);
	map_check_keys(context, &fields, &top, spec_keys);
	/* The version first: a spec of another version may well fail the
	 * rest, and then the version is the message that helps. */
	if ((field = map_lookup(&fields, "cdiVersion")))
		parse_version(context, field, spec);
	else if (!map_has_key_or_typo(&fields, spec_keys, "cdiVersion"))
		report(context, root, &top, "missing \"cdiVersion\"");
	if ((field = map_lookup(&fields, "kind")))
		parse_kind(context, field, spec);
	else if (!map_has_key_or_typo(&fields, spec_keys, "kind"))
		report(context, root, &top, "missing \"kind\" (VENDOR/CLASS)");
	if ((field = map_lookup(&fields, "annotations")))
		expect_map(context, field, &(struct where){"", "annotations"}, "a map of strings");
	if ((field = map_lookup(&fields, "devices")))
		parse_devices(context, field, spec);
	else if (!map_has_key_or_typo(&fields, spec_keys, "devices"))
		report(context, root, &top, "missing \"devices\"");
	if ((field = map_lookup(&fields, "containerEdits")))
		parse_edits(context, field, &(struct where){"", "containerEdits"}, &spec->edits);
	map_entries_free(&fields);
}

static void report_syntax_error(const yaml_parser_t *parser, struct config_diagnostics *diagnostics)
{
	struct source_location location = {
	    .line = (unsigned)parser->problem_mark.line + 1,
	    .column = (unsigned)parser->problem_mark.column + 1,
	};

	if (parser->error == YAML_READER_ERROR)
		location = (struct source_location){0};
	diagnostics_add(diagnostics, location, "syntax error: %s%s%s",
			parser->problem ? parser->problem : "unknown error",
			parser->context ? " " : "", parser->context ? parser->context : "");
}

static void format_error(const char *path, const struct config_diagnostics *diagnostics,
			 char *error, size_t error_size)
{
	const struct config_diagnostic *first = &diagnostics->items[0];
	char more[48] = "";

	if (diagnostics->count > 1)
		snprintf(more, sizeof(more), " (and %zu more problem%s)", diagnostics->count - 1,
			 diagnostics->count > 2 ? "s" : "");
	if (first->location.line)
		snprintf(error, error_size, "%s:%u:%u: %s%s", path, first->location.line,
			 first->location.column, first->message, more);
	else
		snprintf(error, error_size, "%s: %s%s", path, first->message, more);
}

int cdi_spec_parse(const char *path, const char *buffer, size_t size, struct cdi_spec *out,
		   char *error, size_t error_size)
{
	struct config_diagnostics diagnostics = {0};
	struct load_context context = {.diagnostics = &diagnostics};
	yaml_parser_t parser;
	yaml_document_t document;
	const yaml_node_t *root;

	*out = (struct cdi_spec){.path = xstrdup(path)};
	if (!yaml_parser_initialize(&parser)) {
		fputs("corral: out of memory\n", stderr);
		abort();
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buffer, size);
	/* As for a config: a spec nested too deep would exhaust the stack,
	 * and aliases can make a small text expand without bound. */
	if (!yaml_within_limits(buffer, size, 0, &diagnostics)) {
		/* said at the place that went past the bound */
	} else if (!yaml_parser_load(&parser, &document)) {
		report_syntax_error(&parser, &diagnostics);
	} else {
		context.document = &document;
		root = yaml_document_get_root_node(&document);
		if (!root || node_is_null(root))
			diagnostics_add(&diagnostics, (struct source_location){0},
					"the file is empty; expected a CDI spec");
		else
			parse_spec(&context, root, out);
		yaml_document_delete(&document);
	}
	yaml_parser_delete(&parser);

	if (diagnostics.count) {
		diagnostics_sort(&diagnostics);
		format_error(path, &diagnostics, error, error_size);
		config_diagnostics_free(&diagnostics);
		cdi_spec_free(out);
		return -EINVAL;
	}
	return 0;
}

static void cdi_edits_free(struct cdi_edits *edits)
{
	string_vector_free(edits->env);
	for (size_t i = 0; i < edits->device_node_count; i++) {
		free(edits->device_nodes[i].path);
		free(edits->device_nodes[i].host_path);
	}
	free(edits->device_nodes);
	for (size_t i = 0; i < edits->mount_count; i++) {
		struct mount_config *mount = &edits->mounts[i].mount;

		free(mount->type);
		free(mount->source);
		free(mount->target);
		string_vector_free(mount->options);
	}
	free(edits->mounts);
	*edits = (struct cdi_edits){0};
}

void cdi_spec_free(struct cdi_spec *spec)
{
	free(spec->path);
	free(spec->version);
	free(spec->kind);
	for (size_t i = 0; i < spec->device_count; i++) {
		free(spec->devices[i].name);
		cdi_edits_free(&spec->devices[i].edits);
	}
	free(spec->devices);
	cdi_edits_free(&spec->edits);
	*spec = (struct cdi_spec){0};
}
