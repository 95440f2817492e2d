#include "isolation/spawn.h"

#include "base/cleanup.h"
#include "isolation/child_code.h"
#include "isolation/clone_run.h"
#include "isolation/reaper_image.h"
#include "isolation/spawn_join.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Everything the child reads; it lives in corral's memory, which the child
 * shares (CLONE_VM) while corral is suspended (CLONE_VFORK) or waits for it
 * (a spawn with a parent step). */
struct child_arguments {
	const struct spawn_slots *slots;
	const struct spawn_request *request;
	/* A join whose pid namespace corral could not enter: the child
	 * enters it and clones the process, whose pid it leaves here. */
	bool pid_namespace_in_child;
	pid_t command_pid;
};

/* The child calls the kernel directly, not through libc: it shares
 * corral's memory, and libc's wrappers could touch state there (glibc
 * broadcasts setuid to every thread it believes exists; sanitizers
 * intercept sigaction). errno is set by syscall() only.
 *
 * For the same reason the child's code is not instrumented by sanitizers:
 * ASan would poison its frames on child_stack in corral's shadow memory,
 * and a child never returns to unpoison them. */
CHILD_CODE static void __attribute__((noreturn))
child_fail_at(int error_fd, enum spawn_stage stage, int index)
{
	struct spawn_failure failure = {.stage = stage, .error = errno, .index = index};
	syscall(SYS_write, error_fd, &failure, sizeof(failure));
	/* As shells do; what `corral exec` exits with (a task's start says
	 * its failure itself). */
	syscall(SYS_exit, failure.error == ENOENT ? 127 : 126);
	__builtin_unreachable();
}

CHILD_CODE static void __attribute__((noreturn)) child_fail(int error_fd, enum spawn_stage stage)
{
	child_fail_at(error_fd, stage, 0);
}

/* A spawn with a parent step: say "my fd table is my own" (corral may then
 * change its slots), and wait for corral's go. Any other answer (EOF: corral
 * gave up) ends the child. */
CHILD_CODE static void wait_for_parent(int error_fd, int sync_fd)
{
	char byte = 'r';
	long got;
	if (syscall(SYS_write, sync_fd, &byte, 1) != 1)
		child_fail(error_fd, SPAWN_STAGE_SYNC);
	do
		got = syscall(SYS_read, sync_fd, &byte, 1);
	while (got < 0 && errno == EINTR);
	if (got != 1) {
		if (got == 0)
			errno = ECONNRESET;
		child_fail(error_fd, SPAWN_STAGE_SYNC);
	}
}

/* v1 has no CLONE_INTO_CGROUP: the child moves itself ("0" is the writer)
 * before anything else, while corral waits (CLONE_VFORK). Through `tasks`,
 * not cgroup.procs: the child has one thread, so moving it moves the
 * process, and the kernel moves the writer's own thread without taking
 * its cgroup rwsem for writing, which waits for an RCU grace period when
 * no other writer passed lately (6 to 15 ms a start here, for starts
 * 200 ms apart; docs/benchmarks.md). */
CHILD_CODE static void join_v1_cgroups(int error_fd, char *const *join_paths)
{
	for (int i = 0; join_paths && join_paths[i]; i++) {
		long fd = syscall(SYS_openat, AT_FDCWD, join_paths[i], O_WRONLY | O_CLOEXEC);
		if (fd < 0 || syscall(SYS_write, (int)fd, "0", 1) != 1)
			child_fail_at(error_fd, SPAWN_STAGE_CGROUP_V1, i);
		syscall(SYS_close, (int)fd);
	}
}

/* The kernel's struct sigaction for rt_sigaction: handler, flags, restorer,
 * mask (one word on 64-bit). */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

/* Moves `*fd` above `floor` when it sits at or below it (CLOEXEC), out of
 * the way of the numbers the task keeps. 0 or -1. */
CHILD_CODE static int move_above(int *fd, int floor)
{
	if (*fd > floor)
		return 0;
	long moved = syscall(SYS_fcntl, *fd, F_DUPFD_CLOEXEC, floor + 1);
	if (moved < 0)
		return -errno;
	*fd = (int)moved;
	return 0;
}

/* The fds that survive exec beyond stdio, at the numbers expected: the
 * readiness pipe (`notify: fd`) where the task wants it, and the reaper's
 * status socket where its argv says. Every fd the child still needs (the
 * error pipe, the reaper's memfd, the sources) first moves above both, so
 * that no dup2 closes one of them. */
