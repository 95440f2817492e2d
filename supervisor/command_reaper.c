/* corral reaper: the minimal PID 1 of an isolated task's pid namespace, as
 * docker --init (tini) is. corral execs itself with this command in the
 * task's namespace; it starts the task's command, forwards every signal it
 * gets to it, reaps every process of the namespace, and exits with the
 * command's status (128+N for signal N) once the command is gone.
 *
 * Internal: `corral reaper -- PATH ARGV0 [ARGS...]`, PATH already resolved
 * by corral. Nothing else runs in this process: no config, no loop. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/commands.h"

static int status_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Reaps whatever has exited; returns true once `command` is among them. */
static bool reap_all(pid_t command, int *command_status)
{
	bool command_gone = false;
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == command) {
			*command_status = status;
			command_gone = true;
		}
	}
	return command_gone;
}

int command_reaper(int argc, char **argv)
{
	if (argc < 4 || strcmp(argv[1], "--") != 0) {
		fprintf(stderr, "usage: corral reaper -- PATH ARGV0 [ARGS...] (internal)\n");
		return COMMAND_USAGE_ERROR;
	}
	const char *path = argv[2];
	char **command_argv = argv + 3;

	/* Every signal waits in the mask, to be read and forwarded; the
	 * command gets the mask and dispositions corral gave this process. */
	sigset_t all, original;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &original);

	pid_t command = fork();
	if (command < 0) {
		fprintf(stderr, "corral reaper: fork: %s\n", strerror(errno));
		return 126;
	}
	if (command == 0) {
		sigprocmask(SIG_SETMASK, &original, NULL);
		execv(path, command_argv);
		fprintf(stderr, "corral reaper: exec %s: %s\n", path, strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}

	int command_status = 0;
	for (;;) {
		siginfo_t info;
		int signal_number = sigwaitinfo(&all, &info);
		if (signal_number < 0)
			continue; /* EINTR */
		if (signal_number == SIGCHLD) {
			if (reap_all(command, &command_status))
				break;
			continue;
		}
		/* Stop signals from a terminal do not apply: there is none. */
		if (signal_number != SIGTTIN && signal_number != SIGTTOU && signal_number != SIGTSTP)
			kill(command, signal_number);
	}
	/* The namespace ends with its PID 1: the kernel kills what is left,
	 * and corral sees this process's exit as the task's. _exit: no exit
	 * handlers, which in a sanitizer build would try to ptrace this
	 * process from a namespace and a filter that forbid it. */
	_exit(status_code(command_status));
}
