/* Where a watched path leads through symlinks (watch_chain.h), on links
 * made in a temporary directory; and an adopted inotify fd whose watches
 * nobody acquired again (watch_dirs_drop_strays). */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor/watch/watch_chain.h"
#include "supervisor/watch/watch_dirs.h"

static char root[PATH_MAX];

static const char *at(const char *relative)
{
	static char paths[8][PATH_MAX + NAME_MAX];
	static int next;
	char *path = paths[next++ % 8];
	snprintf(path, sizeof(paths[0]), "%.*s/%s", (int)(PATH_MAX - 1), root, relative);
	return path;
}

static int setup(void **state)
{
	(void)state;
	char template[] = "/tmp/test_watch_chain.XXXXXX";
	assert_non_null(mkdtemp(template));
	/* Without links of its own: /tmp could be one. */
	assert_non_null(realpath(template, root));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char command[PATH_MAX + 16];
	snprintf(command, sizeof(command), "rm -rf '%s'", root);
	return system(command) == 0 ? 0 : -1;
}

static void make_file(const char *relative)
{
	FILE *file = fopen(at(relative), "w");
	assert_non_null(file);
	fclose(file);
}

static void assert_hop(const struct watch_chain *chain, size_t index, const char *directory,
		       const char *name, bool link)
{
	assert_true(index < chain->count);
	assert_string_equal(chain->hops[index].directory, directory);
	assert_string_equal(chain->hops[index].name, name);
	assert_int_equal(chain->hops[index].link, link);
}

static void test_a_path_through_no_link_has_no_link(void **state)
{
	(void)state;
	make_file("plain.conf");
	struct watch_chain chain;
	watch_chain_walk(at("plain.conf"), &chain);
	assert_int_equal(chain.links, 0);
	assert_false(chain.cut);
	watch_chain_free(&chain);
}

static void test_a_relative_chain_into_another_directory(void **state)
{
	(void)state;
	assert_int_equal(mkdir(at("etc"), 0755), 0);
	assert_int_equal(mkdir(at("real"), 0755), 0);
	assert_int_equal(mkdir(at("links"), 0755), 0);
	make_file("real/target.conf");
	assert_int_equal(symlink("../links/current", at("etc/app.conf")), 0);
	assert_int_equal(symlink("../real/./target.conf", at("links/current")), 0);
	struct watch_chain chain;
	watch_chain_walk(at("etc/app.conf"), &chain);
	assert_int_equal(chain.count, 3);
	assert_int_equal(chain.links, 2);
	assert_hop(&chain, 0, at("etc"), "app.conf", true);
	assert_hop(&chain, 1, at("links"), "current", true);
	assert_hop(&chain, 2, at("real"), "target.conf", false);
	watch_chain_free(&chain);
}

static void test_a_directory_link_on_the_way_and_a_missing_end(void **state)
{
	(void)state;
	/* Kubernetes' volume: app.yaml -> ..data/app.yaml, ..data -> ..v1,
	 * and ..v1 without app.yaml yet. */
	assert_int_equal(mkdir(at("volume"), 0755), 0);
	assert_int_equal(mkdir(at("volume/..v1"), 0755), 0);
	assert_int_equal(symlink("..v1", at("volume/..data")), 0);
	assert_int_equal(symlink("..data/app.yaml", at("volume/app.yaml")), 0);
	struct watch_chain chain;
	watch_chain_walk(at("volume/app.yaml"), &chain);
	assert_int_equal(chain.links, 2);
	assert_hop(&chain, 0, at("volume"), "app.yaml", true);
	assert_hop(&chain, 1, at("volume"), "..data", true);
	assert_hop(&chain, 2, at("volume/..v1"), "app.yaml", false);
	watch_chain_free(&chain);
}

static void test_a_dangling_absolute_link_ends_at_the_first_missing_part(void **state)
{
	(void)state;
	assert_int_equal(mkdir(at("dangling"), 0755), 0);
	assert_int_equal(symlink(at("nowhere/deeper/x.conf"), at("dangling/x.conf")), 0);
	struct watch_chain chain;
	watch_chain_walk(at("dangling/x.conf"), &chain);
	assert_int_equal(chain.count, 2);
	assert_hop(&chain, 1, root, "nowhere", false);
	watch_chain_free(&chain);
}

static void test_a_loop_is_cut_with_each_link_once(void **state)
{
	(void)state;
	assert_int_equal(mkdir(at("loop"), 0755), 0);
	assert_int_equal(symlink("b", at("loop/a")), 0);
	assert_int_equal(symlink("a", at("loop/b")), 0);
	struct watch_chain chain;
	watch_chain_walk(at("loop/a"), &chain);
	assert_true(chain.cut);
	assert_int_equal(chain.count, 2);
	assert_int_equal(chain.links, 2);
	watch_chain_free(&chain);
}

static size_t watches_listed(int fd)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	FILE *info = fopen(path, "r");
	assert_non_null(info);
	size_t count = 0;
	while (fgets(line, sizeof(line), info))
		count += strncmp(line, "inotify wd:", 11) == 0;
	fclose(info);
	return count;
}

static void test_an_adopted_fd_keeps_the_wds_acquired_again_and_drops_the_rest(void **state)
{
	(void)state;
	assert_int_equal(mkdir(at("kept"), 0755), 0);
	assert_int_equal(mkdir(at("stray"), 0755), 0);
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(fd >= 0);
	int kept = inotify_add_watch(fd, at("kept"), WATCH_DIRS_MASK);
	assert_true(kept >= 0);
	assert_true(inotify_add_watch(fd, at("stray"), WATCH_DIRS_MASK) >= 0);
	struct watch_dirs dirs;
	watch_dirs_init(&dirs);
	watch_dirs_adopt(&dirs, fd);
	assert_int_equal(watch_dirs_acquire(&dirs, at("kept")), kept);
	assert_int_equal(watches_listed(fd), 2);
	watch_dirs_drop_strays(&dirs);
	assert_int_equal(watches_listed(fd), 1);
	assert_int_equal(dirs.fd, fd);
	watch_dirs_release(&dirs, kept);
	assert_true(watch_dirs_close_if_unused(&dirs));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_path_through_no_link_has_no_link),
	    cmocka_unit_test(test_a_relative_chain_into_another_directory),
	    cmocka_unit_test(test_a_directory_link_on_the_way_and_a_missing_end),
	    cmocka_unit_test(test_a_dangling_absolute_link_ends_at_the_first_missing_part),
	    cmocka_unit_test(test_a_loop_is_cut_with_each_link_once),
	    cmocka_unit_test(test_an_adopted_fd_keeps_the_wds_acquired_again_and_drops_the_rest),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