CHILD_CODE static void place_kept_fds(const struct spawn_slots *slots,
				      const struct spawn_request *request, int *error_fd,
				      int *reaper_fd)
{
	int notify_target = request->notify_target;
	int status_target = request->reaper_status_target > 0 ? request->reaper_status_target : -1;
	int highest = notify_target > status_target ? notify_target : status_target;
	if (highest < 0)
		return;
	int notify_fd = slots->notify_fd, status_fd = slots->reaper_status_fd;
	if (move_above(error_fd, highest) < 0 || move_above(reaper_fd, highest) < 0 ||
	    (notify_target >= 0 && move_above(&notify_fd, highest) < 0) ||
	    (status_target >= 0 && move_above(&status_fd, highest) < 0))
		child_fail(*error_fd, status_target >= 0 ? SPAWN_STAGE_REAPER_STATUS_FD
							 : SPAWN_STAGE_NOTIFY_FD);
	if (notify_target >= 0 && syscall(SYS_dup2, notify_fd, notify_target) < 0)
		child_fail(*error_fd, SPAWN_STAGE_NOTIFY_FD);
	if (status_target >= 0 && syscall(SYS_dup2, status_fd, status_target) < 0)
		child_fail(*error_fd, SPAWN_STAGE_REAPER_STATUS_FD);
}

/* "" or the oom_score_adj every child goes back to, as text for write. */
static char reset_oom_score_adj[12];

void spawn_reset_oom_score_adj_to(int value)
{
	snprintf(reset_oom_score_adj, sizeof(reset_oom_score_adj), "%d", value);
}

/* Whether every child goes back to `reset_nice` (base/cpu_precedence.h). */
static bool reset_nice_wanted;
static int reset_nice;

void spawn_reset_nice_to(int value)
{
	reset_nice = value;
	reset_nice_wanted = true;
}

/* Raising one's own nice needs no privilege: it cannot fail for a child
 * that only goes back to what corral started with. */
CHILD_CODE static void set_own_nice(void)
{
	if (reset_nice_wanted)
		syscall(SYS_setpriority, PRIO_PROCESS, 0, reset_nice);
}

CHILD_CODE const char *spawn_oom_score_adj_text(const struct spawn_request *request)
{
	return request->oom_score_adj && request->oom_score_adj[0] ? request->oom_score_adj
								   : reset_oom_score_adj;
}

/* The task's own value, or corral's first. Done first, before the setup can
 * allocate; raising it needs no privilege, lowering it CAP_SYS_RESOURCE. */
CHILD_CODE static void set_own_oom_score_adj(int error_fd, const struct spawn_request *request)
{
	const char *text = spawn_oom_score_adj_text(request);
	if (!text[0])
		return;
	long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	size_t length = 0;
	while (text[length])
		length++;
	if (fd < 0 || syscall(SYS_write, (int)fd, text, length) != (long)length)
		child_fail(error_fd, SPAWN_STAGE_OOM_SCORE);
	syscall(SYS_close, (int)fd);
}

/* Signals are 1 to 64 on Linux: one bit each. */
#define SPAWN_SIGNAL_COUNT 64

CHILD_CODE static inline uint64_t signal_bit(int signal_number)
{
	return 1ull << (signal_number - 1);
}

/* The signals a child resets to SIG_DFL: those whose disposition in corral
 * was not the default when it first spawned (corral's handlers, SIG_IGN it
 * inherited or set), and those corral changes for a while later on
 * (one_command.c: SIGHUP, SIGCONT; SIGPIPE, SIGWINCH). */
static uint64_t signals_to_reset;

static void note_signals_to_reset(void)
{
	static bool noted;
	if (noted)
		return;
	noted = true;
	signals_to_reset =
	    signal_bit(SIGHUP) | signal_bit(SIGCONT) | signal_bit(SIGPIPE) | signal_bit(SIGWINCH);
	for (int signal_number = 1; signal_number <= SPAWN_SIGNAL_COUNT; signal_number++) {
		struct kernel_sigaction current;
		if (signal_number == SIGKILL || signal_number == SIGSTOP)
			continue;
		/* The kernel's view, glibc's own signals included. */
		if (syscall(SYS_rt_sigaction, signal_number, NULL, &current, sizeof(current.mask)) <
			0 ||
		    current.handler != SIG_DFL)
			signals_to_reset |= signal_bit(signal_number);
	}
}

