/* isolation/mountinfo.c: lines of /proc/self/mountinfo as corral reads
 * them (ids, root and mount point unescaped, the peer group of a shared
 * mount), a malformed text refused whole, the mount visible at a mount
 * point, and "at or below" on paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "isolation/mountinfo.h"

static const char sample[] =
    "27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
    "45 27 254:0 /tmp/src /srv/plugins rw,relatime shared:4 master:1 - ext4 /dev/vda rw\n"
    "95 45 0:43 / /srv/plugins/a\\040volume rw,relatime - tmpfs plug rw,size=1024k\n"
    "96 27 0:44 / /srv/other rw unbindable - tmpfs t rw\n"
    "97 27 0:4 net:[4026532290] /run/netns/a rw shared:5 - nsfs nsfs rw\n"
    "98 27 0:32 /ns/id /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    "99 27 0:32 /ns/id/sub\\040dir /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";

static void test_entries(void **state)
{
	struct mountinfo info;
	assert_int_equal(mountinfo_parse(sample, strlen(sample), &info), 0);
	assert_int_equal(info.count, 7);
	assert_int_equal(info.entries[0].id, 27);
	assert_int_equal(info.entries[0].parent, 1);
	assert_string_equal(info.entries[0].mount_point, "/");
	assert_string_equal(info.entries[0].root, "/");
	assert_string_equal(info.entries[1].root, "/tmp/src");
	assert_string_equal(info.entries[4].root, "net:[4026532290]"); /* nsfs: not a path */
	assert_string_equal(info.entries[6].root, "/ns/id/sub dir");
	assert_int_equal(info.entries[0].shared, 1);
	assert_int_equal(info.entries[1].shared, 4); /* shared and a slave */
	assert_string_equal(info.entries[2].mount_point, "/srv/plugins/a volume");
	assert_int_equal(info.entries[2].shared, 0);
	assert_int_equal(info.entries[2].parent, 45);
	assert_int_equal(info.entries[3].shared, 0);
	assert_ptr_equal(mountinfo_find(&info, 95), &info.entries[2]);
	assert_null(mountinfo_find(&info, 7));
	mountinfo_free(&info);
}

static void test_the_mount_at_a_mount_point_is_the_last_one_there(void **state)
{
	struct mountinfo info;
	assert_int_equal(mountinfo_parse(sample, strlen(sample), &info), 0);
	assert_ptr_equal(mountinfo_find_mount_point(&info, "/sys/fs/cgroup/memory"),
			 &info.entries[6]);
	assert_ptr_equal(mountinfo_find_mount_point(&info, "/srv/plugins"), &info.entries[1]);
	assert_null(mountinfo_find_mount_point(&info, "/sys/fs/cgroup"));
	mountinfo_free(&info);
}

static void test_malformed_text_is_refused(void **state)
{
	static const char *const bad[] = {
	    "27 1 254:0 / / rw shared:1 ext4 /dev/vda rw\n", /* no "-" */
	    "x 1 254:0 / / rw - ext4 /dev/vda rw\n",
	    "27 1 254:0 / relative rw - ext4 /dev/vda rw\n",
	    "27 1\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mountinfo info;
		assert_int_equal(mountinfo_parse(bad[i], strlen(bad[i]), &info), -22);
		assert_int_equal(info.count, 0);
	}
}

static void test_own_mountinfo_reads(void **state)
{
	struct mountinfo info;
	assert_int_equal(mountinfo_read(&info), 0);
	assert_true(info.count > 0);
	mountinfo_free(&info);
}

static void test_below(void **state)
{
	assert_true(mountinfo_path_is_below("/srv/plugins", "/srv/plugins"));
	assert_true(mountinfo_path_is_below("/srv/plugins/a", "/srv/plugins"));
	assert_true(mountinfo_path_is_below("/srv/plugins/a", "/srv/plugins/"));
	assert_false(mountinfo_path_is_below("/srv/pluginsx", "/srv/plugins"));
	assert_false(mountinfo_path_is_below("/srv", "/srv/plugins"));
	assert_true(mountinfo_path_is_below("/anything", "/"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_entries),
	    cmocka_unit_test(test_the_mount_at_a_mount_point_is_the_last_one_there),
	    cmocka_unit_test(test_malformed_text_is_refused),
	    cmocka_unit_test(test_own_mountinfo_reads),
	    cmocka_unit_test(test_below),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
