#include "hooks/task_dirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "hooks/start_additions.h"

char *task_dirs_instance_root(const char *configured_root, pid_t pid)
{
	return xasprintf("%s/%d", configured_root ? configured_root : TASK_DIRS_DEFAULT_ROOT,
			 (int)pid);
}

/* "task dirs: STEP PATH: errno text", and -errno. */
static int report_errno(char *error, size_t error_size, const char *step, const char *path)
{
	int saved = errno;

	snprintf(error, error_size, "task dirs: %s %s: %s", step, path, strerror(saved));
	return -saved;
}

/* A directory at `path` with exactly `mode`: made when missing (the umask
 * does not get a say), refused when something else is there. */
static int make_directory_at(const char *path, mode_t mode, bool follow, char *error,
			     size_t error_size)
{
	struct stat status;

	if (mkdir(path, mode) == 0) {
		if (chmod(path, mode) == 0)
			return 0;
		return report_errno(error, error_size, "chmod", path);
	}
	if (errno != EEXIST)
		return report_errno(error, error_size, "create", path);
	if ((follow ? stat(path, &status) : lstat(path, &status)) < 0 || !S_ISDIR(status.st_mode)) {
		snprintf(error, error_size, "task dirs: %s exists and is not a directory", path);
		return -ENOTDIR;
	}
	return 0;
}

/* Inside the tree, where only corral creates directories: a link there is
 * not ours, and is refused. */
static int make_directory(const char *path, mode_t mode, char *error, size_t error_size)
{
	return make_directory_at(path, mode, false, error, error_size);
}

/* mkdir -p of the configured root, mode 0755. Its parents may be links the
 * administrator made (/var/run -> /run). */
static int make_parents(const char *path, char *error, size_t error_size)
{
	char *copy = xstrdup(path);
	int r = 0;

	for (char *slash = strchr(copy + 1, '/'); slash && r == 0; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		r = make_directory_at(copy, 0755, true, error, error_size);
		*slash = '/';
	}
	if (r == 0)
		r = make_directory(copy, 0755, error, error_size);
	free(copy);
	return r;
}

static int give_to(const char *path, uid_t uid, gid_t gid, char *error, size_t error_size)
{
	if ((uid == (uid_t)-1 && gid == (gid_t)-1) || lchown(path, uid, gid) == 0)
		return 0;
	return report_errno(error, error_size, "chown", path);
}

/* A tmpfs has a device of its own: the directory is a mount point when its
 * device differs from its parent's. */
static bool is_mount_point(const char *path)
{
	struct stat status, parent_status;
	char *copy = xstrdup(path);
	bool mounted = stat(path, &status) == 0 && stat(dirname(copy), &parent_status) == 0 &&
		       status.st_dev != parent_status.st_dev;

	free(copy);
	return mounted;
}

static int mount_secrets(const char *path, uid_t uid, gid_t gid, char *error, size_t error_size)
{
	char options[96];
	size_t used;

	if (is_mount_point(path))
		return 0; /* a restart: keep what is in it */
	used =
	    (size_t)snprintf(options, sizeof(options), "mode=0700,size=%s", TASK_DIRS_SECRETS_SIZE);
	if (uid != (uid_t)-1)
		used += (size_t)snprintf(options + used, sizeof(options) - used, ",uid=%u",
					 (unsigned)uid);
	if (gid != (gid_t)-1)
		snprintf(options + used, sizeof(options) - used, ",gid=%u", (unsigned)gid);
	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options) == 0)
		return 0;
	return report_errno(error, error_size, "mount a tmpfs on", path);
}

int task_dirs_prepare(const char *instance_root, const char *group, const char *task, uid_t uid,
		      gid_t gid, struct task_dirs *out, char *error, size_t error_size)
{
	char *group_dir = xasprintf("%s/%s", instance_root, group);
	char *tasks_dir = xasprintf("%s/tasks", group_dir);
	char *task_dir = xasprintf("%s/%s", tasks_dir, task);
	int r;

	*out = (struct task_dirs){
	    .alloc = xasprintf("%s/alloc", group_dir),
	    .local = xasprintf("%s/local", task_dir),
	    .secrets = xasprintf("%s/secrets", task_dir),
	};
	if ((r = make_parents(instance_root, error, error_size)) < 0 ||
	    (r = make_directory(group_dir, 0755, error, error_size)) < 0 ||
	    /* Shared by tasks that may run as different users, as in Nomad. */
	    (r = make_directory(out->alloc, 0777, error, error_size)) < 0 ||
	    (r = make_directory(tasks_dir, 0755, error, error_size)) < 0 ||
	    (r = make_directory(task_dir, 0755, error, error_size)) < 0 ||
	    (r = make_directory(out->local, 0755, error, error_size)) < 0 ||
	    (r = give_to(out->local, uid, gid, error, error_size)) < 0 ||
	    (r = make_directory(out->secrets, 0700, error, error_size)) < 0 ||
	    (r = mount_secrets(out->secrets, uid, gid, error, error_size)) < 0)
		task_dirs_free(out);
	free(task_dir);
	free(tasks_dir);
	free(group_dir);
	return r;
}

