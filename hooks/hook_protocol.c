#include "hooks/hook_protocol.h"
#include "base/blank.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "base/json_text.h"
#include "base/paths.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "hooks/start_additions.h"

/* ---- the request ---- */

static json_t *string_list(char *const *vector)
{
	json_t *list = json_array();
	for (size_t i = 0; vector && vector[i]; i++)
		json_array_append_new(list, json_string(vector[i]));
	return list;
}

static json_t *environment_map(char *const *env)
{
	json_t *map = json_object();
	for (size_t i = 0; env && env[i]; i++) {
		const char *equals = strchr(env[i], '=');
		if (!equals)
			continue;
		char *name = xstrndup(env[i], (size_t)(equals - env[i]));
		json_t *value = json_string(equals + 1);
		/* jansson refuses invalid UTF-8; such a variable is left out
		 * rather than the whole request failing. */
		if (value)
			json_object_set_new(map, name, value);
		free(name);
	}
	return map;
}

json_t *namespace_list_json(unsigned namespaces)
{
	static const struct {
		unsigned flag;
		const char *name;
	} names[] = {{ISOLATION_NS_PID, "pid"},  {ISOLATION_NS_MOUNT, "mount"},
		     {ISOLATION_NS_UTS, "uts"},  {ISOLATION_NS_IPC, "ipc"},
		     {ISOLATION_NS_NET, "net"},  {ISOLATION_NS_CGROUP, "cgroup"},
		     {ISOLATION_NS_USER, "user"}};
	json_t *list = json_array();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (namespaces & names[i].flag)
			json_array_append_new(list, json_string(names[i].name));
	return list;
}

/* The limits as the config writes them, the ones that are set. */
json_t *resources_json(const struct resources_config *resources)
{
	json_t *object = json_object();
	if (resources->memory)
		json_object_set_new(object, "memory", json_integer((json_int_t)resources->memory));
	if (resources->memory_high)
		json_object_set_new(object, "memory_high",
				    json_integer((json_int_t)resources->memory_high));
	if (resources->has_memory_swap)
		json_object_set_new(object, "memory_swap",
				    json_integer((json_int_t)resources->memory_swap));
	if (resources->cpu_millicores)
		json_object_set_new(object, "cpu", json_real(resources->cpu_millicores / 1000.0));
	if (resources->cpu_weight)
		json_object_set_new(object, "cpu_weight", json_integer(resources->cpu_weight));
	if (resources->pids)
		json_object_set_new(object, "pids", json_integer((json_int_t)resources->pids));
	if (resources->cpuset)
		json_object_set_new(object, "cpuset", json_string(resources->cpuset));
	if (resources->io_weight)
		json_object_set_new(object, "io_weight", json_integer(resources->io_weight));
	return object;
}

/* update: what changed, and the new values that a hook may act on. */
static void add_update(json_t *object, const struct hook_request *request)
{
	json_t *changed = json_array();
	const char *cursor = request->changed ? request->changed : "";
	while (*cursor) {
		size_t length = strcspn(cursor, ",");
		json_array_append_new(changed, json_stringn(cursor, length));
		cursor += length + (cursor[length] == ',');
	}
	json_object_set_new(object, "changed", changed);
	json_object_set_new(object, "resources", resources_json(&request->task->resources));
}

