/* Reading the spec directories into a registry, and resolving device names
 * against it, with CDI's priority rules: a later directory overrides an
 * earlier one; two specs of the same directory that define the same device
 * make that device unusable (it is reported when asked for). */
#include "hooks/cdi.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/file_kind.h"
#include "base/regular_file.h"
#include "base/xmalloc.h"
#include "hooks/cdi_spec.h"
#include "hooks/start_additions.h"

const char *const cdi_default_spec_dirs[] = {"/etc/cdi", "/var/run/cdi", NULL};

/* Every spec of some directories, each with the priority of its directory
 * (its index in the list). */
struct cdi_registry {
	struct cdi_spec *specs;
	unsigned *priorities;
	size_t spec_count;
	char **dirs; /* the directories read, for messages */
};

/* Real specs are a few KiB; a huge file is a mistake, not a spec. */
#define CDI_SPEC_MAX_BYTES (4u << 20)

static bool is_spec_file_name(const char *name)
{
	static const char *const suffixes[] = {".yaml", ".yml", ".json"};
	size_t length = strlen(name);

	if (name[0] == '.')
		return false;
	for (size_t i = 0; i < 3; i++) {
		size_t suffix = strlen(suffixes[i]);

		if (length > suffix && strcmp(name + length - suffix, suffixes[i]) == 0)
			return true;
	}
	return false;
}

static void registry_add(struct cdi_registry *registry, const struct cdi_spec *spec,
			 unsigned priority)
{
	registry->specs =
	    xreallocarray(registry->specs, registry->spec_count + 1, sizeof(*registry->specs));
	registry->priorities = xreallocarray(registry->priorities, registry->spec_count + 1,
					     sizeof(*registry->priorities));
	registry->specs[registry->spec_count] = *spec;
	registry->priorities[registry->spec_count++] = priority;
}

static int load_file(struct cdi_registry *registry, const char *path, unsigned priority,
		     char *error, size_t error_size)
{
	char message[512], reason[REGULAR_FILE_REASON_SIZE];
	struct cdi_spec spec;
	char *data = NULL;
	size_t size = 0;
	int r = regular_file_read(path, CDI_SPEC_MAX_BYTES, &data, &size, reason);

	if (r == -EISDIR)
		return 0; /* a directory named x.json is not a spec */
	if (r < 0) {
		snprintf(error, error_size, "cdi: cannot read %s: %s", path, reason);
		return r;
	}
	r = cdi_spec_parse(path, data, size, &spec, message, sizeof(message));
	free(data);
	if (r < 0) {
		snprintf(error, error_size, "cdi: %s", message);
		return r;
	}
	registry_add(registry, &spec, priority);
	return 0;
}

static int spec_file_filter(const struct dirent *entry)
{
	return is_spec_file_name(entry->d_name);
}

static int load_directory(struct cdi_registry *registry, const char *dir, unsigned priority,
			  char *error, size_t error_size)
{
	struct dirent **entries = NULL;
	int count = scandir(dir, &entries, spec_file_filter, alphasort), r = 0;

	if (count < 0 && errno == ENOENT)
		return 0; /* /var/run/cdi is often not there at all */
	if (count < 0) {
		r = -errno;
		snprintf(error, error_size, "cdi: cannot read the spec directory %s: %s", dir,
			 strerror(-r));
		return r;
	}
	for (int i = 0; i < count; i++) {
		char *path = xasprintf("%s/%s", dir, entries[i]->d_name);

		if (r == 0)
			r = load_file(registry, path, priority, error, error_size);
		free(path);
		free(entries[i]);
	}
	free(entries);
	return r;
}

static void registry_free(struct cdi_registry *registry)
{
	for (size_t i = 0; i < registry->spec_count; i++)
		cdi_spec_free(&registry->specs[i]);
	free(registry->specs);
	free(registry->priorities);
	string_vector_free(registry->dirs);
	*registry = (struct cdi_registry){0};
}

/* Every spec file of `spec_dirs` (NULL: the defaults), each directory in
 * name order; a directory that does not exist is skipped. On failure a
 * negative errno with `error` written and `registry` empty. */
static int registry_load(struct cdi_registry *registry, const char *const *spec_dirs, char *error,
			 size_t error_size)
{
	*registry = (struct cdi_registry){0};
	if (!spec_dirs)
		spec_dirs = cdi_default_spec_dirs;
	registry->dirs = string_vector_copy((char *const *)spec_dirs);
	for (size_t i = 0; spec_dirs[i]; i++) {
		int r = load_directory(registry, spec_dirs[i], (unsigned)i, error, error_size);

		if (r < 0) {
			registry_free(registry);
			return r;
		}
	}
	return 0;
}

/* A device found in a spec. */
struct device_match {
	size_t spec;
	const struct cdi_device *device;
};