bool task_dirs_mounted_in_task(const struct task_config *task)
{
	return task->isolation.enabled && task->isolation.rootfs &&
	       (task->isolation.namespaces & ISOLATION_NS_MOUNT);
}

void task_dirs_additions(const struct task_dirs *dirs, bool in_task, struct start_additions *out)
{
	const char *const host[] = {dirs->alloc, dirs->local, dirs->secrets};
	static const char *const inside[] = {"/alloc", "/local", "/secrets"};
	static const char *const variables[] = {"CORRAL_ALLOC_DIR", "CORRAL_TASK_DIR",
						"CORRAL_SECRETS_DIR"};

	for (size_t i = 0; i < 3; i++) {
		char *entry = xasprintf("%s=%s", variables[i], in_task ? inside[i] : host[i]);

		if (in_task) {
			struct mount_config mount = {.source = (char *)host[i],
						     .target = (char *)inside[i]};

			start_additions_append_mount(out, &mount);
		}
		start_additions_append_env(out, entry);
		free(entry);
	}
}

void task_dirs_free(struct task_dirs *dirs)
{
	free(dirs->alloc);
	free(dirs->local);
	free(dirs->secrets);
	*dirs = (struct task_dirs){0};
}

/* "\040" in /proc/self/mountinfo is a space, and so on. */
static void unescape_mount_path(char *path)
{
	char *in = path, *out = path;

	while (*in) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' &&
		    in[3] >= '0' && in[3] <= '7') {
			*out++ = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
			in += 4;
		} else {
			*out++ = *in++;
		}
	}
	*out = '\0';
}

static int by_length_descending(const void *a, const void *b)
{
	size_t left = strlen(*(char *const *)a), right = strlen(*(char *const *)b);

	return left < right ? 1 : left > right ? -1 : 0;
}

/* Deepest first, so that a mount on top of another goes before it. */
static int unmount_under(const char *root, char *error, size_t error_size)
{
	FILE *mountinfo = fopen("/proc/self/mountinfo", "re");
	size_t root_length = strlen(root), count = 0;
	char **points = NULL, *line = NULL;
	size_t line_size = 0;
	int r = 0;

	if (!mountinfo)
		return report_errno(error, error_size, "read", "/proc/self/mountinfo");
	while (getline(&line, &line_size, mountinfo) > 0) {
		char point[4096];

		/* ID PARENT MAJOR:MINOR ROOT MOUNT_POINT ... */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1)
			continue;
		unescape_mount_path(point);
		if (strncmp(point, root, root_length) != 0 ||
		    (point[root_length] != '/' && point[root_length] != '\0'))
			continue;
		points = xreallocarray(points, count + 1, sizeof(*points));
		points[count++] = xstrdup(point);
	}
	free(line);
	fclose(mountinfo);
	if (count)
		qsort(points, count, sizeof(*points), by_length_descending);
	for (size_t i = 0; i < count; i++) {
		/* Detached: a task still running keeps its view until it exits. */
		if (umount2(points[i], MNT_DETACH) < 0 && errno != EINVAL && r == 0)
			r = report_errno(error, error_size, "unmount", points[i]);
		free(points[i]);
	}
	free(points);
	return r;
}

/* rm -rf of `name` in `parent_fd`, never following a link a task made and
 * never leaving the file system of the tree. */
static int remove_entry(int parent_fd, const char *name, dev_t device, char *error,
			size_t error_size)
{
	struct stat status;
	struct dirent *entry;
	DIR *directory;
	int fd, r = 0;

	if (fstatat(parent_fd, name, &status, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(status.st_mode) || status.st_dev != device) {
		if (unlinkat(parent_fd, name, S_ISDIR(status.st_mode) ? AT_REMOVEDIR : 0) == 0)
			return 0;
		return report_errno(error, error_size, "remove", name);
	}
	fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(directory = fdopendir(fd))) {
		r = report_errno(error, error_size, "open", name);
		if (fd >= 0)
			close(fd);
		return r;
	}
	while ((entry = readdir(directory))) {
		int entry_r;

		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		entry_r = remove_entry(dirfd(directory), entry->d_name, device, error, error_size);
		if (entry_r < 0 && r == 0)
			r = entry_r;
	}
	closedir(directory);
	if (r == 0 && unlinkat(parent_fd, name, AT_REMOVEDIR) < 0)
		r = report_errno(error, error_size, "remove", name);
	return r;
}

int task_dirs_remove(const char *instance_root, char *error, size_t error_size)
{
	struct stat status;
	char *real, *parent;
	int r;

	/* mountinfo has the real path: the configured root may lie behind a
	 * link. */
	real = realpath(instance_root, NULL);
	if (!real)
		return errno == ENOENT ? 0
				       : report_errno(error, error_size, "resolve", instance_root);
	r = unmount_under(real, error, error_size);
	if (r == 0 && lstat(real, &status) < 0)
		r = report_errno(error, error_size, "stat", real);
	if (r == 0)
		r = remove_entry(AT_FDCWD, real, status.st_dev, error, error_size);
	/* The configured root, when no other corral uses it. */
	parent = xstrdup(real);
	if (r == 0)
		rmdir(dirname(parent));
	free(parent);
	free(real);
	return r;
}
