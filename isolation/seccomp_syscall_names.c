#include "isolation/seccomp_syscall_names.h"

#include <stdio.h>

#include "isolation/seccomp_library.h"

/* Loaded by prepare: the lookups below go through it. */
static const struct seccomp_library *libseccomp;

static int prepare(char *error, size_t error_size)
{
	char why[256];
	if (!libseccomp && !(libseccomp = seccomp_library_load(why, sizeof(why)))) {
		snprintf(error, error_size, "load %s", why);
		return -1;
	}
	return 0;
}

static bool is_known(const char *name)
{
	return libseccomp->seccomp_syscall_resolve_name(name) != __NR_SCMP_ERROR;
}

static char *name_of(int number)
{
	return libseccomp->seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, number);
}

const struct syscall_table *seccomp_syscall_names(void)
{
	static const struct syscall_table names = {prepare, is_known, name_of};
	return &names;
}