char *hook_request_build(const struct hook_request *request, size_t *length)
{
	const struct task_config *task = request->task;
	const struct isolation_config *isolation = &task->isolation;
	json_t *directories = json_object();
	json_object_set_new(directories, "root",
			    json_string(isolation->rootfs ? isolation->rootfs : "/"));
	json_object_set_new(directories, "cwd", task->cwd ? json_string(task->cwd) : json_null());

	json_t *object = json_object();
	json_object_set_new(object, "version", json_integer(HOOK_PROTOCOL_VERSION));
	json_object_set_new(object, "stage", json_string(hook_stage_name(request->stage)));
	json_object_set_new(object, "hook", json_string(request->hook));
	json_object_set_new(object, "group", json_string(request->group));
	json_object_set_new(object, "task", json_string(task->name));
	json_object_set_new(object, "run", json_integer(request->run));
	json_object_set_new(object, "command", string_list(task->argv));
	json_object_set_new(object, "env", environment_map(request->env));
	json_object_set_new(object, "directories", directories);
	json_object_set_new(object, "namespaces",
			    namespace_list_json(isolation->enabled ? isolation->namespaces : 0));
	if (request->pid > 0)
		json_object_set_new(object, "pid", json_integer(request->pid));
	if (request->has_exit) {
		json_t *exit = json_object();
		if (request->exit_code >= 0)
			json_object_set_new(exit, "code", json_integer(request->exit_code));
		else
			json_object_set_new(exit, "signal",
					    json_string(signal_name(request->exit_signal)));
		json_object_set_new(object, "exit", exit);
	}
	if (request->stage == HOOK_STAGE_UPDATE)
		add_update(object, request);
	json_object_set_new(object, "state",
			    request->state ? json_deep_copy(request->state) : json_null());

	char *text = json_dumps(object, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(object);
	if (!text)
		abort(); /* only out of memory: every value above is valid */
	size_t used = strlen(text);
	text = xreallocarray(text, used + 2, 1);
	text[used] = '\n';
	text[used + 1] = '\0';
	*length = used + 1;
	return text;
}

/* ---- the response ---- */

/* Where a value is: "mounts[1].target". */
struct path {
	char text[96];
};

static struct path path_field(const struct path *parent, const char *name)
{
	struct path path;
	const char *prefix = parent ? parent->text : "";
	/* A cut path still says where. */
	if (snprintf(path.text, sizeof(path.text), "%s%s%s", prefix, *prefix ? "." : "", name) < 0)
		path.text[0] = '\0';
	return path;
}

static struct path path_index(const struct path *parent, size_t index)
{
	struct path path;
	if (snprintf(path.text, sizeof(path.text), "%s[%zu]", parent->text, index) < 0)
		path.text[0] = '\0';
	return path;
}

struct reader {
	char *error;
	size_t error_size;
	bool failed;
	bool check_host;
};

static void fail(struct reader *reader, const struct path *path, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void fail(struct reader *reader, const struct path *path, const char *format, ...)
{
	if (reader->failed)
		return; /* the first mistake is the one told */
	reader->failed = true;
	int used = snprintf(reader->error, reader->error_size, "%s", path ? path->text : "");
	if (used < 0 || (size_t)used >= reader->error_size)
		return;
	va_list args;
	va_start(args, format);
	vsnprintf(reader->error + used, reader->error_size - (size_t)used, format, args);
	va_end(args);
}

static bool expect_type(struct reader *reader, const json_t *value, const struct path *path,
			json_type type, const char *expected)
{
	bool matches =
	    json_typeof(value) == type || (type == JSON_TRUE && json_typeof(value) == JSON_FALSE);
	if (!matches)
		fail(reader, path, ": must be %s, not %s", expected, json_kind(value));
	return matches;
}

static const char *expect_text(struct reader *reader, const json_t *value, const struct path *path)
{
	/* No NUL inside: json_loadb refuses \u0000 without JSON_ALLOW_NUL. */
	if (!expect_type(reader, value, path, JSON_STRING, "a string"))
		return NULL;
	return json_string_value(value);
}

/* Reports the first key of `object` that is not one of `known`. */
static bool check_keys(struct reader *reader, const json_t *object, const struct path *path,
		       const char *const known[])
{
	const char *key;
	json_t *value;
	json_object_foreach((json_t *)object, key, value)
	{
		bool found = false;
		for (size_t i = 0; known[i] && !found; i++)
			found = strcmp(key, known[i]) == 0;
		if (!found) {
			struct path field = path_field(path, key);
			fail(reader, NULL, "%s: unknown field", field.text);
			return false;
		}
	}
	return true;
}

/* Absolute, and no ".." component: resolved inside the task's root, it
 * cannot climb out of it. */
static bool is_path_inside_task(const char *path)
{
	return path[0] == '/' && !path_has_parent_component(path);
}

static char *read_target(struct reader *reader, const json_t *value, const struct path *path)
{
	const char *text = expect_text(reader, value, path);
	if (!text)
		return NULL;
	if (!is_path_inside_task(text)) {
		fail(reader, path, " \"%s\": must be an absolute path inside the task", text);
		return NULL;
	}
	return xstrdup(text);
}

static char *read_source(struct reader *reader, const json_t *value, const struct path *path)
{
	const char *text = expect_text(reader, value, path);
	if (!text)
		return NULL;
	if (text[0] != '/') {
		fail(reader, path, " \"%s\": must be an absolute path", text);
		return NULL;
	}
	return xstrdup(text);
}

/* The checks that need the host: a bind mount's source exists, a device's
 * source is a device node. */
static void check_exists(struct reader *reader, const char *path, const struct path *at,
			 bool device)
{
	struct stat status;
	if (!reader->check_host || !path)
		return;
	if (stat(path, &status) < 0)
		fail(reader, at, " \"%s\": %s", path, strerror(errno));
	else if (device && !S_ISCHR(status.st_mode) && !S_ISBLK(status.st_mode))
		fail(reader, at, " \"%s\": not a device node", path);
}

static const char *const env_names_of_corral[] = {"NOTIFY_SOCKET", NULL};

static void read_env(struct reader *reader, const json_t *value, const struct path *path,
		     struct start_additions *additions)
{
	if (!expect_type(reader, value, path, JSON_OBJECT, "an object of names to strings"))
		return;
	const char *name;
	json_t *item;
	json_object_foreach((json_t *)value, name, item)
	{
		struct path field = path_field(path, name);
		bool valid = name[0] && !(name[0] >= '0' && name[0] <= '9');
		for (const char *c = name; *c && valid; c++)
			valid = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
				(*c >= '0' && *c <= '9') || *c == '_';
		if (!valid) {
			fail(reader, NULL,
			     "%s: invalid variable name: use letters, digits and '_', not "
			     "starting with a digit",
			     field.text);
			return;
		}
		bool reserved = strncmp(name, "CORRAL_", 7) == 0;
		for (size_t i = 0; env_names_of_corral[i]; i++)
			reserved = reserved || strcmp(name, env_names_of_corral[i]) == 0;
		if (reserved) {
			fail(reader, &field, ": is set by corral");
			return;
		}
		const char *text = expect_text(reader, item, &field);
		if (!text)
			return;
		char *entry = xasprintf("%s=%s", name, text);
		start_additions_append_env(additions, entry);
		free(entry);
	}
}

static const char *const propagation_names[] = {"private", "rprivate", "slave", "rslave",
						"shared",  "rshared",  NULL};
static const unsigned long propagation_flags[] = {
    MS_PRIVATE, MS_PRIVATE | MS_REC, MS_SLAVE, MS_SLAVE | MS_REC, MS_SHARED, MS_SHARED | MS_REC,
};

static char **read_options(struct reader *reader, const json_t *value, const struct path *path)
{
	if (!expect_type(reader, value, path, JSON_ARRAY, "an array of strings"))
		return NULL;
	char **options = xcalloc(json_array_size(value) + 1, sizeof(*options));
	for (size_t i = 0; i < json_array_size(value); i++) {
		struct path item = path_index(path, i);
		const char *text = expect_text(reader, json_array_get(value, i), &item);
		if (!text)
			break;
		options[i] = xstrdup(text);
	}
	return options;
}

static void read_mount(struct reader *reader, const json_t *value, const struct path *path,
		       struct start_additions *additions)
{
	static const char *const keys[] = {"source", "target",  "readonly", "propagation",
					   "type",   "options", NULL};
	if (!expect_type(reader, value, path, JSON_OBJECT, "an object") ||
	    !check_keys(reader, value, path, keys))
		return;
	struct mount_config mount = {0};
	json_t *field;
	struct path at;
	if ((field = json_object_get(value, "type"))) {
		at = path_field(path, "type");
		const char *type = expect_text(reader, field, &at);
		if (type && !*type)
			fail(reader, &at, ": must not be empty");
		else if (type)
			mount.type = xstrdup(type);
	}
	if ((field = json_object_get(value, "source"))) {
		at = path_field(path, "source");
		/* A bind mount's source is a host path; a filesystem's is
		 * whatever that filesystem takes ("tmpfs", a device). */
		if (mount.type) {
			const char *source = expect_text(reader, field, &at);
			mount.source = source ? xstrdup(source) : NULL;
		} else {
			mount.source = read_source(reader, field, &at);
			check_exists(reader, mount.source, &at, false);
		}
	} else if (!mount.type) {
		fail(reader, path, ": missing \"source\" (or a \"type\" such as tmpfs)");
	}
	if ((field = json_object_get(value, "target"))) {
		at = path_field(path, "target");
		mount.target = read_target(reader, field, &at);
	} else {
		fail(reader, path, ": missing \"target\"");
	}
	if ((field = json_object_get(value, "readonly"))) {
		at = path_field(path, "readonly");
		if (expect_type(reader, field, &at, JSON_TRUE, "a boolean"))
			mount.readonly = json_is_true(field);
	}
	if ((field = json_object_get(value, "propagation"))) {
		at = path_field(path, "propagation");
		const char *text = expect_text(reader, field, &at);
		size_t i = 0;
		while (text && propagation_names[i] && strcmp(text, propagation_names[i]) != 0)
			i++;
		if (text && !propagation_names[i])
			fail(reader, &at,
			     " \"%s\": must be private, rprivate, slave, rslave, shared or "
			     "rshared",
			     text);
		else if (text)
			mount.propagation = propagation_flags[i];
	}
	if ((field = json_object_get(value, "options"))) {
		at = path_field(path, "options");
		mount.options = read_options(reader, field, &at);
	}
	if (!reader->failed)
		start_additions_append_mount(additions, &mount);
	free(mount.type);
	free(mount.source);
	free(mount.target);
	string_vector_free(mount.options);
}

static bool read_permissions(struct reader *reader, const json_t *value, const struct path *path,
			     unsigned *out)
{
	const char *text = expect_text(reader, value, path);
	if (!text)
		return false;
	unsigned permissions = 0;
	for (const char *c = text; *c; c++) {
		unsigned bit = *c == 'r'   ? DEVICE_READ
			       : *c == 'w' ? DEVICE_WRITE
			       : *c == 'm' ? DEVICE_MKNOD
					   : 0;
		if (!bit || (permissions & bit)) {
			fail(reader, path, " \"%s\": must be letters from r, w and m, each once",
			     text);
			return false;
		}
		permissions |= bit;
	}
	if (!permissions) {
		fail(reader, path, ": must not be empty (letters from r, w and m)");
		return false;
	}
	*out = permissions;
	return true;
}

static void read_device(struct reader *reader, const json_t *value, const struct path *path,
			struct start_additions *additions)
{
	static const char *const keys[] = {"source", "target", "permissions", NULL};
	if (!expect_type(reader, value, path, JSON_OBJECT, "an object") ||
	    !check_keys(reader, value, path, keys))
		return;
	/* As isolation.devices: read and write unless told otherwise. */
	struct device_config device = {.permissions = DEVICE_READ | DEVICE_WRITE};
	json_t *field;
	struct path at;
	if ((field = json_object_get(value, "source"))) {
		at = path_field(path, "source");
		device.source = read_source(reader, field, &at);
		check_exists(reader, device.source, &at, true);
	} else {
		fail(reader, path, ": missing \"source\"");
	}
	if ((field = json_object_get(value, "target"))) {
		at = path_field(path, "target");
		device.target = read_target(reader, field, &at);
	}
	if ((field = json_object_get(value, "permissions"))) {
		at = path_field(path, "permissions");
		read_permissions(reader, field, &at, &device.permissions);
	}
	if (!reader->failed)
		start_additions_append_device(additions, &device);
	free(device.source);
	free(device.target);
}

static void read_list(struct reader *reader, const json_t *value, const char *name,
		      struct start_additions *additions,
		      void (*read_item)(struct reader *, const json_t *, const struct path *,
					struct start_additions *))
{
	struct path path = path_field(NULL, name);
	if (!expect_type(reader, value, &path, JSON_ARRAY, "an array"))
		return;
	for (size_t i = 0; i < json_array_size(value) && !reader->failed; i++) {
		struct path item = path_index(&path, i);
		read_item(reader, json_array_get(value, i), &item, additions);
	}
}

static void read_response(struct reader *reader, const json_t *root, enum hook_stage stage,
			  struct hook_response *out)
{
	static const char *const keys[] = {"version", "env",  "mounts", "devices",
					   "state",   "done", NULL};
	static const char *const prestart_only[] = {"env", "mounts", "devices", "done", NULL};
	if (!json_is_object(root)) {
		fail(reader, NULL, "the response must be a JSON object, not %s", json_kind(root));
		return;
	}
	if (!check_keys(reader, root, NULL, keys))
		return;
	json_t *field;
	if ((field = json_object_get(root, "version"))) {
		struct path path = path_field(NULL, "version");
		if (!json_is_integer(field) || json_integer_value(field) != HOOK_PROTOCOL_VERSION) {
			char *shown = json_dumps(field, JSON_ENCODE_ANY | JSON_COMPACT);
			fail(reader, &path, ": %s is not a version corral speaks (it speaks %d)",
			     shown ? shown : "?", HOOK_PROTOCOL_VERSION);
			free(shown);
			return;
		}
	}
	if (stage != HOOK_STAGE_PRESTART) {
		for (size_t i = 0; prestart_only[i]; i++) {
			if (json_object_get(root, prestart_only[i])) {
				struct path path = path_field(NULL, prestart_only[i]);
				fail(reader, &path,
				     ": only a prestart hook may return it, not a %s "
				     "hook",
				     hook_stage_name(stage));
				return;
			}
		}
	}
	if ((field = json_object_get(root, "env")))
		read_env(reader, field, &(struct path){"env"}, &out->additions);
	if ((field = json_object_get(root, "mounts")) && !reader->failed)
		read_list(reader, field, "mounts", &out->additions, read_mount);
	if ((field = json_object_get(root, "devices")) && !reader->failed)
		read_list(reader, field, "devices", &out->additions, read_device);
	if ((field = json_object_get(root, "state")) && !reader->failed) {
		struct path path = path_field(NULL, "state");
		if (json_is_null(field) ||
		    expect_type(reader, field, &path, JSON_OBJECT, "an object or null")) {
			out->has_state = true;
			out->state = json_is_null(field) ? NULL : json_incref(field);
		}
	}
	if ((field = json_object_get(root, "done")) && !reader->failed) {
		struct path path = path_field(NULL, "done");
		if (expect_type(reader, field, &path, JSON_TRUE, "a boolean"))
			out->done = json_is_true(field);
	}
}

int hook_response_parse(const char *text, size_t length, enum hook_stage stage, bool check_host,
			struct hook_response *out, char *error, size_t error_size)
{
	memset(out, 0, sizeof(*out));
	if (text_is_blank(text, length))
		return 0;
	json_error_t json_error;
	json_t *root = json_loadb(text, length, HOOK_RESPONSE_JSON_FLAGS, &json_error);
	if (!root) {
		snprintf(error, error_size, "invalid JSON on stdout: %s (line %d, column %d)",
			 json_error.text, json_error.line, json_error.column);
		return -1;
	}
	int result = hook_response_from_json(root, stage, check_host, out, error, error_size);
	json_decref(root);
	return result;
}

int hook_response_from_json(const json_t *root, enum hook_stage stage, bool check_host,
			    struct hook_response *out, char *error, size_t error_size)
{
	struct reader reader = {.error = error, .error_size = error_size, .check_host = check_host};

	memset(out, 0, sizeof(*out));
	read_response(&reader, root, stage, out);
	if (reader.failed) {
		hook_response_free(out);
		return -1;
	}
	return 0;
}

void hook_response_free(struct hook_response *response)
{
	start_additions_free(&response->additions);
	json_decref(response->state);
	response->state = NULL;
	response->has_state = false;
}