static int child_start_command(void *pointer);

#if CLONE_RUN_SUPPORTED
/* The stack of a join's process when the first child clones it (below). */
static char command_stack[64 * 1024] __attribute__((aligned(16)));

/* The child joined the task's pid namespace, which only its children
 * enter: it starts the process as corral's child (CLONE_PARENT), waits
 * until that has exec'd or failed (CLONE_VFORK), and exits. */
CHILD_CODE static void __attribute__((noreturn))
start_command_in_pid_namespace(struct child_arguments *arguments, int error_fd)
{
	struct clone_args args = {
	    .flags = CLONE_PARENT | CLONE_VM | CLONE_VFORK,
	    .stack = (uint64_t)(uintptr_t)command_stack,
	    .stack_size = sizeof(command_stack),
	};
	pid_t pid = clone_run(&args, child_start_command, arguments);
	if (pid < 0) {
		errno = -pid;
		child_fail(error_fd, SPAWN_STAGE_JOIN_PID_NAMESPACE);
	}
	arguments->command_pid = pid;
	syscall(SYS_exit, 0);
	__builtin_unreachable();
}
#endif

/* Runs in the child, between clone and exec, on its own stack. */
CHILD_CODE static int child_setup_and_exec(void *pointer)
{
	struct child_arguments *arguments = pointer;
	const struct spawn_slots *slots = arguments->slots;
	const struct spawn_request *request = arguments->request;
	int error_fd = slots->error_fd;

	/* First, a private fd table holding only the slots and what lies
	 * below them: the tasks' fds above are never copied. Until this
	 * succeeds nothing may touch an fd, as the table is corral's. */
	if (syscall(SYS_close_range, slots->copy_limit, ~0U, CLOSE_RANGE_UNSHARE) < 0)
		return 127; /* cannot report through a shared table */

	if (request->between)
		wait_for_parent(error_fd, slots->sync_fd);

	join_v1_cgroups(error_fd, request->cgroup_v1_join);
	set_own_oom_score_adj(error_fd, request);
	set_own_nice();

	if (request->join) {
		int stage = 0, index = 0;
		if (spawn_join_enter(request->join, slots->namespace_fd,
				     arguments->pid_namespace_in_child, &stage, &index) < 0)
			child_fail_at(error_fd, (enum spawn_stage)stage, index);
#if CLONE_RUN_SUPPORTED
		if (arguments->pid_namespace_in_child)
			start_command_in_pid_namespace(arguments, error_fd);
#endif
	}

	/* A namespace corral prepared (bridge, group mode), joined while the
	 * child still has every capability. */
	if (request->isolation && request->isolation->join_network_namespace &&
	    syscall(SYS_setns, slots->namespace_fd, CLONE_NEWNET) < 0)
		child_fail(error_fd, SPAWN_STAGE_NETWORK_NAMESPACE);
	/* In a new user namespace the child keeps corral's ids, which the maps
	 * do not hold: a file it makes during setup (a mount point on a tmpfs
	 * mounted in the namespace, such as a rootfs' /dev) would have no
	 * owner there, and the kernel refuses it (EOVERFLOW). It makes them as
	 * the task's ids, which the maps hold; setresuid sets them again.
	 * (After joining the v1 cgroups: their files are host root's.) */
	if (request->isolation && (request->isolation->clone_flags & CLONE_NEWUSER) &&
	    request->change_ids) {
		syscall(SYS_setfsgid, request->gid);
		syscall(SYS_setfsuid, request->uid);
	}
	return child_start_command(arguments);
}

