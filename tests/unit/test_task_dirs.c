/* The task directories hook on the real file system (as root, the way
 * corral runs): what is created with which mode, the secrets tmpfs, the
 * additions for a task with and without its own root, and that removal
 * leaves no directory and no mount behind. */
#include <errno.h>
#include <linux/magic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/model/config.h"
#include "hooks/start_additions.h"
#include "hooks/task_dirs.h"

struct fixture {
	char configured[64]; /* the configured root, a fresh temporary directory */
	char *instance;      /* configured/4242 */
};

static int setup(void **state)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));

	snprintf(fixture->configured, sizeof(fixture->configured),
		 "/tmp/corral-test-task-dirs-XXXXXX");
	assert_non_null(mkdtemp(fixture->configured));
	fixture->instance = task_dirs_instance_root(fixture->configured, 4242);
	*state = fixture;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fixture = *state;
	char error[256];

	task_dirs_remove(fixture->instance, error, sizeof(error));
	rmdir(fixture->configured);
	free(fixture->instance);
	free(fixture);
	return 0;
}

/* How many mounts /proc/self/mountinfo lists under `path`. */
static int mounts_under(const char *path)
{
	FILE *mountinfo = fopen("/proc/self/mountinfo", "re");
	char line[4096], point[4096];
	int count = 0;

	assert_non_null(mountinfo);
	while (fgets(line, sizeof(line), mountinfo)) {
		if (sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1 &&
		    strncmp(point, path, strlen(path)) == 0)
			count++;
	}
	fclose(mountinfo);
	return count;
}

static void assert_directory(const char *path, mode_t mode, uid_t uid)
{
	struct stat status;

	print_message("directory: %s\n", path);
	assert_int_equal(lstat(path, &status), 0);
	assert_true(S_ISDIR(status.st_mode));
	assert_int_equal(status.st_mode & 07777, mode);
	assert_int_equal(status.st_uid, uid);
}

static void test_layout_and_modes(void **state)
{
	struct fixture *fixture = *state;
	struct task_dirs dirs;
	char error[256] = "", expected[256];
	struct statfs filesystem;
	struct statvfs flags;

	assert_int_equal(task_dirs_prepare(fixture->instance, "web", "app", (uid_t)-1, (gid_t)-1,
					   &dirs, error, sizeof(error)),
			 0);
	snprintf(expected, sizeof(expected), "%s/web/alloc", fixture->instance);
	assert_string_equal(dirs.alloc, expected);
	snprintf(expected, sizeof(expected), "%s/web/tasks/app/local", fixture->instance);
	assert_string_equal(dirs.local, expected);
	snprintf(expected, sizeof(expected), "%s/web/tasks/app/secrets", fixture->instance);
	assert_string_equal(dirs.secrets, expected);

	assert_directory(dirs.alloc, 0777, 0);
	assert_directory(dirs.local, 0755, 0);
	assert_directory(dirs.secrets, 0700, 0);
	assert_int_equal(statfs(dirs.secrets, &filesystem), 0);
	assert_int_equal(filesystem.f_type, TMPFS_MAGIC);
	assert_int_equal(statvfs(dirs.secrets, &flags), 0);
	assert_true(flags.f_flag & ST_NOEXEC);
	assert_true(flags.f_flag & ST_NOSUID);
	assert_true(flags.f_flag & ST_NODEV);
	assert_int_equal(filesystem.f_blocks * filesystem.f_bsize, 1 << 20);
	task_dirs_free(&dirs);
}

static void test_prepare_again_keeps_contents(void **state)
{
	struct fixture *fixture = *state;
	struct task_dirs dirs, again;
	char error[256] = "", path[512];
	FILE *file;

	assert_int_equal(task_dirs_prepare(fixture->instance, "web", "app", (uid_t)-1, (gid_t)-1,
					   &dirs, error, sizeof(error)),
			 0);
	snprintf(path, sizeof(path), "%s/token", dirs.secrets);
	file = fopen(path, "w");
	assert_non_null(file);
	fputs("s3cret", file);
	fclose(file);

	/* A restart of the task, and a second task of the group. */
	assert_int_equal(task_dirs_prepare(fixture->instance, "web", "app", (uid_t)-1, (gid_t)-1,
					   &again, error, sizeof(error)),
			 0);
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(mounts_under(fixture->instance), 1);
	task_dirs_free(&again);
	assert_int_equal(task_dirs_prepare(fixture->instance, "web", "alloc", (uid_t)-1, (gid_t)-1,
					   &again, error, sizeof(error)),
			 0);
	assert_string_equal(again.alloc, dirs.alloc);
	assert_int_equal(mounts_under(fixture->instance), 2);
	task_dirs_free(&again);
	task_dirs_free(&dirs);
}

static void test_owned_by_the_task_user(void **state)
{
	struct fixture *fixture = *state;
	struct task_dirs dirs;
	char error[256] = "";
	struct stat status;

	assert_int_equal(task_dirs_prepare(fixture->instance, "web", "app", 1234, 5678, &dirs,
					   error, sizeof(error)),
			 0);
	assert_directory(dirs.local, 0755, 1234);
	assert_directory(dirs.secrets, 0700, 1234);
	assert_int_equal(stat(dirs.secrets, &status), 0);
	assert_int_equal(status.st_gid, 5678);
	assert_directory(dirs.alloc, 0777, 0);
	task_dirs_free(&dirs);
}

