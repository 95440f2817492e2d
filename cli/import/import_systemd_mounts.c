/* A unit's file system sandbox (systemd.exec(5), "Sandboxing"): what is
 * read-only, writable, hidden or bound, as mounts of the task's own mount
 * namespace, and the devices DeviceAllow= adds. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "cli/import/import_systemd_sandbox.h"

static bool path_exists(const char *path, bool *directory)
{
	struct stat status;
	if (stat(path, &status) != 0)
		return false;
	if (directory)
		*directory = S_ISDIR(status.st_mode);
	return true;
}

static struct ytree_node *mount_list(struct sandbox *box)
{
	box->namespaces |= 1u << NS_MOUNT;
	if (!box->mounts) {
		box->mounts = ytree_list();
		box->mounts->flow = false;
	}
	return box->mounts;
}

void sandbox_add_bind(struct sandbox *box, const char *source, const char *target, bool readonly)
{
	struct ytree_node *mount = ytree_map();
	mount->flow = true;
	ytree_set(mount, "source", ytree_string(source));
	ytree_set(mount, "target", ytree_string(target));
	ytree_set(mount, "readonly", ytree_plain(readonly ? "true" : "false"));
	ytree_append(mount_list(box), mount);
}

void sandbox_add_tmpfs(struct sandbox *box, const char *target, const char *mode, bool readonly)
{
	struct ytree_node *mount = ytree_map();
	mount->flow = true;
	ytree_set(mount, "type", ytree_plain("tmpfs"));
	ytree_set(mount, "target", ytree_string(target));
	if (readonly)
		ytree_set(mount, "readonly", ytree_plain("true"));
	struct ytree_node *options = ytree_set(mount, "options", ytree_list());
	char *option = xasprintf("mode=%s", mode);
	ytree_append(options, ytree_string(option));
	free(option);
	ytree_append(mount_list(box), mount);
}

/* ReadWritePaths=, ReadOnlyPaths=, InaccessiblePaths= (and the older
 * *Directories= names): paths with - (ignore when missing) and +
 * (inside RootDirectory=) prefixes. Binds need their source when corral
 * loads the config, so a path missing here is skipped (-) or reported. */
enum path_access { PATH_WRITABLE, PATH_READ_ONLY, PATH_INACCESSIBLE };

static void import_paths(struct sandbox *box, const char *key, enum path_access access)
{
	size_t count;
	struct unit_setting **lines = unit_list(&box->unit->file, "Service", key, &count);
	for (size_t i = 0; i < count; i++) {
		box->any = true;
		char *value = unit_value(box->unit, lines[i]), *save = NULL;
		for (char *word = strtok_r(value, " \t", &save); word;
		     word = strtok_r(NULL, " \t", &save)) {
			bool optional = false;
			while (*word == '-' || *word == '+') {
				optional |= *word == '-';
				word++;
			}
			bool directory = false;
			if (!path_exists(word, &directory)) {
				if (optional)
					ytree_comment(
					    ytree_get(box->unit->group, "tasks"), box->unit->name,
					    "%s=-%s: skipped, as systemd does, since it is not "
					    "here",
					    key, word);
				else
					unit_drop(
					    box->unit, lines[i],
					    "%s is not here, and corral binds only a path that "
					    "exists when the config loads (systemd would not "
					    "start the unit either)",
					    word);
				continue;
			}
			if (access == PATH_INACCESSIBLE) {
				if (directory)
					sandbox_add_tmpfs(box, word, "000", true);
				else
					sandbox_add_bind(box, "/dev/null", word, true);
			} else {
				sandbox_add_bind(box, word, word, access == PATH_READ_ONLY);
			}
		}
		free(value);
	}
	free(lines);
}

static void import_protect_system(struct sandbox *box)
{
	struct unit_setting *protect = sandbox_setting(box, "ProtectSystem");
	if (!protect)
		return;
	const char *value = protect->value;
	int flag = unit_boolean(value);
	if (flag == 0)
		return;
	if (strcmp(value, "strict") == 0) {
		box->namespaces |= 1u << NS_MOUNT;
		ytree_set(box->isolation, "readonly_rootfs", ytree_plain("true"));
		ytree_comment(box->isolation, "readonly_rootfs",
			      "ProtectSystem=strict: / read-only; file systems mounted below it "
			      "(/run, /dev/shm, a /tmp of its own) keep their own flags, and /proc "
			      "and /sys are read-only in the task");
		return;
	}
	static const char *const system_dirs[] = {"/usr", "/boot", "/efi", NULL};
	for (size_t i = 0; system_dirs[i]; i++)
		if (path_exists(system_dirs[i], NULL))
			sandbox_add_bind(box, system_dirs[i], system_dirs[i], true);
	if (strcmp(value, "full") == 0)
		sandbox_add_bind(box, "/etc", "/etc", true);
	else if (flag != 1)
		unit_drop(box->unit, protect, "an unknown ProtectSystem=");
}

