#include "isolation/seccomp_profile.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "isolation/seccomp_library.h"

/* libseccomp, loaded by seccomp_program_build: every call below goes
 * through it. */
static const struct seccomp_library *libseccomp;

/* The default profile's deny list (documented in the header). */
static const struct denied_syscall {
	const char *name;
	int errno_code; /* what the call returns: -1 with this errno */
} default_denied[] = {
    /* kernel and modules */
    {"kexec_load", EPERM},
    {"kexec_file_load", EPERM},
    {"init_module", EPERM},
    {"finit_module", EPERM},
    {"delete_module", EPERM},
    {"create_module", EPERM},
    {"get_kernel_syms", EPERM},
    {"query_module", EPERM},
    {"reboot", EPERM},
    {"swapon", EPERM},
    {"swapoff", EPERM},
    {"syslog", EPERM},
    {"acct", EPERM},
    {"lookup_dcookie", EPERM},
    {"nfsservctl", EPERM},
    {"uselib", EPERM},
    {"ustat", EPERM},
    {"sysfs", EPERM},
    {"_sysctl", EPERM},
    /* mounts and namespaces */
    {"mount", EPERM},
    {"umount", EPERM},
    {"umount2", EPERM},
    {"pivot_root", EPERM},
    {"fsopen", EPERM},
    {"fsconfig", EPERM},
    {"fsmount", EPERM},
    {"fspick", EPERM},
    {"move_mount", EPERM},
    {"open_tree", EPERM},
    {"mount_setattr", EPERM},
    {"setns", EPERM},
    {"unshare", EPERM},
    {"open_by_handle_at", EPERM},
    {"name_to_handle_at", EPERM},
    {"quotactl", EPERM},
    {"quotactl_fd", EPERM},
    /* keyrings, bpf and tracing */
    {"keyctl", EPERM},
    {"add_key", EPERM},
    {"request_key", EPERM},
    {"bpf", EPERM},
    {"userfaultfd", EPERM},
    {"perf_event_open", EPERM},
    {"ptrace", EPERM},
    {"process_vm_readv", EPERM},
    {"process_vm_writev", EPERM},
    {"kcmp", EPERM},
    /* clocks */
    {"settimeofday", EPERM},
    {"stime", EPERM},
    {"clock_settime", EPERM},
    {"clock_adjtime", EPERM},
    {"adjtimex", EPERM},
    /* hardware and memory policy */
    {"iopl", EPERM},
    {"ioperm", EPERM},
    {"vm86", EPERM},
    {"vm86old", EPERM},
    {"move_pages", EPERM},
    {"mbind", EPERM},
    {"set_mempolicy", EPERM},
    {"get_mempolicy", EPERM},
    /* its flags are out of reach: libc falls back to clone on ENOSYS */
    {"clone3", ENOSYS},
};

/* clone flags that make a namespace; clone's first argument on every ABI
 * but s390's, which corral does not build for. */
static const uint64_t namespace_clone_flags[] = {
    CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,    CLONE_NEWUSER,
    CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP,
};

/* The child's own calls between the filter and the task (header). */
static const char *const required_syscalls[] = {"execve", "execveat", "exit", "exit_group"};

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

static int __attribute__((format(printf, 3, 4)))
fail(char *error, size_t error_size, const char *format, ...)
{
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(error, error_size, format, arguments);
	va_end(arguments);
	return -1;
}

/* libseccomp knows a syscall by name when any architecture has it; the
 * number is then negative where the native one lacks it, and the rule is
 * left out there. */
static int resolve(const char *name, char *error, size_t error_size)
{
	int number = libseccomp->seccomp_syscall_resolve_name(name);
	if (number == __NR_SCMP_ERROR)
		fail(error, error_size, "seccomp: unknown syscall \"%s\"", name);
	return number;
}

static int add_rule(scmp_filter_ctx context, uint32_t action, const char *name, char *error,
		    size_t error_size)
{
	int number = resolve(name, error, error_size);
	if (number == __NR_SCMP_ERROR)
		return -1;
	int result = libseccomp->seccomp_rule_add(context, action, number, 0);
	if (result < 0)
		return fail(error, error_size, "seccomp: rule for %s: %s", name, strerror(-result));
	return 0;
}