static void test_removed_without_leaks(void **state)
{
	struct fixture *fixture = *state;
	struct task_dirs dirs;
	char error[256] = "", path[512];

	assert_int_equal(task_dirs_prepare(fixture->instance, "web", "app", (uid_t)-1, (gid_t)-1,
					   &dirs, error, sizeof(error)),
			 0);
	/* What a task may leave: files, and a link out that must not be
	 * followed. */
	snprintf(path, sizeof(path), "%s/escape", dirs.alloc);
	assert_int_equal(symlink("/etc", path), 0);
	snprintf(path, sizeof(path), "%s/a", dirs.local);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/a/b", dirs.local);
	assert_int_equal(mkdir(path, 0700), 0);

	assert_int_equal(task_dirs_remove(fixture->instance, error, sizeof(error)), 0);
	assert_int_equal(access(fixture->instance, F_OK), -1);
	assert_int_equal(mounts_under(fixture->instance), 0);
	assert_int_equal(access("/etc/hostname", F_OK), 0);
	/* The configured root went too: it was left empty. */
	assert_int_equal(access(fixture->configured, F_OK), -1);
	/* Removing what is gone is not an error. */
	assert_int_equal(task_dirs_remove(fixture->instance, error, sizeof(error)), 0);
	assert_int_equal(mkdir(fixture->configured, 0700), 0); /* for teardown */
	task_dirs_free(&dirs);
}

static void test_additions(void **state)
{
	struct task_dirs dirs = {.alloc = "/h/alloc", .local = "/h/local", .secrets = "/h/secrets"};
	struct start_additions in_task = {0}, on_host = {0};

	task_dirs_additions(&dirs, true, &in_task);
	assert_int_equal(in_task.mount_count, 3);
	assert_string_equal(in_task.mounts[0].source, "/h/alloc");
	assert_string_equal(in_task.mounts[0].target, "/alloc");
	assert_null(in_task.mounts[0].type);
	assert_false(in_task.mounts[0].readonly);
	assert_string_equal(in_task.mounts[1].target, "/local");
	assert_string_equal(in_task.mounts[2].source, "/h/secrets");
	assert_string_equal(in_task.mounts[2].target, "/secrets");
	assert_string_equal(in_task.env[0], "CORRAL_ALLOC_DIR=/alloc");
	assert_string_equal(in_task.env[1], "CORRAL_TASK_DIR=/local");
	assert_string_equal(in_task.env[2], "CORRAL_SECRETS_DIR=/secrets");
	assert_null(in_task.env[3]);

	task_dirs_additions(&dirs, false, &on_host);
	assert_int_equal(on_host.mount_count, 0);
	assert_string_equal(on_host.env[0], "CORRAL_ALLOC_DIR=/h/alloc");
	assert_string_equal(on_host.env[1], "CORRAL_TASK_DIR=/h/local");
	assert_string_equal(on_host.env[2], "CORRAL_SECRETS_DIR=/h/secrets");
	start_additions_free(&in_task);
	start_additions_free(&on_host);
}

static void test_mounted_in_task(void **state)
{
	struct task_config task = {0};

	assert_false(task_dirs_mounted_in_task(&task));
	task.isolation.enabled = true;
	task.isolation.namespaces = ISOLATION_NS_MOUNT;
	assert_false(task_dirs_mounted_in_task(&task)); /* the host's own / */
	task.isolation.rootfs = "/srv/root";
	assert_true(task_dirs_mounted_in_task(&task));
}

static void test_prepare_fails_with_the_step(void **state)
{
	struct fixture *fixture = *state;
	struct task_dirs dirs;
	char error[256] = "", expected[512], file[128];
	char *instance;
	FILE *created;

	snprintf(file, sizeof(file), "%s/file", fixture->configured);
	created = fopen(file, "w");
	assert_non_null(created);
	fclose(created);
	instance = task_dirs_instance_root(file, 1);
	snprintf(expected, sizeof(expected), "task dirs: %s exists and is not a directory", file);
	assert_int_equal(task_dirs_prepare(instance, "web", "app", (uid_t)-1, (gid_t)-1, &dirs,
					   error, sizeof(error)),
			 -ENOTDIR);
	assert_string_equal(error, expected);
	assert_null(dirs.alloc);
	unlink(file);
	free(instance);
}

/* /var/run -> /run: a configured root may lie behind a link. */
static void test_root_behind_a_link(void **state)
{
	struct fixture *fixture = *state;
	struct task_dirs dirs;
	char error[256] = "", real[128], link[128], root[160];
	char *instance;

	snprintf(real, sizeof(real), "%s/real", fixture->configured);
	snprintf(link, sizeof(link), "%s/link", fixture->configured);
	snprintf(root, sizeof(root), "%s/tasks", link);
	assert_int_equal(mkdir(real, 0755), 0);
	assert_int_equal(symlink(real, link), 0);
	instance = task_dirs_instance_root(root, 9);
	assert_int_equal(task_dirs_prepare(instance, "web", "app", (uid_t)-1, (gid_t)-1, &dirs,
					   error, sizeof(error)),
			 0);
	assert_directory(dirs.alloc, 0777, 0);
	assert_int_equal(task_dirs_remove(instance, error, sizeof(error)), 0);
	assert_int_equal(mounts_under(real), 0);
	unlink(link);
	rmdir(real);
	task_dirs_free(&dirs);
	free(instance);
}

static void test_default_root(void **state)
{
	char *root = task_dirs_instance_root(NULL, 7);

	assert_string_equal(root, "/run/corral/tasks/7");
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_layout_and_modes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_prepare_again_keeps_contents, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_owned_by_the_task_user, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_removed_without_leaks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_prepare_fails_with_the_step, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_root_behind_a_link, setup, teardown),
	    cmocka_unit_test(test_additions),
	    cmocka_unit_test(test_mounted_in_task),
	    cmocka_unit_test(test_default_root),
	};

	if (geteuid() != 0) {
		fputs("test_task_dirs: skipped, needs root (it mounts tmpfs)\n", stderr);
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