/* "(known: vendor.com/gpu=0, =1)", or where nothing of the kind was found. */
static void describe_known(const struct cdi_registry *registry, const char *kind,
			   size_t kind_length, char *buffer, size_t size)
{
	size_t used = 0;
	bool any = false;

	for (size_t i = 0; i < registry->spec_count; i++) {
		const struct cdi_spec *spec = &registry->specs[i];

		if (strlen(spec->kind) != kind_length || memcmp(spec->kind, kind, kind_length) != 0)
			continue;
		for (size_t j = 0; j < spec->device_count && used < size; j++) {
			used += (size_t)snprintf(buffer + used, size - used, "%s%s=%s",
						 any ? ", " : "(known: ", any ? "" : spec->kind,
						 spec->devices[j].name);
			any = true;
		}
	}
	if (any && used < size) {
		snprintf(buffer + used, size - used, ")");
		return;
	}
	if (any)
		return;
	used =
	    (size_t)snprintf(buffer, size, "(no spec of kind \"%.*s\" in ", (int)kind_length, kind);
	for (size_t i = 0; registry->dirs[i] && used < size; i++)
		used += (size_t)snprintf(buffer + used, size - used, "%s%s", i ? ", " : "",
					 registry->dirs[i]);
	if (used < size)
		snprintf(buffer + used, size - used, ")");
}

/* The device `qualified` names, by CDI's priority rules; -ENOENT or
 * -EEXIST with `error` written. */
static int find_device(const struct cdi_registry *registry, const char *qualified,
		       struct device_match *out, char *error, size_t error_size)
{
	const char *equals = strchr(qualified, '=');
	size_t kind_length = equals ? (size_t)(equals - qualified) : strlen(qualified);
	const char *name = equals ? equals + 1 : "";
	struct device_match best = {0}, rival = {0};
	bool found = false, conflict = false;

	for (size_t i = 0; i < registry->spec_count; i++) {
		const struct cdi_spec *spec = &registry->specs[i];

		if (strlen(spec->kind) != kind_length ||
		    memcmp(spec->kind, qualified, kind_length) != 0)
			continue;
		for (size_t j = 0; j < spec->device_count; j++) {
			if (strcmp(spec->devices[j].name, name) != 0)
				continue;
			if (!found || registry->priorities[i] > registry->priorities[best.spec]) {
				best = (struct device_match){i, &spec->devices[j]};
				conflict = false;
			} else if (registry->priorities[i] == registry->priorities[best.spec]) {
				rival = (struct device_match){i, &spec->devices[j]};
				conflict = true;
			}
			found = true;
		}
	}
	if (!found) {
		char known[384];

		describe_known(registry, qualified, kind_length, known, sizeof(known));
		snprintf(error, error_size, "cdi: unknown device \"%s\" %s", qualified, known);
		return -ENOENT;
	}
	if (conflict) {
		snprintf(error, error_size,
			 "cdi: device \"%s\" is defined twice with the same priority, in %s:%u "
			 "and %s:%u: remove one, or move one to a later spec directory",
			 qualified, registry->specs[best.spec].path, best.device->location.line,
			 registry->specs[rival.spec].path, rival.device->location.line);
		return -EEXIST;
	}
	*out = best;
	return 0;
}

/* The host's node must be there and be what the spec says it is. */
static int check_device_node(const char *qualified, const struct cdi_spec *spec,
			     const struct cdi_device_node *node, char *error, size_t error_size)
{
	const char *source = node->host_path ? node->host_path : node->path;
	struct stat status;
	char where[320];
	char type;

	snprintf(where, sizeof(where), "cdi: %s: device node %s (%s:%u:%u)", qualified, source,
		 spec->path, node->location.line, node->location.column);
	if (stat(source, &status) < 0) {
		int saved = errno;

		snprintf(error, error_size, "%s: %s", where, strerror(saved));
		return -saved;
	}
	if (!S_ISCHR(status.st_mode) && !S_ISBLK(status.st_mode)) {
		snprintf(error, error_size, "%s: is %s, not a device node", where,
			 file_kind(status.st_mode));
		return -ENODEV;
	}
	type = S_ISCHR(status.st_mode) ? 'c' : 'b';
	/* 'u' is an unbuffered character device: the same node as 'c'. */
	if (node->type && (node->type == 'u' ? 'c' : node->type) != type) {
		snprintf(error, error_size,
			 "%s: the spec says type \"%c\", the host's node is \"%c\"", where,
			 node->type, type);
		return -ENODEV;
	}
	if ((node->has_major && (unsigned)node->major != major(status.st_rdev)) ||
	    (node->has_minor && (unsigned)node->minor != minor(status.st_rdev))) {
		snprintf(
		    error, error_size, "%s: the spec says %lld:%lld, the host's node is %u:%u",
		    where,
		    node->has_major ? (long long)node->major : (long long)major(status.st_rdev),
		    node->has_minor ? (long long)node->minor : (long long)minor(status.st_rdev),
		    major(status.st_rdev), minor(status.st_rdev));
		return -ENODEV;
	}
	return 0;
}

static int check_mount(const char *qualified, const struct cdi_spec *spec,
		       const struct cdi_mount *mount, char *error, size_t error_size)
{
	struct stat status;

	if (mount->mount.type || stat(mount->mount.source, &status) == 0)
		return 0;
	snprintf(error, error_size, "cdi: %s: mount source %s (%s:%u:%u): %s", qualified,
		 mount->mount.source, spec->path, mount->location.line, mount->location.column,
		 strerror(errno));
	return -ENOENT;
}