static int deny_namespace_clones(scmp_filter_ctx context, char *error, size_t error_size)
{
	/* One rule per flag: conditions of one rule are all required, rules
	 * for one syscall are alternatives. */
	for (size_t i = 0; i < COUNT(namespace_clone_flags); i++) {
		uint64_t flag = namespace_clone_flags[i];
		int result =
		    libseccomp->seccomp_rule_add(context, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
						 SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
		if (result < 0)
			return fail(error, error_size, "seccomp: rule for clone: %s",
				    strerror(-result));
	}
	return 0;
}

/* personality(2) is denied except for the personas in the header. A rule
 * may test an argument only once, so "none of these values" cannot be one
 * rule. Instead: a value is refused when some bit other than 3 (PER_LINUX32)
 * and 17 (UNAME26) is set while another bit is clear. That is exactly every
 * value but 0, 0x8, 0x20000, 0x20008 (no other bit set) and 0xffffffff (no
 * bit clear). Pairs of neighbouring bits suffice: walking up from a set
 * bit, around the 32, jumping over 3 and 17, a clear one comes; and the
 * values with only 3 or 17 clear are caught by 2->3 and 16->17. The kernel
 * reads the argument as 32 bits, so the upper half is ignored. */
static int deny_unsafe_personas(scmp_filter_ctx context, char *error, size_t error_size)
{
	for (unsigned set = 0; set < 32; set++) {
		if (set == 3 || set == 17)
			continue;
		unsigned clear_bits[2] = {(set + 1) % 32, (set + 2) % 32};
		/* Beside a jump over 3 or 17, both the skipped bit and the
		 * next one make a pair. */
		size_t pairs = (clear_bits[0] == 3 || clear_bits[0] == 17) ? 2 : 1;
		for (size_t i = 0; i < pairs; i++) {
			uint64_t mask = (1ull << set) | (1ull << clear_bits[i]);
			int result = libseccomp->seccomp_rule_add(
			    context, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
			    SCMP_A0(SCMP_CMP_MASKED_EQ, mask, 1ull << set));
			if (result < 0)
				return fail(error, error_size, "seccomp: rule for personality: %s",
					    strerror(-result));
		}
	}
	return 0;
}

static int add_default_profile(scmp_filter_ctx context, char *error, size_t error_size)
{
	for (size_t i = 0; i < COUNT(default_denied); i++)
		if (add_rule(context, SCMP_ACT_ERRNO((uint32_t)default_denied[i].errno_code),
			     default_denied[i].name, error, error_size) < 0)
			return -1;
	if (deny_namespace_clones(context, error, error_size) < 0)
		return -1;
	return deny_unsafe_personas(context, error, error_size);
}

static uint32_t custom_default_action(enum seccomp_action_kind kind)
{
	switch (kind) {
	case SECCOMP_ACTION_ERRNO:
		return SCMP_ACT_ERRNO(EPERM);
	case SECCOMP_ACTION_KILL:
		return SCMP_ACT_KILL_PROCESS;
	case SECCOMP_ACTION_LOG:
		return SCMP_ACT_LOG;
	case SECCOMP_ACTION_ALLOW:
		break;
	}
	return SCMP_ACT_ALLOW;
}

static bool listed(char *const *names, const char *name)
{
	for (size_t i = 0; names && names[i]; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* libseccomp keeps the first of two rules for one syscall and drops the
 * other without a word: refuse what would be dropped. */
static int check_custom_lists(const struct seccomp_config *config, char *error, size_t error_size)
{
	for (size_t i = 0; i < COUNT(required_syscalls); i++)
		if (listed(config->deny, required_syscalls[i]))
			return fail(
			    error, error_size,
			    "seccomp: %s cannot be denied: corral needs it to start the task",
			    required_syscalls[i]);
	for (size_t i = 0; config->deny && config->deny[i]; i++)
		if (listed(config->allow, config->deny[i]))
			return fail(error, error_size, "seccomp: %s is both allowed and denied",
				    config->deny[i]);
	return 0;
}

static int add_rules(scmp_filter_ctx context, uint32_t action, uint32_t default_action,
		     char *const *names, char *error, size_t error_size)
{
	for (size_t i = 0; names && names[i]; i++) {
		/* Resolved even when skipped, so that a typo never passes. */
		if (resolve(names[i], error, error_size) == __NR_SCMP_ERROR)
			return -1;
		if (action != default_action &&
		    add_rule(context, action, names[i], error, error_size) < 0)
			return -1;
	}
	return 0;
}

static int add_custom_profile(scmp_filter_ctx context, const struct seccomp_config *config,
			      uint32_t default_action, char *error, size_t error_size)
{
	if (check_custom_lists(config, error, error_size) < 0)
		return -1;
	for (size_t i = 0; i < COUNT(required_syscalls); i++)
		if (default_action != SCMP_ACT_ALLOW &&
		    add_rule(context, SCMP_ACT_ALLOW, required_syscalls[i], error, error_size) < 0)
			return -1;
	if (add_rules(context, SCMP_ACT_ERRNO(EPERM), default_action, config->deny, error,
		      error_size) < 0)
		return -1;
	return add_rules(context, SCMP_ACT_ALLOW, default_action, config->allow, error, error_size);
}

/* With int $0x80 an x86_64 process makes i386 syscalls, and x32 ones with
 * bit 30 set in the number: the filter covers both ABIs. */
static int add_compat_architectures(scmp_filter_ctx context, char *error, size_t error_size)
{
	if (libseccomp->seccomp_arch_native() != SCMP_ARCH_X86_64)
		return 0;
	const uint32_t compat[] = {SCMP_ARCH_X86, SCMP_ARCH_X32};
	for (size_t i = 0; i < COUNT(compat); i++) {
		int result = libseccomp->seccomp_arch_add(context, compat[i]);
		if (result < 0 && result != -EEXIST)
			return fail(error, error_size, "seccomp: adding an architecture: %s",
				    strerror(-result));
	}
	return 0;
}

/* libseccomp 2.5 exports BPF only to an fd: a memfd, read back. */
static int export_program(scmp_filter_ctx context, struct seccomp_program *program, char *error,
			  size_t error_size)
{
	_cleanup_close_ int fd = memfd_create("corral-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return fail(error, error_size, "seccomp: memfd_create: %s", strerror(errno));
	struct stat status;
	int exported = libseccomp->seccomp_export_bpf(context, fd);
	if (exported < 0)
		return fail(error, error_size, "seccomp: exporting the filter: %s",
			    strerror(-exported));
	if (fstat(fd, &status) < 0)
		return fail(error, error_size, "seccomp: reading the filter back: %s",
			    strerror(errno));
	size_t size = (size_t)status.st_size;
	size_t length = size / sizeof(struct sock_filter);
	if (length == 0 || length > BPF_MAXINSNS || size % sizeof(struct sock_filter) != 0)
		return fail(error, error_size,
			    "seccomp: the filter has %zu bytes, more than the kernel takes", size);
	program->filter = malloc(size);
	if (!program->filter)
		return fail(error, error_size, "seccomp: %s", strerror(ENOMEM));
	for (size_t done = 0; done < size;) {
		ssize_t count = pread(fd, (char *)program->filter + done, size - done, (off_t)done);
		if (count <= 0) {
			fail(error, error_size, "seccomp: reading the filter back: %s",
			     count < 0 ? strerror(errno) : "short read");
			seccomp_program_free(program);
			return -1;
		}
		done += (size_t)count;
	}
	program->length = (unsigned short)length;
	return 0;
}

static int configure(scmp_filter_ctx context, const struct seccomp_config *config,
		     uint32_t default_action, char *error, size_t error_size)
{
	/* The child sets no_new_privs itself (or keeps CAP_SYS_ADMIN); an ABI
	 * the filter does not know means a bypass attempt. */
	int result = libseccomp->seccomp_attr_set(context, SCMP_FLTATR_CTL_NNP, 0);
	if (result == 0)
		result = libseccomp->seccomp_attr_set(context, SCMP_FLTATR_ACT_BADARCH,
						      SCMP_ACT_KILL_PROCESS);
	/* A binary tree of syscall numbers rather than a list: the kernel
	 * walks the filter for every syscall number and ABI when it loads
	 * it (to cache the plain allows), and that walk is most of what
	 * loading costs each isolated start: about 150 us instead of 300 us
	 * for the default profile. */
	if (result == 0)
		result = libseccomp->seccomp_attr_set(context, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (result < 0)
		return fail(error, error_size, "seccomp: filter attributes: %s", strerror(-result));
	if (add_compat_architectures(context, error, error_size) < 0)
		return -1;
	if (config->kind == SECCOMP_PROFILE_DEFAULT)
		return add_default_profile(context, error, error_size);
	return add_custom_profile(context, config, default_action, error, error_size);
}

int seccomp_program_build(const struct seccomp_config *config, struct seccomp_program *program,
			  char *error, size_t error_size)
{
	*program = (struct seccomp_program){0};
	if (config->kind == SECCOMP_PROFILE_UNCONFINED)
		return 0;
	uint32_t default_action = config->kind == SECCOMP_PROFILE_CUSTOM
				      ? custom_default_action(config->default_action)
				      : SCMP_ACT_ALLOW;
	char reason[256];
	if (!libseccomp && !(libseccomp = seccomp_library_load(reason, sizeof(reason))))
		return fail(error, error_size, "seccomp: load %s", reason);
	scmp_filter_ctx context = libseccomp->seccomp_init(default_action);
	if (!context)
		return fail(error, error_size,
			    "seccomp: cannot make a filter (is the default "
			    "action supported by this kernel?)");
	int result = configure(context, config, default_action, error, error_size);
	if (result == 0)
		result = export_program(context, program, error, error_size);
	libseccomp->seccomp_release(context);
	return result;
}

void seccomp_program_free(struct seccomp_program *program)
{
	free(program->filter);
	*program = (struct seccomp_program){0};
}
