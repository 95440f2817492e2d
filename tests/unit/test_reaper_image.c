/* The reaper's memfd: the embedded program, whole, sealed for good, and
 * runnable without a path (execveat AT_EMPTY_PATH) as corral runs it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "isolation/reaper_image.h"

static void test_the_image_is_a_static_elf_program(void **state)
{
	(void)state;
	assert_true(reaper_image_size() > sizeof(Elf64_Ehdr));
	Elf64_Ehdr header;
	memcpy(&header, reaper_image, sizeof(header));
	assert_memory_equal(header.e_ident, ELFMAG, SELFMAG);
	assert_int_equal(header.e_type, ET_EXEC);
	/* No program interpreter: nothing to load before it runs. */
	for (unsigned i = 0; i < header.e_phnum; i++) {
		Elf64_Phdr program;
		assert_true(header.e_phoff + (i + 1) * sizeof(program) <= reaper_image_size());
		memcpy(&program, reaper_image + header.e_phoff + i * sizeof(program),
		       sizeof(program));
		assert_int_not_equal(program.p_type, PT_INTERP);
	}
}

static void test_the_memfd_holds_the_image_sealed(void **state)
{
	(void)state;
	int fd = reaper_image_memfd();
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFD), FD_CLOEXEC);
	struct stat status;
	assert_int_equal(fstat(fd, &status), 0);
	assert_int_equal((size_t)status.st_size, reaper_image_size());
	unsigned char *copy = malloc(reaper_image_size());
	assert_non_null(copy);
	assert_int_equal(pread(fd, copy, reaper_image_size(), 0), (ssize_t)reaper_image_size());
	assert_memory_equal(copy, reaper_image, reaper_image_size());
	free(copy);

	int seals = fcntl(fd, F_GET_SEALS);
	assert_int_equal(seals, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	assert_int_equal(pwrite(fd, "x", 1, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(fd, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE), -1);
	assert_int_equal(errno, EPERM);
	close(fd);
}

/* As corral runs it, by its fd alone; with too few arguments it says how
 * it is used and exits 2, and with a command it passes on its exit code. */
static int run_from_memfd(char *const argv[])
{
	int fd = reaper_image_memfd();
	assert_true(fd >= 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null_fd = open("/dev/null", O_WRONLY);
		dup2(null_fd, STDERR_FILENO);
		char *const envp[] = {"PATH=/usr/bin:/bin", NULL};
		syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
		_exit(99);
	}
	close(fd);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_the_memfd_runs_as_corral_execs_it(void **state)
{
	(void)state;
	char *const usage[] = {"corral-reaper", "sh", NULL};
	assert_int_equal(run_from_memfd(usage), 2);
	char *const command[] = {"corral-reaper", "sh", "sh", "-c", "exit 42", NULL};
	assert_int_equal(run_from_memfd(command), 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_image_is_a_static_elf_program),
	    cmocka_unit_test(test_the_memfd_holds_the_image_sealed),
	    cmocka_unit_test(test_the_memfd_runs_as_corral_execs_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
