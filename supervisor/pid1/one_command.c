/* One-command mode's signals and terminal: what tini and dumb-init do
 * around their single child. */
#include "supervisor/pid1/one_command.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/units.h"

static bool is_job_control_stop(int signal_number)
{
	return signal_number == SIGTSTP || signal_number == SIGTTIN || signal_number == SIGTTOU;
}

void one_command_init(struct one_command *mode)
{
	memset(mode, 0, sizeof(*mode));
	for (int i = 0; i < NSIG; i++)
		mode->rewrite[i] = -1;
}

/* What `received` is passed on as: -r's rewrite; else, in setsid mode, a
 * job-control stop becomes SIGSTOP (the command's process group is
 * orphaned, and the kernel drops those three for an orphaned group, unless
 * they are caught); else itself. With -c the command gets them as they
 * are: one that handles SIGTSTP must see SIGTSTP (dumb-init's -c). */
static int signal_to_send(const struct one_command *mode, int received)
{
	if (received < NSIG && mode->rewrite[received] >= 0)
		return mode->rewrite[received];
	if (!mode->single_child && is_job_control_stop(received))
		return SIGSTOP;
	return received;
}

/* A number or a name. `allow_zero`: 0 means "drop it". */
static int parse_one_signal(const char *text, bool allow_zero)
{
	char *end;
	errno = 0;
	long number = strtol(text, &end, 10);
	if (end != text && !*end && !errno) {
		if ((number == 0 && allow_zero) || (number > 0 && number < NSIG))
			return (int)number;
		return -1;
	}
	int parsed = parse_signal_name(text);
	return parsed > 0 ? parsed : -1;
}

int one_command_parse_rewrite(struct one_command *mode, const char *text)
{
	const char *colon = strchr(text, ':');
	if (!colon || colon == text || colon - text >= 32)
		return -1;
	char from_text[32];
	memcpy(from_text, text, (size_t)(colon - text));
	from_text[colon - text] = '\0';
	int from = parse_one_signal(from_text, false);
	int to = parse_one_signal(colon + 1, true);
	/* What corral cannot receive cannot be rewritten; SIGCHLD is
	 * corral's own (it reaps). Any signal may be sent, SIGSTOP included. */
	if (from < 0 || to < 0 || from == SIGKILL || from == SIGSTOP || from == SIGCHLD)
		return -1;
	mode->rewrite[from] = to;
	return 0;
}

void one_command_release_terminal(struct one_command *mode)
{
	if (!isatty(STDIN_FILENO))
		return;
	struct sigaction ignore = {.sa_handler = SIG_IGN}, saved_hangup, saved_continue;
	sigemptyset(&ignore.sa_mask);
	sigaction(SIGHUP, &ignore, &saved_hangup);
	sigaction(SIGCONT, &ignore, &saved_continue);
	/* Fails (ENOTTY) when the terminal is not ours: nothing to hand over. */
	if (ioctl(STDIN_FILENO, TIOCNOTTY) == 0)
		mode->terminal_released = true;
	sigaction(SIGHUP, &saved_hangup, NULL);
	sigaction(SIGCONT, &saved_continue, NULL);
}

void one_command_forward(const struct one_command *mode, pid_t pid, int pidfd,
			 const struct signalfd_siginfo *info)
{
	int received = (int)info->ssi_signo;
	/* A signal corral caused itself (SIGPIPE from a write to a closed
	 * stderr) is not news for the command. */
	if (info->ssi_pid == (uint32_t)getpid() && info->ssi_code == SI_USER)
		return;
	int sent = signal_to_send(mode, received);
	if (sent != 0 && pid > 0) {
		if (mode->single_child)
			syscall(SYS_pidfd_send_signal, pidfd, sent, NULL, 0);
		else
			kill(-pid, sent); /* it leads its process group (setsid) */
	}
	/* As PID 1 this does nothing: the kernel keeps init from stopping. */
	if (is_job_control_stop(received))
		kill(getpid(), SIGSTOP);
}
