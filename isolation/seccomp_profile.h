/* A task's seccomp filter, compiled in corral from its `seccomp_config`
 * before the clone. The child only hands the ready program to the kernel,
 * with raw syscalls, as its last step before execve:
 *
 *     prctl(PR_SET_NO_NEW_PRIVS, 1)     (or the child still has CAP_SYS_ADMIN)
 *     prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
 *           &(struct sock_fprog){program.length, program.filter})
 *     execve(...)
 *
 * libseccomp writes the BPF: it knows every architecture's syscall numbers.
 * On x86_64 the filter also covers the i386 and x32 ABIs, so that a task
 * cannot step around it with `int $0x80`; a syscall that one ABI lacks is
 * left out of that ABI's part. A call from any other ABI kills the task.
 *
 * Profiles:
 *
 * - DEFAULT: everything is allowed except, in the spirit of Docker's default
 *   profile, these, which fail with EPERM:
 *     kernel and modules: kexec_load kexec_file_load init_module finit_module
 *       delete_module create_module get_kernel_syms query_module reboot
 *       swapon swapoff syslog acct lookup_dcookie nfsservctl uselib ustat
 *       sysfs _sysctl
 *     mounts and namespaces: mount umount umount2 pivot_root fsopen fsconfig
 *       fsmount fspick move_mount open_tree mount_setattr setns unshare
 *       open_by_handle_at name_to_handle_at quotactl quotactl_fd
 *     keyrings, bpf and tracing: keyctl add_key request_key bpf userfaultfd
 *       perf_event_open ptrace process_vm_readv process_vm_writev kcmp
 *     clocks: settimeofday stime clock_settime clock_adjtime adjtimex
 *     hardware and memory policy: iopl ioperm vm86 vm86old move_pages mbind
 *       set_mempolicy get_mempolicy
 *     clone with CLONE_NEWNS, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET or
 *       NEWCGROUP in its flags
 *     personality, except the personas Docker allows: 0 (PER_LINUX), 0x8
 *       (PER_LINUX32), 0x20000 (UNAME26), 0x20008 and 0xffffffff (a query)
 *   and clone3 fails with ENOSYS: its flags are in memory, out of a filter's
 *   reach, and ENOSYS makes libc fall back to clone, which is filtered.
 *   A task that needs one of these (its own namespaces, say) takes
 *   `unconfined` or a custom profile.
 *
 * - UNCONFINED: no program (length 0, filter NULL).
 *
 * - CUSTOM: `default_action` for every syscall not listed (allow, errno:
 *   EPERM, kill: the whole process, log: allow and log); `deny` fails with
 *   EPERM, `allow` is allowed. A rule that does what the default does is
 *   left out. Whatever the profile says, execve and execveat (the child's
 *   next step, so the task could never start otherwise), exit and
 *   exit_group (how the child ends when exec fails) are allowed; a `deny`
 *   naming them is refused. A profile that does not allow `write` cannot
 *   report why an exec failed: the task is then seen exiting with 127, or
 *   killed by SIGSYS, instead. */
#pragma once

#include <linux/filter.h>
#include <stddef.h>

#include "config/model/config.h"

struct seccomp_program {
	struct sock_filter *filter; /* owned; NULL when length is 0 */
	unsigned short length;      /* instructions; 0: no filter to apply */
};

/* Returns 0 with *program filled, or -1 with `error` saying what went wrong
 * (e.g. `seccomp: unknown syscall "mkdirz"`) and *program empty. */
int seccomp_program_build(const struct seccomp_config *config, struct seccomp_program *program,
			  char *error, size_t error_size);

void seccomp_program_free(struct seccomp_program *program);
