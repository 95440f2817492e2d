/* Signal names both ways, as kill(1) spells them. */
#include "base/units.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <strings.h>

/* Indexed by signal number; Linux numbers on every architecture we build
 * for (x86, arm, riscv share the generic layout). */
static const char *const standard_signal_names[] = {
    [SIGHUP] = "SIGHUP",       [SIGINT] = "SIGINT",       [SIGQUIT] = "SIGQUIT",
    [SIGILL] = "SIGILL",       [SIGTRAP] = "SIGTRAP",     [SIGABRT] = "SIGABRT",
    [SIGBUS] = "SIGBUS",       [SIGFPE] = "SIGFPE",       [SIGKILL] = "SIGKILL",
    [SIGUSR1] = "SIGUSR1",     [SIGSEGV] = "SIGSEGV",     [SIGUSR2] = "SIGUSR2",
    [SIGPIPE] = "SIGPIPE",     [SIGALRM] = "SIGALRM",     [SIGTERM] = "SIGTERM",
    [SIGSTKFLT] = "SIGSTKFLT", [SIGCHLD] = "SIGCHLD",     [SIGCONT] = "SIGCONT",
    [SIGSTOP] = "SIGSTOP",     [SIGTSTP] = "SIGTSTP",     [SIGTTIN] = "SIGTTIN",
    [SIGTTOU] = "SIGTTOU",     [SIGURG] = "SIGURG",       [SIGXCPU] = "SIGXCPU",
    [SIGXFSZ] = "SIGXFSZ",     [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF",
    [SIGWINCH] = "SIGWINCH",   [SIGIO] = "SIGIO",         [SIGPWR] = "SIGPWR",
    [SIGSYS] = "SIGSYS",
};
#define STANDARD_SIGNAL_LIMIT                                                                      \
	((int)(sizeof(standard_signal_names) / sizeof(standard_signal_names[0])))

/* Real-time signals are named from whichever end is nearer, as kill -l
 * does: SIGRTMIN+1 ... SIGRTMIN+15, SIGRTMAX-14 ... SIGRTMAX-1. */
static const char *const rtmin_names[] = {
    "SIGRTMIN",    "SIGRTMIN+1",  "SIGRTMIN+2",  "SIGRTMIN+3",  "SIGRTMIN+4",  "SIGRTMIN+5",
    "SIGRTMIN+6",  "SIGRTMIN+7",  "SIGRTMIN+8",  "SIGRTMIN+9",  "SIGRTMIN+10", "SIGRTMIN+11",
    "SIGRTMIN+12", "SIGRTMIN+13", "SIGRTMIN+14", "SIGRTMIN+15",
};
static const char *const rtmax_names[] = {
    "SIGRTMAX",    "SIGRTMAX-1",  "SIGRTMAX-2",  "SIGRTMAX-3",  "SIGRTMAX-4",  "SIGRTMAX-5",
    "SIGRTMAX-6",  "SIGRTMAX-7",  "SIGRTMAX-8",  "SIGRTMAX-9",  "SIGRTMAX-10", "SIGRTMAX-11",
    "SIGRTMAX-12", "SIGRTMAX-13", "SIGRTMAX-14", "SIGRTMAX-15",
};
#define RT_NAME_COUNT ((int)(sizeof(rtmin_names) / sizeof(rtmin_names[0])))

/* "+5" or "-5" after RTMIN/RTMAX: the offset, or -EINVAL. */
static int parse_rt_offset(const char *text, char sign)
{
	long offset;
	char *end;

	if (!*text)
		return 0;
	if (*text != sign || text[1] < '0' || text[1] > '9')
		return -EINVAL;
	errno = 0;
	offset = strtol(text + 1, &end, 10);
	if (errno || *end || offset > SIGRTMAX - SIGRTMIN)
		return -EINVAL;
	return (int)offset;
}

int parse_signal_name(const char *text)
{
	int offset;

	if (!text)
		return -EINVAL;
	if (strncasecmp(text, "SIG", 3) == 0)
		text += 3;
	if (!*text)
		return -EINVAL;

	for (int number = 1; number < STANDARD_SIGNAL_LIMIT; number++) {
		const char *name = standard_signal_names[number];

		if (name && strcasecmp(name + 3, text) == 0)
			return number;
	}
	if (strncasecmp(text, "RTMIN", 5) == 0) {
		offset = parse_rt_offset(text + 5, '+');
		return offset < 0 ? -EINVAL : SIGRTMIN + offset;
	}
	if (strncasecmp(text, "RTMAX", 5) == 0) {
		offset = parse_rt_offset(text + 5, '-');
		return offset < 0 ? -EINVAL : SIGRTMAX - offset;
	}
	return -EINVAL;
}

const char *signal_name(int signal_number)
{
	if (signal_number > 0 && signal_number < STANDARD_SIGNAL_LIMIT &&
	    standard_signal_names[signal_number])
		return standard_signal_names[signal_number];
	if (signal_number >= SIGRTMIN && signal_number <= SIGRTMAX) {
		int from_min = signal_number - SIGRTMIN;
		int from_max = SIGRTMAX - signal_number;

		if (from_min < RT_NAME_COUNT)
			return rtmin_names[from_min];
		if (from_max < RT_NAME_COUNT)
			return rtmax_names[from_max];
	}
	return "SIG?";
}