static void import_protect_home(struct sandbox *box)
{
	struct unit_setting *protect = sandbox_setting(box, "ProtectHome");
	if (!protect || unit_boolean(protect->value) == 0)
		return;
	static const char *const homes[] = {"/home", "/root", "/run/user", NULL};
	bool read_only = strcmp(protect->value, "read-only") == 0;
	bool tmpfs = strcmp(protect->value, "tmpfs") == 0;
	if (!read_only && !tmpfs && unit_boolean(protect->value) != 1) {
		unit_drop(box->unit, protect, "an unknown ProtectHome=");
		return;
	}
	for (size_t i = 0; homes[i]; i++) {
		if (!path_exists(homes[i], NULL))
			continue;
		if (read_only)
			sandbox_add_bind(box, homes[i], homes[i], true);
		else
			sandbox_add_tmpfs(box, homes[i], tmpfs ? "755" : "000", true);
	}
}

static void import_temporary_file_systems(struct sandbox *box)
{
	size_t count;
	struct unit_setting **lines =
	    unit_list(&box->unit->file, "Service", "TemporaryFileSystem", &count);
	for (size_t i = 0; i < count; i++) {
		box->any = true;
		char *value = unit_value(box->unit, lines[i]), *save = NULL;
		for (char *word = strtok_r(value, " \t", &save); word;
		     word = strtok_r(NULL, " \t", &save)) {
			char *colon = strchr(word, ':');
			bool readonly = colon && strstr(colon, "ro");
			if (colon)
				*colon = '\0';
			sandbox_add_tmpfs(box, word, "755", readonly);
		}
		free(value);
	}
	free(lines);
}

static void import_binds(struct sandbox *box, const char *key, bool readonly)
{
	size_t count;
	struct unit_setting **lines = unit_list(&box->unit->file, "Service", key, &count);
	for (size_t i = 0; i < count; i++) {
		box->any = true;
		char *value = unit_value(box->unit, lines[i]), *save = NULL;
		for (char *word = strtok_r(value, " \t", &save); word;
		     word = strtok_r(NULL, " \t", &save)) {
			bool optional = *word == '-';
			if (optional)
				word++;
			char *colon = strchr(word, ':');
			const char *target = word;
			if (colon) {
				*colon = '\0';
				target = colon + 1;
				char *options = strchr(target, ':');
				if (options)
					*options = '\0';
			}
			if (!path_exists(word, NULL)) {
				if (!optional)
					unit_drop(
					    box->unit, lines[i],
					    "%s is not here, and corral binds only a path that "
					    "exists when the config loads",
					    word);
				continue;
			}
			sandbox_add_bind(box, word, target, readonly);
		}
		free(value);
	}
	free(lines);
}

static void import_devices(struct sandbox *box)
{
	struct unit_setting *policy = sandbox_setting(box, "DevicePolicy");
	size_t count;
	struct unit_setting **allowed =
	    unit_list(&box->unit->file, "Service", "DeviceAllow", &count);
	static const char *const default_devices[] = {
	    "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", NULL};
	for (size_t i = 0; i < count; i++) {
		box->any = true;
		char *copy = xstrdup(allowed[i]->value), *save = NULL;
		char *path = strtok_r(copy, " \t", &save);
		char *permissions = strtok_r(NULL, " \t", &save);
		bool is_default = false;
		for (size_t d = 0; path && default_devices[d]; d++)
			is_default |= strcmp(path, default_devices[d]) == 0;
		if (!path || strncmp(path, "/dev/", 5) != 0) {
			unit_drop(box->unit, allowed[i],
				  "corral's devices name a device node, not a class (char-*, "
				  "block-*)");
		} else if (!is_default && access(path, F_OK) != 0) {
			unit_drop(
			    box->unit, allowed[i],
			    "%s is not here, and corral checks a device when the config loads",
			    path);
		} else if (!is_default) {
			struct ytree_node *devices = ytree_child_list(box->isolation, "devices");
			devices->flow = false;
			struct ytree_node *device = ytree_map();
			device->flow = true;
			ytree_set(device, "path", ytree_string(path));
			if (permissions)
				ytree_set(device, "permissions", ytree_string(permissions));
			ytree_append(devices, device);
		}
		free(copy);
	}
	free(allowed);
	(void)policy;
}

void sandbox_import_mounts(struct sandbox *box)
{
	/* Read-only first, then what is writable or hidden below it: a
	 * later mount covers an earlier one. */
	import_protect_system(box);
	import_protect_home(box);
	import_paths(box, "ReadOnlyPaths", PATH_READ_ONLY);
	import_paths(box, "ReadOnlyDirectories", PATH_READ_ONLY);
	import_binds(box, "BindReadOnlyPaths", true);
	import_binds(box, "BindPaths", false);
	import_temporary_file_systems(box);
	import_paths(box, "ReadWritePaths", PATH_WRITABLE);
	import_paths(box, "ReadWriteDirectories", PATH_WRITABLE);
	import_paths(box, "InaccessiblePaths", PATH_INACCESSIBLE);
	import_paths(box, "InaccessibleDirectories", PATH_INACCESSIBLE);
	struct unit_setting *root = sandbox_setting(box, "RootDirectory");
	if (root) {
		box->namespaces |= 1u << NS_MOUNT;
		ytree_set(box->isolation, "rootfs", ytree_string(root->value));
	}
	import_devices(box);
}