/* From here on, a task's start and a join take the same steps. */
CHILD_CODE static int child_start_command(void *pointer)
{
	const struct child_arguments *arguments = pointer;
	const struct spawn_slots *slots = arguments->slots;
	const struct spawn_request *request = arguments->request;
	int error_fd = slots->error_fd;

	/* corral blocks the signals it reads through signalfd and may ignore
	 * or catch some; the task must start with the defaults, and none of
	 * corral's handlers may run here once the mask is cleared. Only those
	 * not at their default need it (a syscall each, on every start). */
	const struct kernel_sigaction default_action = {.handler = SIG_DFL};
	for (int signal_number = 1; signal_number <= SPAWN_SIGNAL_COUNT; signal_number++)
		if (signals_to_reset & signal_bit(signal_number))
			syscall(SYS_rt_sigaction, signal_number, &default_action, NULL,
				sizeof(default_action.mask));
	const unsigned long no_signals = 0;
	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &no_signals, NULL, sizeof(no_signals)) < 0)
		child_fail(error_fd, SPAWN_STAGE_SIGNALS);

	/* Its own session and process group: stopping the task can then reach
	 * whatever it forked, and it cannot read corral's terminal. */
	if (syscall(SYS_setsid) < 0)
		child_fail(error_fd, SPAWN_STAGE_SESSION);

	if (request->take_terminal)
		syscall(SYS_ioctl, STDIN_FILENO, TIOCSCTTY, 0);

	if (!request->inherit_stdio && (syscall(SYS_dup2, slots->stdin_fd, STDIN_FILENO) < 0 ||
					syscall(SYS_dup2, slots->output_fd, STDOUT_FILENO) < 0 ||
					syscall(SYS_dup2, slots->stderr_fd, STDERR_FILENO) < 0))
		child_fail(error_fd, SPAWN_STAGE_STDIO);

	const struct spawn_isolation *isolation = request->isolation;
	int stage = 0, index = 0;
	if (isolation && spawn_isolation_before_ids(isolation, &stage, &index) < 0)
		child_fail_at(error_fd, (enum spawn_stage)stage, index);

	if (request->cwd && syscall(SYS_chdir, request->cwd) < 0)
		child_fail(error_fd, SPAWN_STAGE_CHDIR);

	if (request->change_ids) {
		if (!request->keep_groups &&
		    syscall(SYS_setgroups, request->group_count, request->groups) < 0)
			child_fail(error_fd, SPAWN_STAGE_SETGROUPS);
		if (syscall(SYS_setresgid, request->gid, request->gid, request->gid) < 0)
			child_fail(error_fd, SPAWN_STAGE_SETGID);
		if (syscall(SYS_setresuid, request->uid, request->uid, request->uid) < 0)
			child_fail(error_fd, SPAWN_STAGE_SETUID);
	}

	if (isolation && spawn_isolation_after_ids(isolation, &stage, &index) < 0)
		child_fail_at(error_fd, (enum spawn_stage)stage, index);

	/* Whatever corral inherited without CLOEXEC below the slots must not
	 * reach the task; marking rather than closing keeps the error pipe
	 * open until exec. */
	syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);

	int reaper_fd = slots->reaper_fd;
	place_kept_fds(slots, request, &error_fd, &reaper_fd);

	/* Last: after the filter, nothing but the exec. */
	if (isolation && spawn_isolation_seccomp(isolation, &stage) < 0)
		child_fail(error_fd, (enum spawn_stage)stage);

	if (isolation && isolation->reaper_argv) {
		if (slots->reaper_error) {
			errno = slots->reaper_error;
			child_fail(error_fd, SPAWN_STAGE_REAPER_MEMFD);
		}
		syscall(SYS_execveat, reaper_fd, "", isolation->reaper_argv, request->envp,
			AT_EMPTY_PATH);
		child_fail(error_fd, SPAWN_STAGE_EXEC_REAPER);
	}
	if (request->join) {
		spawn_join_exec(request->join, request->argv, request->envp);
	} else if (request->exec_from_fd) {
		syscall(SYS_fcntl, slots->executable_fd, F_SETFD, 0);
		syscall(SYS_execveat, slots->executable_fd, "", request->argv, request->envp,
			AT_EMPTY_PATH);
	} else {
		syscall(SYS_execve, request->executable, request->argv, request->envp);
	}
	child_fail(error_fd, SPAWN_STAGE_EXEC);
}

/* One child at a time runs on it: corral waits until it execs or exits. */
static char child_stack[64 * 1024] __attribute__((aligned(16)));

static pid_t clone_child(struct child_arguments *arguments, int *pidfd)
{
	/* With a parent step corral must run while the child waits: no
	 * vfork, spawn_process waits for the exec itself. */
	struct clone_args args = {
	    .flags = CLONE_PIDFD | CLONE_FILES | (arguments->request->between ? 0 : CLONE_VFORK),
	    .pidfd = (uint64_t)(uintptr_t)pidfd,
	    .exit_signal = SIGCHLD,
	};
	if (arguments->request->isolation)
		args.flags |= arguments->request->isolation->clone_flags;
	if (arguments->request->into_cgroup) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)arguments->request->cgroup_fd;
	}