static int check_edits(const char *qualified, const struct cdi_spec *spec,
		       const struct cdi_edits *edits, char *error, size_t error_size)
{
	for (size_t i = 0; i < edits->device_node_count; i++) {
		int r =
		    check_device_node(qualified, spec, &edits->device_nodes[i], error, error_size);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < edits->mount_count; i++) {
		int r = check_mount(qualified, spec, &edits->mounts[i], error, error_size);
		if (r < 0)
			return r;
	}
	return 0;
}

static void apply_edits(const struct cdi_edits *edits, struct start_additions *out)
{
	for (size_t i = 0; edits->env && edits->env[i]; i++)
		start_additions_append_env(out, edits->env[i]);
	for (size_t i = 0; i < edits->device_node_count; i++) {
		const struct cdi_device_node *node = &edits->device_nodes[i];
		struct device_config device = {
		    .source = node->host_path ? node->host_path : node->path,
		    .target = node->path,
		    .permissions = node->permissions,
		};

		start_additions_append_device(out, &device);
	}
	for (size_t i = 0; i < edits->mount_count; i++)
		start_additions_append_mount(out, &edits->mounts[i].mount);
}

/* "vendor.com/gpu=0: 2 OCI hooks, additionalGids; " */
static void note_unsupported(const char *what, const struct cdi_edits *edits, char *buffer,
			     size_t size)
{
	size_t used = strlen(buffer);
	bool any = false;

	if (!edits->hook_count && !edits->additional_gid_count && !edits->has_intel_rdt)
		return;
	used += (size_t)snprintf(buffer + used, size > used ? size - used : 0,
				 "%s%s:", used ? "; " : "", what);
	if (edits->hook_count && used < size) {
		used += (size_t)snprintf(buffer + used, size - used, " %zu OCI hook%s",
					 edits->hook_count, edits->hook_count > 1 ? "s" : "");
		any = true;
	}
	if (edits->additional_gid_count && used < size) {
		used += (size_t)snprintf(buffer + used, size - used, "%s additionalGids",
					 any ? "," : "");
		any = true;
	}
	if (edits->has_intel_rdt && used < size)
		snprintf(buffer + used, size - used, "%s intelRdt", any ? "," : "");
}

/* Appends to `out` what the devices `names` need: each device's edits,
 * then once the edits of each spec that one of them came from. Device
 * nodes and bind-mount sources must exist on the host now. On failure
 * `error` is written and nothing is added to `out`. */
static int registry_resolve(const struct cdi_registry *registry, const char *const *names,
			    struct start_additions *out, char *warning, size_t warning_size,
			    char *error, size_t error_size)
{
	struct start_additions result = {0};
	size_t count = 0;
	struct device_match *matches;
	bool *spec_used = xcalloc(registry->spec_count + 1, sizeof(*spec_used));
	int r = 0;

	warning[0] = '\0';
	while (names && names[count])
		count++;
	matches = xcalloc(count + 1, sizeof(*matches));
	/* Everything is found and checked first, so that a failure adds
	 * nothing to `out`. */
	for (size_t i = 0; i < count && r == 0; i++) {
		const struct cdi_spec *spec;

		r = find_device(registry, names[i], &matches[i], error, error_size);
		if (r < 0)
			break;
		spec = &registry->specs[matches[i].spec];
		r = check_edits(names[i], spec, &matches[i].device->edits, error, error_size);
		if (r == 0 && !spec_used[matches[i].spec])
			r = check_edits(names[i], spec, &spec->edits, error, error_size);
		spec_used[matches[i].spec] = true;
	}
	if (r < 0)
		goto done;

	/* The device's own edits, then (as CDI's runtimes do) those of each
	 * spec the devices came from, once. */
	for (size_t i = 0; i < count; i++) {
		apply_edits(&matches[i].device->edits, &result);
		note_unsupported(names[i], &matches[i].device->edits, warning, warning_size);
	}
	for (size_t i = 0; i < count; i++) {
		const struct cdi_spec *spec = &registry->specs[matches[i].spec];

		if (!spec_used[matches[i].spec])
			continue;
		spec_used[matches[i].spec] = false;
		apply_edits(&spec->edits, &result);
		note_unsupported(spec->path, &spec->edits, warning, warning_size);
	}
	if (warning[0]) {
		char *text = xstrdup(warning);

		snprintf(warning, warning_size, "cdi: left out what corral cannot apply: %s", text);
		free(text);
	}
	start_additions_merge(out, &result);
done:
	start_additions_free(&result);
	free(matches);
	free(spec_used);
	return r;
}

int cdi_additions(const char *const *names, const char *const *spec_dirs,
		  struct start_additions *out, char *warning, size_t warning_size, char *error,
		  size_t error_size)
{
	struct cdi_registry registry;
	int r;

	warning[0] = '\0';
	r = registry_load(&registry, spec_dirs, error, error_size);
	if (r < 0)
		return r;
	r = registry_resolve(&registry, names, out, warning, warning_size, error, error_size);
	registry_free(&registry);
	return r;
}
