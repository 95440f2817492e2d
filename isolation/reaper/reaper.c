/* corral's reaper: the minimal PID 1 of an isolated task's pid namespace, as
 * docker --init (tini) is. It starts the task's command, forwards every
 * signal it gets to it, reaps every process of the namespace, and exits with
 * the command's status (128+N for signal N) once the command is gone.
 *
 *   corral-reaper [--status-fd=N] PATH ARGV0 [ARGS...]
 *
 * An exit code cannot say "killed by SIGKILL", and a namespace's PID 1
 * cannot die of a signal sent from inside it; nor does corral see the
 * command's pid from here. So corral gives the reaper fd N, its end of a
 * datagram socket (corral asks for the sender's credentials):
 *   - "pid", sent by the command's process just before its exec: the kernel
 *     stamps it with the sender's pid as corral's namespace sees it;
 *   - "exit C" or "signal S", sent by the reaper when the command is gone,
 *     just before it exits itself.
 * The command does not inherit fd N.
 *
 * corral execs it from a sealed memfd (isolation/reaper_image.c), with the
 * task's environment. PATH is the command's file: corral resolves it when
 * the task sees corral's files; a name without a '/' is looked up here in
 * the environment's PATH, inside whatever root the task has.
 *
 * Freestanding on purpose: no libc, no loader, no library, so that it runs
 * in any root file system and its exec costs next to nothing. It only makes
 * system calls (syscall.h); everything else is a few lines here. */
#include <asm/signal.h>
#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/prctl.h>
#include <linux/wait.h>
#include <stdbool.h> /* the compiler's, freestanding */

#include "syscall.h"

#define DEFAULT_SEARCH_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define SIGSET_SIZE         8 /* the kernel's sigset_t: 64 signals on every architecture */

static long call4(long number, long a, long b, long c, long d)
{
	return raw_syscall(number, a, b, c, d, 0);
}

static void __attribute__((noreturn)) exit_with(int code)
{
	call4(__NR_exit_group, code, 0, 0, 0);
	__builtin_unreachable();
}

/* ---- text, without libc ---------------------------------------------------- */

struct text {
	char data[512];
	unsigned long length;
};

static void append(struct text *text, const char *string)
{
	while (*string && text->length < sizeof(text->data) - 1)
		text->data[text->length++] = *string++;
}

static void append_number(struct text *text, unsigned long number)
{
	char digits[24];
	int count = 0;
	do
		digits[count++] = (char)('0' + number % 10);
	while ((number /= 10) && count < (int)sizeof(digits));
	while (count && text->length < sizeof(text->data) - 1)
		text->data[text->length++] = digits[--count];
}

/* glibc's words for what exec and fork fail with; a number otherwise. */
static const char *error_text(long error)
{
	switch (error) {
	case ENOENT:
		return "No such file or directory";
	case EACCES:
		return "Permission denied";
	case ENOEXEC:
		return "Exec format error";
	case ENOTDIR:
		return "Not a directory";
	case EISDIR:
		return "Is a directory";
	case ELOOP:
		return "Too many levels of symbolic links";
	case ENAMETOOLONG:
		return "File name too long";
	case ETXTBSY:
		return "Text file busy";
	case E2BIG:
		return "Argument list too long";
	case ENOMEM:
		return "Cannot allocate memory";
	case EAGAIN:
		return "Resource temporarily unavailable";
	case EPERM:
		return "Operation not permitted";
	case EINVAL:
		return "Invalid argument";
	case EIO:
		return "Input/output error";
	case EFAULT:
		return "Bad address";
	case EMFILE:
		return "Too many open files";
	case ENFILE:
		return "Too many open files in system";
	case ELIBBAD:
		return "Accessing a corrupted shared library";
	case ENOSYS:
		return "Function not implemented";
	default:
		return 0;
	}
}

/* "corral reaper: STEP WHAT: REASON" on stderr, the task's output. */
static void report(const char *step, const char *what, long error)
{
	struct text text;
	text.length = 0; /* not `= {0}`: a compiler may call memset for that */
	append(&text, "corral reaper: ");
	append(&text, step);
	if (what) {
		append(&text, " ");
		append(&text, what);
	}
	append(&text, ": ");
	const char *reason = error_text(error);
	if (reason) {
		append(&text, reason);
	} else {
		append(&text, "error ");
		append_number(&text, (unsigned long)error);
	}
	text.data[text.length++] = '\n';
	call4(__NR_write, 2, (long)text.data, (long)text.length, 0);
}

/* ---- the command ----------------------------------------------------------- */

static bool has_slash(const char *string)
{
	for (; *string; string++)
		if (*string == '/')
			return true;
	return false;
}

static const char *environment_value(char **envp, const char *name)
{
	for (; *envp; envp++) {
		const char *entry = *envp, *wanted = name;
		while (*wanted && *entry == *wanted)
			entry++, wanted++;
		if (!*wanted && *entry == '=')
			return entry + 1;
	}
	return 0;
}

static long execve_error(const char *path, char **argv, char **envp)
{
	return -call4(__NR_execve, (long)path, (long)argv, (long)envp, 0);
}

/* Execs the command as execvp does (without its fallback to /bin/sh for a
 * file that is not an executable): returns the error to report. */