#if CLONE_RUN_SUPPORTED
	args.flags |= CLONE_VM;
	args.stack = (uint64_t)(uintptr_t)child_stack;
	args.stack_size = sizeof(child_stack);
	return clone_run(&args, child_setup_and_exec, arguments);
#else
	/* Elsewhere: a fork-like clone, which copies corral's page tables. */
	pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0)
		syscall(SYS_exit, child_setup_and_exec(arguments));
	return pid < 0 ? -errno : pid;
#endif
}

/* Every slot that holds an fd, /dev/null first: the others are made from
 * it. */
static const size_t slot_offsets[] = {
    offsetof(struct spawn_slots, devnull_fd),    offsetof(struct spawn_slots, stdin_fd),
    offsetof(struct spawn_slots, output_fd),     offsetof(struct spawn_slots, stderr_fd),
    offsetof(struct spawn_slots, error_fd),      offsetof(struct spawn_slots, notify_fd),
    offsetof(struct spawn_slots, sync_fd),       offsetof(struct spawn_slots, namespace_fd),
    offsetof(struct spawn_slots, reaper_fd),     offsetof(struct spawn_slots, reaper_status_fd),
    offsetof(struct spawn_slots, executable_fd),
};
#define SLOT_COUNT (sizeof(slot_offsets) / sizeof(slot_offsets[0]))

static int *slot_fd(struct spawn_slots *slots, size_t i)
{
	return (int *)((char *)slots + slot_offsets[i]);
}

int spawn_slots_open(struct spawn_slots *slots)
{
	for (size_t i = 0; i < SLOT_COUNT; i++)
		*slot_fd(slots, i) = -1;
	slots->devnull_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (slots->devnull_fd < 0)
		return -errno;
	unsigned highest = (unsigned)slots->devnull_fd;
	for (size_t i = 1; i < SLOT_COUNT; i++) {
		int *fd = slot_fd(slots, i);
		*fd = fcntl(slots->devnull_fd, F_DUPFD_CLOEXEC, 3);
		if (*fd < 0) {
			int failure = -errno;
			spawn_slots_close(slots);
			return failure;
		}
		if ((unsigned)*fd > highest)
			highest = (unsigned)*fd;
	}
	slots->copy_limit = highest + 1;
	/* The reaper's sealed memfd, once for every task. When it cannot be
	 * made (vm.memfd_noexec = 2 refuses executable memfds), only the
	 * tasks that need it fail to start, and they say why. */
	int reaper = reaper_image_memfd();
	slots->reaper_error = reaper < 0 ? -reaper : 0;
	if (reaper >= 0) {
		/* Else the slot would hold /dev/null, and the exec fail with a
		 * reason that names the wrong cause. */
		if (dup3(reaper, slots->reaper_fd, O_CLOEXEC) < 0)
			slots->reaper_error = errno;
		close(reaper);
	}
	return 0;
}

void spawn_slots_close(struct spawn_slots *slots)
{
	for (size_t i = 0; i < SLOT_COUNT; i++) {
		int *fd = slot_fd(slots, i);
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

static int fail_with(struct spawn_result *result, const char *what, int error)
{
	snprintf(result->message, sizeof(result->message), "%s: %s", what, strerror(-error));
	return error;
}

static bool joins_network_namespace(const struct spawn_request *request)
{
	return request->isolation && request->isolation->join_network_namespace;
}

/* What becomes the child's stdin instead of /dev/null, or -1. */
static int stdin_source(const struct spawn_request *request)
{
	if (request->stdin_given)
		return request->stdin_fd;
	return request->join && request->join->stdin_fd >= 0 ? request->join->stdin_fd : -1;
}

/* The child is done with corral's memory and fd table: drop corral's copies
 * of what was parked for it, so that the error pipe can report EOF (and a
 * pipe on its stdin or stdout, its reader's). */
static void release_slots(struct spawn_slots *slots, const struct spawn_request *request)
{
	dup3(slots->devnull_fd, slots->error_fd, O_CLOEXEC);
	dup3(slots->devnull_fd, slots->stderr_fd, O_CLOEXEC);
	if (request->notify_target >= 0)
		dup3(slots->devnull_fd, slots->notify_fd, O_CLOEXEC);
	if (request->between)
		dup3(slots->devnull_fd, slots->sync_fd, O_CLOEXEC);
	if (joins_network_namespace(request) || request->join) /* it lives on in the child */
		dup3(slots->devnull_fd, slots->namespace_fd, O_CLOEXEC);
	if (stdin_source(request) >= 0)
		dup3(slots->devnull_fd, slots->stdin_fd, O_CLOEXEC);
	if (request->stdin_given)
		dup3(slots->devnull_fd, slots->output_fd, O_CLOEXEC);
	if (request->reaper_status_target > 0)
		dup3(slots->devnull_fd, slots->reaper_status_fd, O_CLOEXEC);
	if (request->exec_from_fd)
		dup3(slots->devnull_fd, slots->executable_fd, O_CLOEXEC);
}

/* Parks what the child needs in the slots (dup3 keeps them CLOEXEC). */
static int park_slots(struct spawn_slots *slots, const struct spawn_request *request,
		      int error_write_fd, int sync_child_fd)
{
	int stderr_fd = request->separate_stderr ? request->stderr_fd : request->output_fd;
	if (dup3(request->output_fd, slots->output_fd, O_CLOEXEC) < 0 ||
	    dup3(stderr_fd, slots->stderr_fd, O_CLOEXEC) < 0 ||
	    dup3(error_write_fd, slots->error_fd, O_CLOEXEC) < 0 ||
	    (request->notify_target >= 0 &&
	     dup3(request->notify_fd, slots->notify_fd, O_CLOEXEC) < 0) ||
	    (request->reaper_status_target > 0 &&
	     dup3(request->reaper_status_fd, slots->reaper_status_fd, O_CLOEXEC) < 0) ||
	    (request->between && dup3(sync_child_fd, slots->sync_fd, O_CLOEXEC) < 0) ||
	    (joins_network_namespace(request) &&
	     dup3(request->netns_fd, slots->namespace_fd, O_CLOEXEC) < 0) ||
	    (request->join && dup3(request->join->pidfd, slots->namespace_fd, O_CLOEXEC) < 0) ||
	    (stdin_source(request) >= 0 &&
	     dup3(stdin_source(request), slots->stdin_fd, O_CLOEXEC) < 0) ||
	    (request->exec_from_fd &&
	     dup3(request->executable_fd, slots->executable_fd, O_CLOEXEC) < 0))
		return -errno;
	return 0;
}

/* Blocks until `fd` is readable (1) or the child has exited (0, from its
 * pidfd; fd -1: wait for the exit only), or poll fails (-errno). */
static int wait_for(int fd, int pidfd)
{
	struct pollfd fds[] = {{.fd = pidfd, .events = POLLIN}, {.fd = fd, .events = POLLIN}};
	for (;;) {
		if (poll(fds, fd < 0 ? 1 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (fd >= 0 && fds[1].revents)
			return 1;
		if (fds[0].revents)
			return 0;
	}
}

/* For a child that must not go on: it dies, and is reaped here. */
static void kill_and_reap(int pidfd)
{
	syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	siginfo_t info;
	while (waitid(P_PIDFD, (id_t)pidfd, &info, WEXITED) < 0 && errno == EINTR)
		;
}

/* The window of a spawn with a parent step, once the clone returned. The
 * child shares corral's memory and runs on child_stack: until it has
 * exec'd or exited nothing here may return, except after killing and
 * reaping it. Nor may corral make a libc call that fails meanwhile: the
 * child shares its errno (same thread pointer), which it reads after its
 * own failed syscalls. So corral only blocks in poll and read, whose
 * successes leave errno alone. */
static int run_between(struct spawn_slots *slots, const struct spawn_request *request, pid_t pid,
		       int pidfd, int sync_fd, int error_read_fd, struct spawn_result *result)
{
	char byte;
	/* "r": the child has unshared its fd table; before that, corral's
	 * slots are its slots. A child that exits first (its unshare failed)
	 * leaves nothing to do but reap it, in the loop. */
	int ready = wait_for(sync_fd, pidfd);
	if (ready > 0 && read(sync_fd, &byte, 1) != 1)
		ready = -EPROTO;
	if (ready < 0)
		kill_and_reap(pidfd);
	release_slots(slots, request);
	if (ready <= 0)
		return ready < 0 ? fail_with(result, "wait for the child", ready) : 0;

	int between = request->between(request->between_context, pid, pidfd, result->message,
				       sizeof(result->message));
	byte = 'g';
	if (between == 0 && write(sync_fd, &byte, 1) != 1)
		between = fail_with(result, "wake the child", -errno);
	if (between < 0) {
		kill_and_reap(pidfd); /* blocked on its read: it never ran a step */
		return between;
	}
	/* EOF: exec'd. A failure record: the child exits right after writing
	 * it, still on child_stack; wait for that exit too (it stays a zombie
	 * for the loop to reap). */
	int done = wait_for(error_read_fd, pidfd);
	int pending = 0;
	if (done > 0 && ioctl(error_read_fd, FIONREAD, &pending) == 0 && pending > 0)
		done = wait_for(-1, pidfd);
	if (done < 0) {
		kill_and_reap(pidfd);
		return fail_with(result, "wait for the child's exec", done);
	}
	return 0;
}

/* A join's clone: corral in the task's pid namespace for its length when
 * it may enter it; else the child enters it and clones the process once
 * more (spawn.h, struct spawn_join). The process's pid, or -errno with
 * result->message. */
static pid_t clone_joining(struct child_arguments *arguments, int *pidfd,
			   struct spawn_result *result)
{
	int own_namespace;
	int entered = spawn_join_enter_pid_namespace(arguments->request->join, &own_namespace);
	if (entered == -EPERM && CLONE_RUN_SUPPORTED)
		arguments->pid_namespace_in_child = true;
	else if (entered < 0)
		return fail_with(result, "enter the task's pid namespace", entered);
	pid_t pid = clone_child(arguments, pidfd);
	int left = entered > 0 ? spawn_join_leave_pid_namespace(own_namespace) : 0;
	if (pid < 0)
		return fail_with(result, "clone3", pid);
	if (left < 0) {
		/* Cannot happen (corral's own namespace is always open to it);
		 * should it, no process of this join may run. */
		kill_and_reap(*pidfd);
		close(*pidfd);
		return fail_with(result, "go back to corral's pid namespace", left);
	}
	if (arguments->command_pid <= 0)
		return pid; /* the one child ran every step, or failed before its clone */
	/* The first child has exited; the loop's SIGCHLD sweep reaps it. */
	close(*pidfd);
	*pidfd = (int)syscall(SYS_pidfd_open, arguments->command_pid, 0);
	if (*pidfd < 0) {
		int failure = -errno;
		kill(arguments->command_pid, SIGKILL);
		return fail_with(result, "pidfd_open", failure);
	}
	return arguments->command_pid;
}

int spawn_process(struct spawn_slots *slots, const struct spawn_request *request,
		  struct spawn_result *result)
{
	result->message[0] = '\0';
	note_signals_to_reset();
	/* Non-blocking for corral's loop; the child's one small write into an
	 * empty pipe never needs to wait either. */
	_cleanup_close_ int error_read = -1, error_write = -1, sync_corral = -1, sync_child = -1;
	int ends[2];
	if (pipe2(ends, O_CLOEXEC | O_NONBLOCK) < 0)
		return fail_with(result, "error pipe", -errno);
	error_read = ends[0], error_write = ends[1];
	/* A socket rather than a pipe: one fd each way for "ready" and "go". */
	if (request->between) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) < 0)
			return fail_with(result, "sync socket", -errno);
		sync_corral = ends[0], sync_child = ends[1];
	}
	int failure = park_slots(slots, request, error_write, sync_child);
	/* Parked: the child's copies are the slots'. */
	cleanup_close(&error_write);
	error_write = -1;
	cleanup_close(&sync_child);
	sync_child = -1;

	_cleanup_close_ int pidfd = -1;
	pid_t pid = 0;
	struct child_arguments arguments = {.slots = slots, .request = request};
	if (failure < 0) {
		release_slots(slots, request);
		fail_with(result, "give the child its fds", failure);
	} else if (request->join && (pid = clone_joining(&arguments, &pidfd, result)) < 0) {
		release_slots(slots, request);
		failure = pid;
	} else if (!request->join && (pid = clone_child(&arguments, &pidfd)) < 0) {
		release_slots(slots, request);
		failure = fail_with(result, "clone3", pid);
	} else if (request->between) {
		failure = run_between(slots, request, pid, pidfd, sync_corral, error_read, result);
	} else {
		/* CLONE_VFORK: the child has exec'd or exited. */
		release_slots(slots, request);
	}
	if (failure < 0)
		return failure;
	result->pid = pid;
	result->pidfd = TAKE_FD(pidfd);
	result->error_fd = TAKE_FD(error_read);
	return 0;
}