static long exec_command(const char *name, char **argv, char **envp)
{
	if (has_slash(name))
		return execve_error(name, argv, envp);
	const char *search = environment_value(envp, "PATH");
	if (!search)
		search = DEFAULT_SEARCH_PATH;
	unsigned long name_length = 0;
	while (name[name_length])
		name_length++;
	bool denied = false;
	char candidate[4096];
	for (const char *directory = search;;) {
		const char *end = directory;
		while (*end && *end != ':')
			end++;
		unsigned long directory_length = (unsigned long)(end - directory);
		/* An empty entry is the current directory: the bare name. */
		unsigned long length = 0;
		if (directory_length + 1 + name_length + 1 <= sizeof(candidate)) {
			for (unsigned long i = 0; i < directory_length; i++)
				candidate[length++] = directory[i];
			if (directory_length)
				candidate[length++] = '/';
			for (unsigned long i = 0; i <= name_length; i++)
				candidate[length++] = name[i];
			long error = execve_error(candidate, argv, envp);
			switch (error) {
			case EACCES:
				denied = true; /* said only if nothing else is found */
				break;
			case ENOENT:
			case ENOTDIR:
			case ESTALE:
			case ENODEV:
			case ETIMEDOUT:
				break;
			default:
				return error;
			}
		}
		if (!*end)
			break;
		directory = end + 1;
	}
	return denied ? EACCES : ENOENT;
}

/* ---- telling corral --------------------------------------------------------- */

/* "--status-fd=N": N, or -1 when `option` is not that. */
static long status_fd_option(const char *option)
{
	static const char prefix[] = "--status-fd=";
	for (unsigned long i = 0; i < sizeof(prefix) - 1; i++)
		if (option[i] != prefix[i])
			return -1;
	const char *digits = option + sizeof(prefix) - 1;
	long fd = 0;
	if (!*digits)
		return -1;
	for (; *digits; digits++) {
		if (*digits < '0' || *digits > '9' || fd > 65535)
			return -1;
		fd = fd * 10 + (*digits - '0');
	}
	return fd;
}

/* One datagram; corral gets it or, gone, never will: nothing to retry. */
static void tell_corral(long status_fd, const struct text *text)
{
	if (status_fd >= 0)
		call4(__NR_write, status_fd, (long)text->data, (long)text->length, 0);
}

/* "exit C" or "signal S", the command's wait status in words. */
static void tell_command_status(long status_fd, int status)
{
	struct text text;
	text.length = 0;
	int signal_number = status & 0x7f;
	append(&text, signal_number ? "signal " : "exit ");
	append_number(&text, (unsigned long)(signal_number ? signal_number : (status >> 8) & 0xff));
	tell_corral(status_fd, &text);
}

/* ---- PID 1 ------------------------------------------------------------------ */

static int status_code(int status)
{
	int signal_number = status & 0x7f;
	return signal_number ? 128 + signal_number : (status >> 8) & 0xff;
}

/* Reaps whatever has exited; true once `command` is among them. */
static bool reap_all(long command, int *command_status)
{
	bool command_gone = false;
	int status;
	long pid;
	while ((pid = call4(__NR_wait4, -1, (long)&status, WNOHANG, 0)) > 0) {
		if (pid == command) {
			*command_status = status;
			command_gone = true;
		}
	}
	return command_gone;
}

void __attribute__((noreturn, used)) reaper_main(long *stack);

void reaper_main(long *stack)
{
	long argc = stack[0];
	char **argv = (char **)(stack + 1);
	char **envp = argv + argc + 1;
	long status_fd = argc > 1 ? status_fd_option(argv[1]) : -1;
	if (status_fd >= 0) {
		argc--;
		argv++;
		/* The command must not inherit it. */
		call4(__NR_fcntl, status_fd, F_SETFD, FD_CLOEXEC, 0);
	}
	if (argc < 3) {
		static const char usage[] = "usage: corral-reaper [--status-fd=N] PATH ARGV0 "
					    "[ARGS...] (corral starts it)\n";
		call4(__NR_write, 2, (long)usage, sizeof(usage) - 1, 0);
		exit_with(2);
	}
	const char *path = argv[1];
	char **command_argv = argv + 2;

	/* Exec'd from a memfd, the kernel names the process after the fd's
	 * number or the memfd; ps should say what it is. */
	call4(__NR_prctl, PR_SET_NAME, (long)"corral-reaper", 0, 0);

	/* Every signal waits in the mask, to be read and forwarded; the
	 * command gets back the mask corral gave this process. */
	unsigned long all = ~0UL, original = 0;
	call4(__NR_rt_sigprocmask, SIG_BLOCK, (long)&all, (long)&original, SIGSET_SIZE);

	/* fork: clone with nothing shared, SIGCHLD when it ends. */
	long command = call4(__NR_clone, SIGCHLD, 0, 0, 0);
	if (SYSCALL_FAILED(command)) {
		report("fork", 0, -command);
		exit_with(126);
	}
	if (command == 0) {
		/* Sent by this process, so that its credentials carry its pid. */
		struct text hello;
		hello.length = 0;
		append(&hello, "pid");
		tell_corral(status_fd, &hello);
		call4(__NR_rt_sigprocmask, SIG_SETMASK, (long)&original, 0, SIGSET_SIZE);
		long error = exec_command(path, command_argv, envp);
		report("exec", path, error);
		exit_with(error == ENOENT ? 127 : 126);
	}

	int command_status = 0;
	for (;;) {
		long signal_number = call4(__NR_rt_sigtimedwait, (long)&all, 0, 0, SIGSET_SIZE);
		if (signal_number < 0)
			continue; /* EINTR */
		if (signal_number == SIGCHLD) {
			if (reap_all(command, &command_status))
				break;
			continue;
		}
		/* Stop signals from a terminal do not apply: there is none. */
		if (signal_number != SIGTTIN && signal_number != SIGTTOU &&
		    signal_number != SIGTSTP)
			call4(__NR_kill, command, signal_number, 0, 0);
	}
	/* The namespace ends with its PID 1: the kernel kills what is left,
	 * and corral sees this process's exit as the task's, the status said
	 * first for the signal an exit code cannot carry. */
	tell_command_status(status_fd, command_status);
	exit_with(status_code(command_status));
}
